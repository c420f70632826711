package store

import (
	"reflect"
	"testing"

	"dalo/plan"
)

// TestRulesForPlan checks what install copies from the rules' tables into
// the plan: the result shapes, what fail_closed does per effect, and the
// interpreters.
func TestRulesForPlan(t *testing.T) {
	r, err := Rules()
	if err != nil {
		t.Fatal(err)
	}
	wantShapes := map[string]plan.ResultShape{
		"observe": {}, "abstain": {}, "allow": {},
		"add_context":       {Key: "context", Type: plan.ShapeText},
		"deny":              {Key: "reason", Type: plan.ShapeText},
		"continue_workflow": {Key: "reason", Type: plan.ShapeText},
		"rewrite_input":     {Key: "input", Type: plan.ShapeObject},
		"replace_output":    {Key: "output", Type: plan.ShapeObject},
	}
	if !reflect.DeepEqual(r.Results, wantShapes) {
		t.Errorf("results %v, want %v", r.Results, wantShapes)
	}
	wantFail := map[string]string{"gate": plan.FailDeny, "rewrite_input": plan.FailDeny, "continue_workflow": plan.FailContinue}
	if !reflect.DeepEqual(r.FailClosed, wantFail) {
		t.Errorf("fail_closed %v, want %v", r.FailClosed, wantFail)
	}
	rts, err := Runtimes()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]plan.Runtime{"executable": {}, "node": {Interpreter: "node"}, "python": {Interpreter: "python3", Args: []string{"-E", "-s", "-B"}}}
	if !reflect.DeepEqual(rts, want) {
		t.Errorf("runtimes %v, want %v", rts, want)
	}
}

// TestPlanLimits pins the response limits the plan copies from the rules
// to the draft's numbers, written here rather than read from the same CUE:
// "Dalo limits a handler response to 4 MiB, text fields to 16 KiB without
// NUL characters, and a rewritten input object to 1 MiB."
func TestPlanLimits(t *testing.T) {
	lim, err := Limits()
	if err != nil {
		t.Fatal(err)
	}
	if want := (plan.Limits{ResponseBytes: 4 << 20, ResultTextBytes: 16 << 10, RewrittenInputBytes: 1 << 20}); lim != want {
		t.Errorf("plan limits %+v, the draft says %+v", lim, want)
	}
}
