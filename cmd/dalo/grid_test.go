package main

import (
	"fmt"
	"io"
	"testing"

	"dalo/engine"
)

// TestGridNamesAHookOnce: the capability grid of a source costs a few
// allocations a hook, not a few a hook on each provider (a row's name was
// made once a provider: a tenth of the grid's cost at 12,000 hooks).
func TestGridNamesAHookOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates beside the code")
	}
	const hooks = 200
	rep := &engine.Report{Capabilities: map[string][]engine.HookCapability{}}
	for _, prov := range []string{"a@1", "b@1", "c@1", "d@1", "e@1", "f@1", "g@1"} {
		for i := range hooks {
			rep.Capabilities[prov] = append(rep.Capabilities[prov], engine.HookCapability{
				Package: fmt.Sprintf("pkg-%04d", i/4), Hook: fmt.Sprintf("hook-%d", i%4), Status: "supported",
			})
		}
	}
	allocs := testing.AllocsPerRun(5, func() { printGrid(io.Discard, rep, false) })
	if allocs > 4*hooks {
		t.Errorf("the grid of %d hooks on 7 providers allocates %v times, want at most %d", hooks, allocs, 4*hooks)
	}
}
