package scenario

import (
	"slices"
	"sort"
	"testing"

	"dalo/providers"
)

// TestBashMatricesAgreeWithTables holds the matrices of GitHub Copilot CLI
// and Qwen Code to every table of their harness, whose payload claims cite
// the session (and Qwen's tool failure) as their proof: each event the
// matrix observes is one of the table's, and each field its observer binds
// is one the table says the payload holds, read under the table's key.
// (A field the observer does not bind, the session checks is in each
// payload under its key: bashUnbound.) Where the rules let a row bind
// every field the table names, the observer binds them all: only Qwen's
// session start payload holds a field (its permission mode) no session
// start hook may bind.
func TestBashMatricesAgreeWithTables(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	unbindable := map[string][]string{"qwen SessionStart": {"session.permission_mode"}}
	n := 0
	for _, tb := range ts.All() {
		m, ok := BashMatrices[tb.Name]
		if !ok {
			continue
		}
		events := slices.Clone(m.Events)
		if fs := bashFailureFields[tb.Name]; fs != nil {
			events = append(events, MatrixEvent{Event: "PostToolUseFailure", Fields: fs})
		}
		for _, e := range events {
			n++
			ev, ok := tb.Events[e.Event]
			if !ok {
				t.Errorf("%s: the matrix observes %s, which the table has no row on", tb.Key(), e.Event)
				continue
			}
			for _, f := range e.Fields {
				if pf, ok := ev.Payload.Fields[f]; !ok || pf.Key != m.Keys[f] {
					t.Errorf("%s %s: the matrix reads %s from %q; the table has it = %v, under %q", tb.Key(), e.Event, f, m.Keys[f], ok, pf.Key)
				}
			}
			var missed []string
			for f := range ev.Payload.Fields {
				if !slices.Contains(e.Fields, f) && !slices.Contains(unbindable[tb.Name+" "+e.Event], f) {
					missed = append(missed, f)
				}
			}
			sort.Strings(missed)
			if missed != nil {
				t.Errorf("%s %s: the table's payload holds %q, which the matrix does not bind", tb.Key(), e.Event, missed)
			}
		}
	}
	if n == 0 {
		t.Fatal("no table of a harness with a matrix: this test proves nothing")
	}
}
