package engine

import (
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
