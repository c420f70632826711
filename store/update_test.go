package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/plan"
)

// kitManifest writes package kit: tools a, b and c, hooks A (required,
// runs a), B (optional, runs b) and C (optional, runs c), each
// "requirement|timeout_ms" as edit leaves them.
func kitManifest(t *testing.T, src string, edit func(hooks map[string]string)) {
	t.Helper()
	hooks := map[string]string{"A": "required|2000", "B": "optional|2000", "C": "optional|2000"}
	if edit != nil {
		edit(hooks)
	}
	var b strings.Builder
	b.WriteString("schema_version = 1\n[plugin]\nname = \"kit\"\ndescription = \"A kit.\"\n")
	for _, id := range []string{"A", "B", "C", "D"} {
		h, ok := hooks[id]
		if !ok {
			continue
		}
		req, timeout, _ := strings.Cut(h, "|")
		tool := strings.ToLower(id)
		fmt.Fprintf(&b, "[[tool]]\nschema_version = 1\nid = %q\nentry = \"%s.sh\"\nruntime = \"executable\"\nargv = []\ncwd = \"tool_root\"\navailability = \"required\"\n", tool, tool)
		fallback := "\nfallback = \"omit\""
		if req == "required" {
			fallback = ""
		}
		fmt.Fprintf(&b, "[[hook]]\nschema_version = 1\nid = %q\ntool = %q\nsubject = \"tool_call\"\nphase = \"after\"\neffect = \"observe\"\nrequirement = %q%s\ntimeout_ms = %s\nfailure_policy = \"report\"\nretry = \"never\"\nerror_visibility = \"user\"\nblocking_scope = \"matched_event\"\n", id, tool, req, fallback, timeout)
		name := filepath.Join(src, "plugins/kit", tool+".sh")
		if _, err := os.Stat(name); err != nil {
			if err := os.WriteFile(name, []byte("#!/bin/sh\necho '{\"kind\":\"observe\"}'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(src, "plugins/kit/PLUGIN.toml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// approvedKit is a store with source company holding kit (kitManifest),
// its tools a and c and hooks A and C approved on claude@2.1.233.
func approvedKit(t *testing.T) (s *Store, src string, sel *Selection) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, "claude"))
	t.Setenv("HOME", home)
	s = &Store{Dir: filepath.Join(home, "store")}
	src = filepath.Join(home, "src")
	os.MkdirAll(filepath.Join(src, "plugins/kit"), 0o755)
	kitManifest(t, src, nil)
	if _, err := s.AddSource("company", src, ""); err != nil {
		t.Fatal(err)
	}
	sel, err := s.Select("company:kit", "claude@2.1.233")
	if err != nil {
		t.Fatal(err)
	}
	props, _, err := s.Propose(sel, []string{"a", "c"}, []string{"A", "C"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Approve(props); err != nil {
		t.Fatal(err)
	}
	return s, src, sel
}

// TestPlanUpdate holds an update's decision, grant by grant, to the rule:
// carried over when the package asks what the grant binds; asked again
// when its bytes or contract changed, or the tool a hook runs did; asked
// like approve for what the installed package did not have, or a required
// hook without a grant; a hook's tool asked for when it has no grant;
// revoked when the package dropped it; an optional hook never approved
// left alone.
func TestPlanUpdate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, s *Store, src string)
		want   string // kind item state[ why], one per grant, in order
	}{
		{"nothing", nil, "tool a unchanged; tool c unchanged; hook A unchanged; hook C unchanged"},
		{"tool bytes", func(t *testing.T, s *Store, src string) {
			os.WriteFile(filepath.Join(src, "plugins/kit/a.sh"), []byte("#!/bin/sh\necho '{\"kind\":\"observe\"}' # v2\n"), 0o755)
		}, "tool a changed files changed: a.sh (sha256 f0abe5ab7151, approved 29b88c09d257); tool c unchanged; hook A changed the tool it runs changed; hook C unchanged"},
		{"hook contract", func(t *testing.T, s *Store, src string) {
			kitManifest(t, src, func(h map[string]string) { h["C"] = "optional|9000" })
		}, "tool a unchanged; tool c unchanged; hook A unchanged; hook C changed timeout_ms changed"},
		{"new hook", func(t *testing.T, s *Store, src string) {
			kitManifest(t, src, func(h map[string]string) { h["D"] = "optional|2000" })
		}, "tool a unchanged; tool c unchanged; tool d new; hook A unchanged; hook C unchanged; hook D new"},
		{"dropped hook", func(t *testing.T, s *Store, src string) {
			kitManifest(t, src, func(h map[string]string) { delete(h, "C") })
		}, "tool a unchanged; hook A unchanged; hook C gone; tool c gone"},
		{"never approved, now required", func(t *testing.T, s *Store, src string) {
			kitManifest(t, src, func(h map[string]string) { h["B"] = "required|2000" })
		}, "tool a unchanged; tool c unchanged; hook A unchanged; hook B new required; tool b new hook B runs it; hook C unchanged"},
		{"tool grant revoked", func(t *testing.T, s *Store, src string) {
			if _, _, err := s.Revoke("company:kit", []string{"a"}, nil, nil); err != nil {
				t.Fatal(err)
			}
		}, "tool c unchanged; hook A unchanged; tool a new hook A runs it; hook C unchanged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, src, sel := approvedKit(t)
			exe, _ := os.Executable()
			if _, err := s.Install(sel, Dispatcher{Exe: exe}, InstallOptions{}); err != nil {
				t.Fatal(err)
			}
			if tc.change != nil {
				tc.change(t, s, src)
			}
			sel, err := s.Select("company:kit", "claude@2.1.233")
			if err != nil {
				t.Fatal(err)
			}
			u, err := s.PlanUpdate(sel)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, g := range u.Grants {
				got = append(got, strings.TrimSpace(strings.Join([]string{g.Kind, g.Item, g.State, g.Why}, " ")))
			}
			if strings.Join(got, "; ") != tc.want {
				t.Errorf("grants:\n  %s\nwant:\n  %s", strings.Join(got, "; "), tc.want)
			}
			// What the update asks is what its changed and new grants
			// write, nothing else.
			var asks []string
			for _, g := range u.Asks() {
				_, _, kind, item, _ := plan.ParseGrantID(g.ID)
				asks = append(asks, kind+" "+item)
			}
			var want []string
			for _, g := range u.Grants {
				if g.State == GrantChanged || g.State == GrantNew {
					want = append(want, g.Kind+" "+g.Item)
				}
			}
			if strings.Join(asks, ",") != strings.Join(want, ",") {
				t.Errorf("asks %v, want %v", asks, want)
			}
		})
	}
}

