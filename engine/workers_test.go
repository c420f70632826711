package engine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"

	"dalo/bench/sourcegen"
)

// TestWorkersTakePackagesWithoutBlocking: the workers of a validation take
// packages by a counter, never waiting on a channel for the next one. A
// channel woke a parked worker, through the scheduler and often the
// kernel, for every package: 480 context switches a run of 1,000 packages
// of the own shape, 210 by the counter (BenchmarkValidateCold, ctxsw/op).
// Every blocking event is recorded meanwhile; none may be a channel
// operation under checkPackages.
func TestWorkersTakePackagesWithoutBlocking(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "source")
	if err := sourcegen.WriteOwn(dir, 60); err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	runtime.SetBlockProfileRate(1)
	defer runtime.SetBlockProfileRate(0)
	rep, err := Validate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Valid {
		t.Fatalf("generated source invalid: %v", rep.Diagnostics)
	}
	var b strings.Builder
	if err := pprof.Lookup("block").WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	for _, event := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(event, "engine.checkPackages") && (strings.Contains(event, "runtime.chanrecv") || strings.Contains(event, "runtime.chansend")) {
			t.Errorf("a worker or its feeder waited on a channel:\n%s", event)
		}
	}
}

// TestWorkersShareRules: the workers of a validation check packages with
// the one compiled rules Validate starts with, asking CUE in turns
// (Rules.cueMu); compiling rules for each worker cost some 9 ms of CPU a
// worker, as much as the floor's whole run on 1,000 short manifests. The
// rules' remembered answers are forgotten first, so that both workers ask
// CUE while the other runs (the race detector's run of this test watches
// them), and each report is the one a single worker gives. A worker that
// meets a manifest the fast path does not prove compiles rules of its own
// for the walk that says where it is wrong.
func TestWorkersShareRules(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	type shape struct {
		name  string
		write func(string, int) error
	}
	for _, s := range []shape{
		{"pool", func(dir string, n int) error { return sourcegen.Write(dir, n, 0) }},
		{"own", sourcegen.WriteOwn},
		{"skills", sourcegen.WriteSkills},
		{"toolbox", sourcegen.WriteToolbox},
		{"docs", sourcegen.WriteDocs},
	} {
		t.Run(s.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "source")
			if err := s.write(dir, 40); err != nil {
				t.Fatal(err)
			}
			forgetAnswers()
			before := rulesCompiled.Load()
			shared := reportJSON(t, dir, Options{})
			if n := rulesCompiled.Load() - before; n != 1 {
				t.Errorf("rules compiled %d times for a valid source, want 1", n)
			}
			if !strings.Contains(shared, `"valid":true`) {
				t.Fatalf("generated source invalid: %s", shared)
			}
			sameAsOneWorker(t, dir, shared)
		})
	}
	t.Run("invalid", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "source")
		if err := sourcegen.WriteOwn(dir, 40); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 40; i += 3 {
			f := filepath.Join(dir, "plugins", fmt.Sprintf("own-%04d", i), "PLUGIN.toml")
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b = bytes.Replace(b, []byte("timeout_ms = 1000\n"), []byte("timeout_ms = \"soon\"\n"), 1)
			b = bytes.Replace(b, []byte("cwd = \"tool_root\"\n"), []byte("cwd = \"tool_root\"\ncolour = \"blue\"\n"), 1)
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		forgetAnswers()
		before := rulesCompiled.Load()
		shared := reportJSON(t, dir, Options{})
		if n := rulesCompiled.Load() - before; n < 2 || n > 3 {
			t.Errorf("rules compiled %d times, want Validate's and one for each worker that met an invalid manifest", n)
		}
		sameAsOneWorker(t, dir, shared)
		for _, want := range []string{`"E022"`, `"E020"`} {
			if !strings.Contains(shared, want) {
				t.Errorf("no %s in the report", want)
			}
		}
	})
}

// sameAsOneWorker holds shared, the report of dir validated by two
// workers, to the one a single worker gives.
func sameAsOneWorker(t *testing.T, dir, shared string) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	forgetAnswers()
	if one := reportJSON(t, dir, Options{}); shared != one {
		t.Errorf("two workers:\n%s\none worker:\n%s", shared, one)
	}
}
