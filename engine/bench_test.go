package engine

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"dalo/bench/sourcegen"
	"dalo/plan"
)

// The benchmarks measure Validate on synthetic sources from
// dalo/bench/sourcegen; bench/validate.sh measures the same sources through
// the dalo binary, process start to exit, with its peak memory.
//
//	go test ./engine -run '^$' -bench . -benchmem -cpuprofile cpu.out

func benchSource(b *testing.B, packages, bigBytes int) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "source")
	if err := sourcegen.Write(dir, packages, bigBytes); err != nil {
		b.Fatal(err)
	}
	return dir
}

// cpuTime is the CPU time, user plus system, the process has used: a
// benchmark reports it beside wall time, which other load on a shared
// machine inflates most.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// contextSwitches is how many times the process's threads gave up a CPU,
// waiting or taken off it: a benchmark reports it beside CPU time as a
// count that load skews less.
func contextSwitches() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Nvcsw) + int64(ru.Nivcsw) // int32 on 386
}

func benchValidate(b *testing.B, dir string, packages int) {
	b.ReportAllocs()
	start, n := cpuTime(), 0
	defer func() {
		if n > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(n)/1e6, "cpu-ms/op")
		}
	}()
	for b.Loop() {
		n++
		rep, err := Validate(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if !rep.Valid || len(rep.Packages) != packages {
			b.Fatalf("want %d valid packages, got valid=%t with %d packages: %v", packages, rep.Valid, len(rep.Packages), rep.Diagnostics[:min(len(rep.Diagnostics), 5)])
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	b.Run("packages=1", func(b *testing.B) {
		benchValidate(b, benchSource(b, 1, 0), 1)
	})
	b.Run("packages=1000", func(b *testing.B) {
		benchValidate(b, benchSource(b, 1000, 0), 1000)
	})
	b.Run("own=1000", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "source")
		if err := sourcegen.WriteOwn(dir, 1000); err != nil {
			b.Fatal(err)
		}
		benchValidate(b, dir, 1000)
	})
	b.Run("skills=1000", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "source")
		if err := sourcegen.WriteSkills(dir, 1000); err != nil {
			b.Fatal(err)
		}
		benchValidate(b, dir, 1000)
	})
	b.Run("toolbox=1000", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "source")
		if err := sourcegen.WriteToolbox(dir, 1000); err != nil {
			b.Fatal(err)
		}
		benchValidate(b, dir, 1000)
	})
	b.Run("manifest=1MiB", func(b *testing.B) {
		benchValidate(b, benchSource(b, 0, 1040000), 1)
	})
}

// BenchmarkValidateCold is BenchmarkValidate as a new process meets it:
// each run forgets the answers the process's rules memo holds, as
// bench/validate.sh's cold runs (--no-cache) start without them, so the
// field programs and CUE are asked again.
func BenchmarkValidateCold(b *testing.B) {
	for _, shape := range []struct {
		name  string
		write func(dir string, n int) error
	}{
		{"own", sourcegen.WriteOwn},
		{"skills", sourcegen.WriteSkills},
		{"toolbox", sourcegen.WriteToolbox},
		{"docs", sourcegen.WriteDocs},
		{"crew", sourcegen.WriteCrew},
		{"gates", sourcegen.WriteGates},
		{"folders", sourcegen.WriteFolders},
		{"commands", sourcegen.WriteCommands},
	} {
		b.Run(shape.name+"=1000", func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "source")
			if err := shape.write(dir, 1000); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			start, switches, n := cpuTime(), contextSwitches(), 0
			for b.Loop() {
				b.StopTimer()
				forgetAnswers()
				b.StartTimer()
				n++
				rep, err := Validate(dir, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if !rep.Valid || len(rep.Packages) != 1000 {
					b.Fatalf("want 1000 valid packages, got valid=%t with %d", rep.Valid, len(rep.Packages))
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(n)/1e6, "cpu-ms/op")
			b.ReportMetric(float64(contextSwitches()-switches)/float64(n), "ctxsw/op")
		})
	}
}