// TestUpdateGrantChangedMeanwhile: an update applies only while the ledger
// holds the grants it was planned from, digest and all: another approve of
// a grant it carries over, between the plan and its apply, stops it.
func TestUpdateGrantChangedMeanwhile(t *testing.T) {
	s, src, sel := approvedKit(t)
	exe, _ := os.Executable()
	if _, err := s.Install(sel, Dispatcher{Exe: exe}, InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "plugins/kit/a.sh"), []byte("#!/bin/sh\necho '{\"kind\":\"observe\"}' # v2\n"), 0o755)
	sel, err := s.Select("company:kit", "claude@2.1.233")
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.PlanUpdate(sel)
	if err != nil {
		t.Fatal(err)
	}
	// Meanwhile hook C is approved again with another timeout.
	kitManifest(t, src, func(h map[string]string) { h["C"] = "optional|9000" })
	sel2, err := s.Select("company:kit", "claude@2.1.233")
	if err != nil {
		t.Fatal(err)
	}
	props, _, err := s.Propose(sel2, nil, []string{"C"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Approve(props); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Grants()
	_, err = s.Update(u, Dispatcher{Exe: exe}, InstallOptions{})
	if err == nil || !strings.Contains(err.Error(), "the grant of hook C changed since the update was shown; nothing was written") {
		t.Fatalf("update after hook C was approved again: %v, want it refused", err)
	}
	after, _ := s.Grants()
	if len(before) != len(after) {
		t.Errorf("the refused update changed the ledger: %d grants, then %d", len(before), len(after))
	}
	for i := range before {
		if i < len(after) && before[i].Digest != after[i].Digest {
			t.Errorf("the refused update changed grant %s", before[i].ID)
		}
	}
}
