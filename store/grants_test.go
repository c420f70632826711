package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/plan"
)

// ParseGrantID reads back every id GrantID builds, and rejects what it
// cannot have built.
func TestParseGrantID(t *testing.T) {
	pkg := plan.PackageIdentity{Source: "company", Name: "review-kit"}
	for _, tc := range []struct{ provider, kind, item string }{
		{"claude", "tool", "guard"},
		{"codex", "hook", "design-context"},
		{"claude", "hook", "a.b_c"},
		{"claude", "skill", "review-notes"},
		{"gemini", "agent", "a+b"}, // a member's name may hold '+'
	} {
		id := plan.GrantID(tc.provider, pkg, tc.kind, tc.item)
		provider, got, kind, item, err := plan.ParseGrantID(id)
		if err != nil {
			t.Fatalf("plan.ParseGrantID(%q): %v", id, err)
		}
		if provider != tc.provider || got != pkg || kind != tc.kind || item != tc.item {
			t.Errorf("plan.ParseGrantID(%q) = %s, %v, %s, %s", id, provider, got, kind, item)
		}
	}
	for _, bad := range []string{
		"",
		"claude+company+review-kit+tool",
		"claude++review-kit+tool+guard",
		"claude+company+review-kit+instruction+guard",
	} {
		if _, _, _, _, err := plan.ParseGrantID(bad); err == nil {
			t.Errorf("plan.ParseGrantID(%q): no error", bad)
		}
	}
}

// Revoke finds grants by their file names, so a corrupt grant is revoked
// too, and files that are not grant ids of the package are left alone.
func TestRevokeByID(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	dir := s.path("grants")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	pkg := plan.PackageIdentity{Source: "company", Name: "kit"}
	g, err := plan.NewGrant("tool", "claude", pkg, "guard", plan.ToolBinds{Package: pkg, Tool: "guard"}, "2026-01-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutGrants([]*plan.Grant{g}); err != nil {
		t.Fatal(err)
	}
	corrupt := plan.GrantID("codex", pkg, "hook", "gate")
	other := plan.GrantID("claude", plan.PackageIdentity{Source: "company", Name: "kit2"}, "tool", "guard")
	for _, name := range []string{corrupt + ".json", other + ".json", "notes.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	gs, _, err := s.Revoke("company:kit", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, g := range gs {
		got[g.ID] = g.Provider + " " + g.Kind + " " + g.Item
	}
	want := map[string]string{g.ID: "claude tool guard", corrupt: "codex hook gate"}
	if len(got) != len(want) || got[g.ID] != want[g.ID] || got[corrupt] != want[corrupt] {
		t.Errorf("revoked %v, want %v", got, want)
	}
	for _, name := range []string{other + ".json", "notes.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, _, err := s.Revoke("company:kit", []string{"guard"}, nil, nil); err == nil {
		t.Error("revoking a grant already revoked: no error")
	}
}

// TestFailing checks that what revoke and approve tell the user of a hook
// that can no longer run is what dispatch does under its policy: for
// fail_closed, what the rules' #FailClosed gives its effect.
func TestFailing(t *testing.T) {
	want := map[string]string{
		plan.FailDeny:     "every action it guards is denied",
		plan.FailContinue: "every stop it matches asks for another workflow pass, with a failure message (at most 3 passes in a row",
	}
	if len(plan.FailClosed) == 0 {
		t.Fatal("the rules give fail_closed no effect")
	}
	for effect, action := range plan.FailClosed {
		got := GrantUse{Effect: effect, FailurePolicy: "fail_closed"}.Failing()
		if !strings.Contains(got, want[action]) {
			t.Errorf("fail_closed %s (%s): %q, want %q", effect, action, got, want[action])
		}
	}
	for _, policy := range []string{"report", "fail_open"} {
		got := GrantUse{Effect: "continue_workflow", FailurePolicy: policy}.Failing()
		if got != "under its "+policy+" policy every event it matches shows you a failure message" {
			t.Errorf("%s: %q", policy, got)
		}
	}
}

// TestDeleteGrantsPending: revoking a grant removes a pending grant of
// the same id too, which dispatch would otherwise honour (an update that
// stopped half way leaves one).
func TestDeleteGrantsPending(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := plan.PackageIdentity{Source: "company", Name: "kit"}
	g, err := plan.NewGrant("tool", "claude", pkg, "guard", plan.ToolBinds{Package: pkg, Tool: "guard"}, "2026-01-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutGrants([]*plan.Grant{g}); err != nil {
		t.Fatal(err)
	}
	pending := s.path(plan.PendingDir, plan.GrantFile(g.ID))
	if err := os.MkdirAll(filepath.Dir(pending), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pending, grantBytes(g), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteGrants([]string{g.ID}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{s.grantPath(g.ID), pending} {
		if _, err := os.Stat(name); !os.IsNotExist(err) {
			t.Errorf("%s is still there after the revoke (%v)", name, err)
		}
	}
	// Revoking what is gone is no error.
	if err := s.DeleteGrants([]string{g.ID}); err != nil {
		t.Errorf("revoking again: %v", err)
	}
}