// forgetAnswers empties the process's rules memo, as a new process has it.
func forgetAnswers() {
	sharedMemo.mu.Lock()
	sharedMemo.m, sharedMemo.verdicts, sharedMemo.learned = map[string][]violation{}, map[string]bool{}, 0
	sharedMemo.mu.Unlock()
}

// BenchmarkLoadRules is the fixed cost every process and every worker pays.
func BenchmarkLoadRules(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadRules(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeManifest is the TOML stage alone on a manifest near the
// 1 MiB limit: go-toml/v2 plus the position index, which must stay linear.
func BenchmarkDecodeManifest(b *testing.B) {
	dir := benchSource(b, 0, 1040000)
	src, _, err := readBounded(filepath.Join(dir, "plugins", "big", "PLUGIN.toml"), 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	r, err := LoadRules()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		var l diagList
		if decodeManifest(src, &r.Limits, &l) == nil {
			b.Fatal(l.diags)
		}
	}
}

// BenchmarkDecodeToolboxManifest decodes one manifest of the toolbox
// shape (six tools and twelve hooks as arrays of tables, 7.7 KB): the
// decoding of a manifest of many descriptors of one shape.
func BenchmarkDecodeToolboxManifest(b *testing.B) {
	dir := b.TempDir()
	if err := sourcegen.WriteToolbox(dir, 1); err != nil {
		b.Fatal(err)
	}
	src, _, err := readBounded(filepath.Join(dir, "plugins", "tb-0000", "PLUGIN.toml"), 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	lim := plan.DraftLimits
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		var l diagList
		if decodeManifest(src, &lim, &l) == nil {
			b.Fatal(l.diags)
		}
	}
}

// TestValidateHoldsLittlePerPackage checks what a validation holds in
// memory per package when every package is checked and the report is
// about to be gathered, the figure the memory bound of a large source
// rests on (cmd/dalo limitMemory, the README), on every generated shape:
// the decoded manifest document (some 30 KB for a generated package) is
// dropped once the package's own checks are done, keeping only the
// positions the source-wide checks report at, and the typed manifest once
// what the providers do with its hooks is asked (forget). What is left is
// what the report says of the package, and the bound follows it: 4 KiB a
// package, 1 KiB a member, 256 bytes a hook and 512 a finding.
func TestValidateHoldsLittlePerPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("validates 300 packages of each shape")
	}
	if raceEnabled {
		// The plain go test run checks the bound on the build users run.
		t.Skip("the race detector's instrumentation holds memory of its own")
	}
	const n = 300
	// One-time state (the rules' memo, the provider tables, compiled
	// patterns), warmed by a validation of its own, is not per package:
	// with five tables it came to some 1 KB a package of 300.
	warm := filepath.Join(t.TempDir(), "warm")
	if err := sourcegen.Write(warm, 1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := Validate(warm, Options{}); err != nil {
		t.Fatal(err)
	}
	defer func(old func()) { beforeReport = old }(beforeReport)
	for _, shape := range generatedShapes {
		t.Run(shape.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "source")
			if err := shape.write(dir, n); err != nil {
				t.Fatal(err)
			}
			// What a validation of one package of the shape holds
			// (its rules, compiled for each validation) is not per
			// package.
			one := filepath.Join(t.TempDir(), "one")
			if err := shape.write(one, 1); err != nil {
				t.Fatal(err)
			}
			rep, base, held := heldUntilReport(t, one, dir)
			if !rep.Valid {
				t.Fatalf("generated source invalid: %v", rep.Diagnostics)
			}
			// What a package holds follows its shape: what its report
			// says of its members, hooks and findings.
			var members, hooks int
			for _, p := range rep.Packages {
				members += len(p.Members)
				hooks += len(p.Hooks)
			}
			bound := int64(4<<10 + (1<<10*members+256*hooks+512*len(rep.Diagnostics))/n)
			per := (held - base) / (n - 1)
			t.Logf("%d bytes held per package (%d members, %d hooks and %d findings in all; bound %d)", per, members, hooks, len(rep.Diagnostics), bound)
			if per > bound {
				t.Errorf("a validation holds %d bytes per package, want at most %d", per, bound)
			}
		})
	}
}

