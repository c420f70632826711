package project

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestVerifyAcrossReleases: a lock holds for the tables it was resolved
// on, whatever tables the dalo checking it knows. A newer dalo, which
// knows a harness version the writer did not, does not find the lock
// wanting for it; an older one, which does not know a version the lock
// names, checks what it can and names what it could not.
func TestVerifyAcrossReleases(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"dalo.toml":                        "[sources.local]\npath = \"agents\"\n\n[[packages]]\nref = \"local:notes\"\nproviders = [\"claude\"]\n",
		"agents/plugins/notes/PLUGIN.toml": "schema_version = 1\n\n[plugin]\nname = \"notes\"\ndescription = \"Notes.\"\n\n[[plugin.members]]\nref = \"skill:notes\"\nrequirement = \"required\"\n",
		"agents/skills/notes/SKILL.md":     "---\nname: notes\ndescription: Take notes.\n---\nTake notes.\n",
		"agents/instructions/.keep":        "",
		"agents/agents/.keep":              "",
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	full, err := Resolve(p, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tables := full.Tables()
	if len(tables) < 2 {
		t.Fatalf("the lock names %v: this test needs two claude tables", tables)
	}
	// The lock of a dalo that knew every claude table but the newest.
	newest := tables[len(tables)-1]
	older := relock(t, full, func(table string) string {
		if table == newest {
			return ""
		}
		return table
	})
	if slices.Contains(older.Tables(), newest) {
		t.Fatalf("the older lock still names %s", newest)
	}
	if d, _, err := Verify(p, older, Options{}); err != nil || len(d) > 0 {
		t.Errorf("a lock without %s, a table this dalo knows: Verify = %v, %v; want it to hold", newest, diagStrings(d), err)
	}
	if u := UnknownTables(older); len(u) != 0 {
		t.Errorf("UnknownTables = %v, want none", u)
	}
	// The lock of a dalo that knows a version this one does not.
	newer := relock(t, full, func(table string) string { return table })
	for _, g := range full.Packages[0].Grants {
		newer.Packages[0].Grants = append(newer.Packages[0].Grants, LockedGrant{ID: g.ID, Digest: g.Digest, Tables: []string{"claude@9.9.9"}})
	}
	newer, err = ParseLock(newer.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if d, _, err := Verify(p, newer, Options{}); err != nil || len(d) > 0 {
		t.Errorf("a lock naming claude@9.9.9 too: Verify = %v, %v; want it to hold", diagStrings(d), err)
	}
	if u := UnknownTables(newer); !slices.Equal(u, []string{"claude@9.9.9"}) {
		t.Errorf("UnknownTables = %v, want [claude@9.9.9]", u)
	}
	// A digest that differs on a table both know is still found.
	bad := relock(t, full, func(table string) string { return table })
	bad.Packages[0].Grants[0].Digest = strings.Repeat("0", 64)
	if d, _, _ := Verify(p, bad, Options{}); len(d) == 0 {
		t.Error("a changed digest passed Verify")
	}
}

// relock is l with each grant's tables mapped by f ("" drops the table, and
// a grant left with none), written and read back as dalo.lock.
func relock(t *testing.T, l *Lock, f func(string) string) *Lock {
	t.Helper()
	c := &Lock{Sources: slices.Clone(l.Sources)}
	for _, p := range l.Packages {
		p.Grants = slices.Clone(p.Grants)
		var gs []LockedGrant
		for _, g := range p.Grants {
			var ts []string
			for _, table := range g.Tables {
				if m := f(table); m != "" {
					ts = append(ts, m)
				}
			}
			if len(ts) > 0 {
				g.Tables = ts
				gs = append(gs, g)
			}
		}
		p.Grants = gs
		c.Packages = append(c.Packages, p)
	}
	out, err := ParseLock(c.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	return out
}
