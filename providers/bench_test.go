package providers

import "testing"

// BenchmarkLoadCompiled is what Load does once per process: take the
// tables of compiled_tables.go and check them against the embedded ones.
func BenchmarkLoadCompiled(b *testing.B) {
	for b.Loop() {
		if _, err := loadCompiled(compiledTables(), embedded); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadFS compiles the embedded tables from CUE, as Compile does
// and as Load did before compiled_tables.go.
func BenchmarkLoadFS(b *testing.B) {
	for b.Loop() {
		if _, err := LoadFS(embedded); err != nil {
			b.Fatal(err)
		}
	}
}

var benchQuestion = Question{Subject: "tool_call", Phase: "before", Effect: "rewrite_input", FailurePolicy: "fail_closed", ErrorVisibility: "user", Requirement: "required"}

// BenchmarkCapabilityCompiled asks one question of compiled tables.
func BenchmarkCapabilityCompiled(b *testing.B) {
	ts, err := loadCompiled(compiledTables(), embedded)
	if err != nil {
		b.Fatal(err)
	}
	benchCapability(b, ts, false)
}

// BenchmarkCapabilityCUE asks one question nobody asked before of tables
// compiled from CUE, on each iteration.
func BenchmarkCapabilityCUE(b *testing.B) {
	ts, err := LoadFS(embedded)
	if err != nil {
		b.Fatal(err)
	}
	benchCapability(b, ts, true)
}

func benchCapability(b *testing.B, ts *Tables, forget bool) {
	tb, _ := ts.Lookup("claude", "2.1.233")
	for b.Loop() {
		if forget {
			ts.memo = map[string]Capability{}
		}
		if c, err := ts.Capability(tb, benchQuestion); err != nil || c.Status != Supported {
			b.Fatal(c, err)
		}
	}
}

// BenchmarkWithLocalNone is what every command on a store without local
// tables adds to Load: a look into the store's providers directory, no
// CUE (compare BenchmarkLoadCompiled, which Load pays once).
func BenchmarkWithLocalNone(b *testing.B) {
	dir := b.TempDir()
	if _, err := Load(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := WithLocal(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWithLocalOne is the same with one local table: the rules and
// that table compiled from CUE, what a command that reads the store's
// tables pays once the user verified a version.
func BenchmarkWithLocalOne(b *testing.B) {
	dir := b.TempDir()
	writeLocal(b, dir, "claude/2.1.340.cue", localFixture(b, "claude", "2.1.332", "2.1.340"))
	for b.Loop() {
		ts, err := WithLocal(dir)
		if err != nil || len(ts.Broken()) > 0 {
			b.Fatal(err, ts.Broken())
		}
	}
}