func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestValidateHoldsLittlePerReference: what a source of many members a
// package holds until its report grows by a few hundred bytes a
// reference: its entry in the report, its position and the target's path.
// The index of what each reference resolved to is dropped once they all
// are, and the paths of the references are shared (refFields): this
// source held 573 bytes a reference before, 271 after.
func TestValidateHoldsLittlePerReference(t *testing.T) {
	if testing.Short() {
		t.Skip("validates 4,000 references")
	}
	if raceEnabled {
		t.Skip("the race detector's instrumentation holds memory of its own")
	}
	defer func(old func()) { beforeReport = old }(beforeReport)
	write := func(dir string, packages, members int) {
		for p := range packages {
			var m strings.Builder
			fmt.Fprintf(&m, "schema_version = 1\n\n[plugin]\nname = \"rb-%d\"\ndescription = \"Rules.\"\nid = \"rules.rb-%d\"\nversion = \"1.0.0\"\n", p, p)
			for i := range members {
				fmt.Fprintf(&m, "\n[[plugin.members]]\nref = \"instruction:rb-%d-rule-%d\"\nrequirement = \"optional\"\n", p, i)
				writeFile(t, dir, fmt.Sprintf("instructions/rb-%d-rule-%d.md", p, i), "Keep it short.\n")
			}
			writeFile(t, dir, fmt.Sprintf("plugins/rb-%d/PLUGIN.toml", p), m.String())
		}
	}
	const packages, members = 40, 100
	one, dir := filepath.Join(t.TempDir(), "one"), filepath.Join(t.TempDir(), "source")
	write(one, 1, members)
	write(dir, packages, members)
	rep, base, held := heldUntilReport(t, one, dir)
	if !rep.Valid || len(rep.References) != packages*members {
		t.Fatalf("want a valid source of %d references, got valid=%t with %d: %v", packages*members, rep.Valid, len(rep.References), rep.Diagnostics[:min(5, len(rep.Diagnostics))])
	}
	per := (held - base) / ((packages - 1) * members)
	t.Logf("%d bytes held per reference", per)
	if per > 400 {
		t.Errorf("a validation holds %d bytes per reference, want at most 400", per)
	}
}

// heldUntilReport validates one, then dir, and returns dir's report with
// what each validation held when it had checked every package: base of
// one, held of dir. The caller restores beforeReport.
func heldUntilReport(t *testing.T, one, dir string) (rep *Report, base, held int64) {
	t.Helper()
	before := liveHeap()
	beforeReport = func() { base = liveHeap() - before }
	if _, err := Validate(one, Options{}); err != nil {
		t.Fatal(err)
	}
	before = liveHeap()
	beforeReport = func() { held = liveHeap() - before }
	rep, err := Validate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep, base, held
}

// BenchmarkCheckText is an instruction's text check on prose that is
// mostly ASCII with a character outside it every few words, as text
// written in one language with names and symbols of others is.
func BenchmarkCheckText(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 8<<10; i++ {
		fmt.Fprintf(&sb, "%d. Keep the über-naïve café reply → short; 設計 is %d µs, not 🚀.\n", i, i*7)
	}
	lines := sb.String()
	// The same prose on one line of 256 KB, and broken once near the start of each read.
	line := strings.Repeat(strings.ReplaceAll(lines, "\n", " "), 32)
	early := strings.Repeat("\n"+line[:64<<10-1], 4)
	for _, c := range []struct{ name, text string }{{"lines", lines}, {"line", line}, {"early", early}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, what, err := checkText(strings.NewReader(c.text)); err != nil || what != "" {
					b.Fatal(what, err)
				}
			}
		})
	}
}
