package engine

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckSourceID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"company", true},
		{"co.example_agents-1", true},
		{"A", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"", false},
		{"a:b", false},   // a reference atom has no ':'
		{"a#b", false},   // nor '#'
		{"a/b", false},   // nor '/'
		{`a\b`, false},   // nor '\'
		{"a+b", false},   // '+' separates the parts of a grant file name
		{".", false},     // not a safe file name part
		{"..", false},    // nor this
		{"-a", false},    // would read as a flag
		{"a-", false},    // ends with a letter or digit
		{"a b", false},   // no blanks
		{"é", false},     // ASCII only
		{"a\x00", false}, // no NUL
	}
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		err := r.CheckSourceID(tt.id)
		if (err == nil) != tt.ok {
			t.Errorf("CheckSourceID(%q) = %v, want ok %t", tt.id, err, tt.ok)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrSourceID) || !strings.Contains(err.Error(), "at most 128 characters") {
				t.Errorf("CheckSourceID(%q) = %v, want ErrSourceID stating the rule", tt.id, err)
			}
		}
		if got := CheckSourceID(tt.id); (got == nil) != tt.ok {
			t.Errorf("package CheckSourceID(%q) = %v, want ok %t", tt.id, got, tt.ok)
		}
	}
}

// TestLoadRefusesSourceID proves that the engine itself refuses a bad id,
// before it looks at the source.
func TestLoadRefusesSourceID(t *testing.T) {
	_, err := Load("does-not-exist", Options{SourceID: "a:b/c"})
	if !errors.Is(err, ErrSourceID) {
		t.Fatalf("Load with source id a:b/c = %v, want ErrSourceID", err)
	}
}

func TestLayout(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	l := r.Layout
	tests := []struct {
		kind, sel, path, dir, file string
	}{
		{"plugin", "p", "plugins/p/PLUGIN.toml", "plugins/p", "PLUGIN.toml"},
		{"skill", "s", "skills/s/SKILL.md", "skills/s", "SKILL.md"},
		{"instruction", "i", "instructions/i.md", "instructions/i", ""},
		{"agent", "a", "agents/a.md", "agents/a", ""},
		{"prompt", "x", "", "", ""},
	}
	for _, tt := range tests {
		if got := l.Path(tt.kind, tt.sel); got != tt.path {
			t.Errorf("Path(%s, %s) = %q, want %q", tt.kind, tt.sel, got, tt.path)
		}
		if tt.path != "" {
			if got := l.Dir(tt.kind, tt.sel); got != tt.dir {
				t.Errorf("Dir(%s, %s) = %q, want %q", tt.kind, tt.sel, got, tt.dir)
			}
		}
		if got := l.File(tt.kind); got != tt.file {
			t.Errorf("File(%s) = %q, want %q", tt.kind, got, tt.file)
		}
	}
	if len(l) != 4 {
		t.Errorf("layout has %d kinds, want 4: %v", len(l), l)
	}
}
