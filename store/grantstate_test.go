package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/plan"
)

// TestGrantStates: the one answer review, approve and install share,
// grant by grant: approved while the item is what was approved; changed
// after its bytes change, and so is every hook that runs it (a hook grant
// names its tool's digest); not approved without a grant; unknown, with
// why, when the grant cannot be read; and a pending grant counts as the
// ledger's.
func TestGrantStates(t *testing.T) {
	s, src, sel := approvedKit(t)
	states := func(pending map[string]*plan.Grant) string {
		t.Helper()
		sel, err := s.Select("company:kit", "claude@2.1.233")
		if err != nil {
			t.Fatal(err)
		}
		tools, hooks, err := s.GrantStates(sel, pending)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, id := range []string{"a", "b", "c"} {
			out = append(out, "tool "+id+" "+tools[id].State)
		}
		for _, id := range []string{"A", "B", "C"} {
			out = append(out, "hook "+id+" "+hooks[id].State)
		}
		return strings.Join(out, "; ")
	}
	if got, want := states(nil), "tool a approved; tool b not_approved; tool c approved; hook A approved; hook B not_approved; hook C approved"; got != want {
		t.Errorf("approved:\n  %s\nwant\n  %s", got, want)
	}
	os.WriteFile(filepath.Join(src, "plugins/kit/a.sh"), []byte("#!/bin/sh\necho '{\"kind\":\"observe\"}' # v2\n"), 0o755)
	if got, want := states(nil), "tool a changed; tool b not_approved; tool c approved; hook A changed; hook B not_approved; hook C approved"; got != want {
		t.Errorf("tool a changed:\n  %s\nwant\n  %s", got, want)
	}
	// The grants approving b and B would write, not written yet.
	sel, _ = s.Select("company:kit", "claude@2.1.233")
	pb, _, err := s.Propose(sel, nil, []string{"B"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	pending := map[string]*plan.Grant{}
	for _, p := range pb {
		pending[p.Grant.ID] = p.Grant
	}
	if got, want := states(pending), "tool a changed; tool b approved; tool c approved; hook A changed; hook B approved; hook C approved"; got != want {
		t.Errorf("pending b and B:\n  %s\nwant\n  %s", got, want)
	}
	id := plan.GrantID("claude", sel.Identity, "tool", "c")
	if err := os.WriteFile(s.grantPath(id), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	sel, _ = s.Select("company:kit", "claude@2.1.233")
	tools, _, err := s.GrantStates(sel, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := tools["c"]; st.State != GrantUnknown || st.Err == nil || !strings.Contains(st.Err.Error(), id) {
		t.Errorf("corrupt grant: %s %v", st.State, st.Err)
	}
}
