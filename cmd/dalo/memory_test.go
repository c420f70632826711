package main

import (
	"math"
	"runtime"
	"runtime/debug"
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
