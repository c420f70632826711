package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestLimitFollowsLiveHeap: once the collector finds more live than a
// quarter of the soft memory limit, the limit rises to four times it, so
// that a source whose packages hold more than the first guess does not
// keep the collector running back to back.
func TestLimitFollowsLiveHeap(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	const first = 8 << 20
	debug.SetMemoryLimit(first)
	stop := followLiveHeap(first)
	defer stop()
	held := make([][]byte, 0, 64)
	for range 64 {
		held = append(held, make([]byte, 512<<10)) // 32 MiB live in all
	}
	// The limit is raised in the finalizer goroutine after a collection:
	// wait for it, a while at most.
	var got int64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		if got = debug.SetMemoryLimit(-1); got >= 4*32<<20 {
			break
		}
	}
	runtime.KeepAlive(held)
	if got < 4*32<<20 || got == math.MaxInt64 {
		t.Errorf("soft memory limit %d MiB with 32 MiB live, want at least %d MiB", got>>20, 4*32)
	}
}

// TestLimitPacesCollector: under the soft limit validation sets, the heap
// grows to the limit before the collector runs, where GOGC alone (400,
// tuneGC) collected at every few times what is live, each time marking
// the rules' graph anew: 1,000 packages of 36 KB made three collections
// and one is enough.
func TestLimitPacesCollector(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	oldPercent := debug.SetGCPercent(400) // as tuneGC sets it
	defer debug.SetGCPercent(oldPercent)
	oldLimit := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(oldLimit)
	runtime.GC()
	cycles := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(cycles)
	before := cycles[0].Value.Uint64()
	stop := limitMemory(1000, 4<<20, 4<<10) // about 89 MiB
	defer stop()
	var sink []byte
	for range 48 << 10 { // 48 MiB of garbage, a KiB at a time
		sink = make([]byte, 1<<10)
	}
	runtime.KeepAlive(sink)
	metrics.Read(cycles)
	if n := cycles[0].Value.Uint64() - before; n != 0 {
		t.Errorf("%d collections while 48 MiB were allocated under a limit of %d MiB, want none", n, debug.SetMemoryLimit(-1)>>20)
	}
}
