package providers

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// compiled_tables.go is what Compile writes from the embedded tables and
// rules today: a table or rule changed without refreshing it fails here.
func TestCompiledIsCurrent(t *testing.T) {
	want, err := Compile()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(CompiledFile)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("providers/%s is stale (%v): a provider table or the rules changed since it was written.\nRefresh it with: %s", CompiledFile, err, RefreshCommand)
	}
}

// plan/known.go is what KnownSource writes from the tables today.
func TestKnownIsCurrent(t *testing.T) {
	want, err := KnownSource()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(KnownFile)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("plan/known.go is stale (%v): a provider table changed since it was written.\nRefresh it with: %s", err, RefreshCommand)
	}
}

// Load's tables, decoded from compiled_tables.go, are LoadFS's tables: every
// field the Go API exposes, and the same answer to every question.
func TestCompiledMatchesCUE(t *testing.T) {
	ts := mustLoad(t)
	if ts.compiled == nil {
		t.Fatal("Load did not use compiled_tables.go")
	}
	cts, err := LoadFS(embedded)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(ts.Keys(), " "), strings.Join(cts.Keys(), " "); got != want {
		t.Fatalf("keys = %s, want %s", got, want)
	}
	for i, tb := range ts.All() {
		ct := cts.All()[i]
		got, _ := json.Marshal(tb)
		want, _ := json.Marshal(ct)
		if !bytes.Equal(got, want) || tb.File != ct.File {
			t.Errorf("%s decoded from compiled_tables.go differs from its CUE table", tb.Key())
		}
	}
	for _, q := range []Question{
		{"tool_call", "before", "rewrite_input", "fail_closed", "model_and_user", "required", false, false, false},
		{"session", "end", "observe", "report", "model_and_user", "optional", true, false, false},
		{"session", "end", "observe", "report", "model_and_user", "required", false, false, true},
		{"workflow", "stop", "continue_workflow", "fail_open", "user", "optional", false, false, true},
		{"tool_call", "after", "replace_output", "fail_closed", "user", "required", false, false, false},
		{"tool_call", "before", "gate", "fail_closed", "user", "required", false, true, true},
		{"tool_call", "after", "observe", "report", "user", "optional", true, true, false},
		{"tool_call", "after", "observe", "report", "user", "optional", true, false, true},
	} {
		for _, tb := range ts.All() {
			ct, _ := cts.Lookup(tb.Name, tb.Version)
			got, err := ts.Capability(tb, q)
			if err != nil {
				t.Fatal(err)
			}
			want, err := cts.Capability(ct, q)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s %+v: compiled %+v, CUE %+v", tb.Key(), q, got, want)
			}
		}
	}
}

// Every #MemberInstall answer compiled_tables.go holds is CUE's.
func TestCompiledMembersMatchCUE(t *testing.T) {
	ts := mustLoad(t)
	cts, err := LoadFS(embedded)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range ts.All() {
		ct, _ := cts.Lookup(tb.Name, tb.Version)
		members := ts.compiled.byKey[tb.Key()].Members
		if len(members) != 4*3*4*2 {
			t.Errorf("%s: %d member questions compiled, want every one of 96", tb.Key(), len(members))
		}
		// A recommended instruction, which install and review ask about,
		// is answered from the compiled tables, not by compiling every
		// table from CUE on the spot.
		if _, ok := members[MemberQuestion{"instruction", "recommended", MemberKept, false}.key()]; !ok {
			t.Errorf("%s: a recommended instruction is outside the compiled domain", tb.Key())
		}
		for key := range members {
			f := strings.Split(key, "|")
			q := MemberQuestion{f[0], f[1], f[2], f[3] == "true"}
			got, err := ts.MemberInstall(tb, q)
			if err != nil {
				t.Fatal(err)
			}
			want, err := cts.MemberInstall(ct, q)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s %+v: compiled %+v, CUE %+v", tb.Key(), q, got, want)
			}
		}
	}
}

// A question outside the compiled domain (a combination draft 0.1 does not
// admit) is still #Capability's answer: the tables are compiled from CUE
// to ask it.
func TestCapabilityOutsideCompiledDomain(t *testing.T) {
	ts := mustLoad(t)
	claude, _ := ts.Lookup("claude", "2.1.233")
	q := Question{"session", "stop", "gate", "report", "user", "required", false, false, false}
	if _, ok := ts.compiled.answer(claude, q); ok {
		t.Fatal("compiled_tables.go answers a combination draft 0.1 does not admit")
	}
	c, err := ts.Capability(claude, q)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != Unsupported || !c.BlocksActivation || c.Reason != "session/stop is not a hook row of draft 0.1" {
		t.Errorf("capability = %+v", c)
	}
}

// compiled_tables.go describes exactly the tables it was compiled from: tables
// it does not match (a version added without refreshing it) are compiled
// from CUE, never answered from stale data.
func TestCompiledMismatchCompilesCUE(t *testing.T) {
	base := readEmbedded(t, "claude/2.1.233.cue")
	codex := readEmbedded(t, "codex/0.147.0.cue")
	for name, fsys := range map[string]fstest.MapFS{
		"added": {
			"claude/2.1.233.cue": {Data: []byte(base)},
			"claude/2.1.300.cue": {Data: []byte(strings.Replace(base, `version: "2.1.233"`, `version: "2.1.300"`, 1))},
			"codex/0.147.0.cue":  {Data: []byte(codex)},
		},
		"edited": {
			"claude/2.1.233.cue": {Data: []byte(strings.Replace(base, `harness: "Claude Code"`, `harness: "Claude Code (edited)"`, 1))},
			"codex/0.147.0.cue":  {Data: []byte(codex)},
		},
	} {
		t.Run(name, func(t *testing.T) {
			ts, err := loadCompiled(compiledTables(), fsys)
			if err != nil {
				t.Fatal(err)
			}
			if ts.compiled != nil {
				t.Fatal("stale compiled_tables.go used")
			}
			n, _ := ts.Newest("claude")
			if name == "added" && n.Version != "2.1.300" || name == "edited" && n.Harness != "Claude Code (edited)" {
				t.Errorf("newest claude = %s %q", n.Key(), n.Harness)
			}
		})
	}
	// The generator's build, without compiled_tables.go.
	if ts, err := loadCompiled(nil, embedded); err != nil || ts.compiled != nil {
		t.Errorf("without compiled tables: %v, compiled %t; want the tables from CUE", err, ts != nil && ts.compiled != nil)
	}
}
