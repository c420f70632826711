package providers

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestDropViolations: each value a check rejects is listed with where it
// is, what it is and what the harness accepts; a path not there, and the
// values accepted, are not.
func TestDropViolations(t *testing.T) {
	d := &Drop{Checks: []Check{
		{Path: "model", Types: []string{"string"}},
		{Path: "hooks.*", Types: []string{"array"}},
		{Path: "hooks.*.*.matcher", Types: []string{"string"}},
		{Path: "hooks.*.*.hooks.*.type", Values: []string{"command", "prompt"}},
	}}
	for _, c := range []struct {
		doc  string
		want []Violation
	}{
		{`{}`, nil},
		{`{"model": "opus", "hooks": {"Stop": [{"matcher": "*", "hooks": [{"type": "prompt"}]}]}}`, nil},
		{`{"model": 5}`, []Violation{{"model", "5", "only string", ""}}},
		{`{"model": null}`, []Violation{{"model", "null", "only string", ""}}},
		{`{"hooks": {"Stop": "bad", "Pre": []}}`, []Violation{{"hooks.Stop", `"bad"`, "only array", "Stop"}}},
		{`{"hooks": {"Pre": [{"matcher": "*"}, {"matcher": 5, "hooks": [{"type": "command"}, {"type": "nope"}, {}]}]}}`, []Violation{
			{"hooks.Pre[1].matcher", "5", "only string", "Pre"},
			{"hooks.Pre[1].hooks[1].type", `"nope"`, `only "command" or "prompt"`, "Pre"},
		}},
		{`{"hooks": {"Pre": [{"hooks": [{"type": 1}]}]}}`, []Violation{{"hooks.Pre[0].hooks[0].type", "1", `only "command" or "prompt"`, "Pre"}}},
		{`[1, 2]`, nil},
	} {
		var doc any
		if err := json.Unmarshal([]byte(c.doc), &doc); err != nil {
			t.Fatal(err)
		}
		if got := d.Violations(doc); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Violations(%s) = %q, want %q", c.doc, got, c.want)
		}
	}
}

// TestSwitchSets: a switch with Values is set by each of them, numbers by
// value whatever their decoded type; one with Value by that alone; a list
// of commands by none.
func TestSwitchSets(t *testing.T) {
	truthy := &Switch{Values: []any{false, int64(0), ""}}
	one := &Switch{Value: true}
	list := &Switch{Contains: "command"}
	for _, c := range []struct {
		sw   *Switch
		v    any
		want bool
	}{
		{truthy, false, true},
		{truthy, float64(0), true},
		{truthy, int64(0), true},
		{truthy, "", true},
		{truthy, true, false},
		{truthy, float64(1), false},
		{truthy, "false", false},
		{truthy, nil, false},
		{one, true, true},
		{one, "true", false},
		{one, float64(1), false},
		{list, []any{"x"}, false},
	} {
		if got := c.sw.Sets(c.v); got != c.want {
			t.Errorf("%+v.Sets(%#v) = %v, want %v", *c.sw, c.v, got, c.want)
		}
	}
}

// TestBroken: a character the table's comments.breaks matches counts only
// inside a comment, and is found by its offset.
func TestBroken(t *testing.T) {
	ts, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	g, ok := ts.Lookup("gemini", "0.61.0")
	if !ok {
		t.Fatal("no gemini@0.61.0")
	}
	blank := func(doc string, from, to int) []byte {
		b := []byte(doc)
		for i := from; i < to; i++ {
			b[i] = ' '
		}
		return b
	}
	doc := "// a\u2028b\n{\"k\": \"\u2028\"}\n"
	if got := g.Broken([]byte(doc), blank(doc, 0, 9)); got != 4 {
		t.Errorf("Broken(U+2028 in a comment) = %d, want 4", got)
	}
	doc = "// a b\n{\"k\": \"\u2028\u00a0\"}\n"
	if got := g.Broken([]byte(doc), blank(doc, 0, 6)); got != -1 {
		t.Errorf("Broken(U+2028 in a string) = %d, want -1", got)
	}
	doc = "/* \u00a0 */{}"
	if got := g.Broken([]byte(doc), blank(doc, 0, 9)); got != 3 {
		t.Errorf("Broken(NBSP in a block comment) = %d, want 3", got)
	}
	c, _ := ts.Lookup("claude", "2.1.332")
	if got := c.Broken([]byte("{}"), []byte("{}")); got != -1 {
		t.Errorf("claude Broken = %d, want -1 (no breaks)", got)
	}
}
