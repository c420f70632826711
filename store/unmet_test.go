package store

import (
	"testing"

	"dalo/plan"
)

// TestOmitAsksUnmet: what install cannot install blocks the package or is
// left out as #Unmet says of its requirement (plan.UnmetBlocks), for
// every requirement the rules name: a required part blocks, an optional
// one is omitted.
func TestOmitAsksUnmet(t *testing.T) {
	if !plan.UnmetBlocks["required"] || plan.UnmetBlocks["optional"] || plan.UnmetBlocks["recommended"] || len(plan.UnmetBlocks) != 3 {
		t.Fatalf("plan.UnmetBlocks = %v: #Unmet no longer says a required part blocks and an optional or recommended one is omitted", plan.UnmetBlocks)
	}
	for req, blocks := range plan.UnmetBlocks {
		p := &installDraft{}
		p.omit(req, "hook h")
		if got := len(p.blocks) == 1; got != blocks {
			t.Errorf("%s: blocks %v, want %t", req, p.blocks, blocks)
		}
		if got := len(p.ip.Omitted) == 1; got == blocks {
			t.Errorf("%s: omitted %v, want %t", req, p.ip.Omitted, !blocks)
		}
	}
}
