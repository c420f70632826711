package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A Drop is a settings file the harness ignores whole, or whose hooks it
// ignores, when a value in it fails one of Checks: what Means says.
//
// Scope says what the harness ignores: "file", the whole file; "event",
// the hooks of the one event whose member the path's first "*" matched
// (hooks.<event>...), the other events' hooks still running.
type Drop struct {
	Location Location `json:"location"`
	Scope    string   `json:"scope"`
	// OwnFile: the harness ignores only this file's hooks, so dalo's
	// entries only when they are in it.
	OwnFile  bool     `json:"own_file,omitempty"`
	Checks   []Check  `json:"checks"`
	Means    string   `json:"means"`
	Evidence []string `json:"evidence"`
}

// A Check is what the harness accepts at Path of a settings file: a dotted
// path into its objects, "*" standing for any member of an object or
// element of an array; the JSON types in Types, or the strings in Values.
type Check struct {
	Path     string   `json:"path"`
	Types    []string `json:"types,omitempty"`
	Values   []string `json:"values,omitempty"`
	Evidence []string `json:"evidence"`
}

// A Violation is a value of a settings file that fails a check: Path is
// where it is (hooks.PreToolUse[0].matcher), Got the value as JSON, Want
// what the harness accepts there.
type Violation struct {
	Path string
	Got  string
	Want string
	// Member is the object member the path's first "*" matched, or "".
	Member string
}

// Drop scopes.
const (
	DropsFile  = "file"
	DropsEvent = "event"
)

// String says what the file holds at the path and what the harness accepts there.
func (v Violation) String() string {
	return fmt.Sprintf("%s is %s, where the harness accepts %s", v.Path, v.Got, v.Want)
}

// Violations lists the values of doc, a decoded JSON or TOML document,
// that fail d's checks, in the order of the checks and then of the paths.
func (d *Drop) Violations(doc any) []Violation {
	var out []Violation
	for _, c := range d.Checks {
		walkPath(doc, strings.Split(c.Path, "."), "", "", func(at, member string, v any) {
			if !c.accepts(v) {
				out = append(out, Violation{Path: at, Got: jsonText(v), Want: c.want(), Member: member})
			}
		})
	}
	return out
}

// accepts says whether the harness accepts v where c checks.
func (c *Check) accepts(v any) bool {
	if len(c.Values) > 0 {
		s, ok := v.(string)
		return ok && slices.Contains(c.Values, s)
	}
	return slices.Contains(c.Types, TypeOf(v))
}

// want says what c accepts, as a user reads it.
func (c *Check) want() string {
	if len(c.Values) > 0 {
		q := make([]string, len(c.Values))
		for i, v := range c.Values {
			q[i] = strconv.Quote(v)
		}
		return "only " + orList(q)
	}
	return "only " + orList(c.Types)
}

// orList joins words: "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// TypeOf is the JSON type of a decoded value: object, array, string,
// number, boolean or null (a TOML date, which has no JSON type, is
// "other"). An object or array a reader left as its JSON (a
// json.RawMessage: hooksfile leaves those no rule reads inside) is of
// the type its first byte says.
func TypeOf(v any) string {
	if raw, ok := v.(json.RawMessage); ok {
		// An object or array left as its JSON (hooksfile): its first byte.
		switch {
		case bytes.HasPrefix(raw, []byte("{")):
			return "object"
		case bytes.HasPrefix(raw, []byte("[")):
			return "array"
		}
		return "other"
	}
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64, int64, int, json.Number:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "other"
}

// ReadsInside lists the top-level keys of a settings document whose
// values c's drop checks and off switches read below the key itself (a
// path through them, a switch that lists commands); all reports one that
// reads inside every key (a path starting "*"). Of any other top-level
// object or array the checks and switches ask only its type (TypeOf), so
// a reader may leave it undecoded.
func (c *Config) ReadsInside() (keys map[string]bool, all bool) {
	keys = map[string]bool{}
	add := func(path string, whole bool) {
		first, rest, below := strings.Cut(path, ".")
		if first == "*" {
			all = true
		}
		if below && rest != "" || whole {
			keys[first] = true
		}
	}
	for _, d := range c.Drop {
		for _, ch := range d.Checks {
			add(ch.Path, false)
		}
	}
	for _, sw := range c.Off {
		add(sw.Key, sw.Contains != "")
	}
	return keys, all
}

// walkPath calls f with each value of doc at path, where it is, and the
// member the path's first "*" matched (member, until then "").
func walkPath(doc any, path []string, at, member string, f func(at, member string, v any)) {
	if len(path) == 0 {
		f(at, member, doc)
		return
	}
	k, rest := path[0], path[1:]
	join := func(key string) string {
		if at == "" {
			return key
		}
		return at + "." + key
	}
	switch d := doc.(type) {
	case map[string]any:
		if k != "*" {
			if v, ok := d[k]; ok {
				walkPath(v, rest, join(k), member, f)
			}
			return
		}
		for _, key := range slices.Sorted(maps.Keys(d)) {
			m := member
			if m == "" {
				m = key
			}
			walkPath(d[key], rest, join(key), m, f)
		}
	case []any:
		if k != "*" {
			return
		}
		for i, v := range d {
			walkPath(v, rest, fmt.Sprintf("%s[%d]", at, i), member, f)
		}
	}
}

// jsonText is v as JSON, cut to a length a message holds.
func jsonText(v any) string {
	if raw, ok := v.(json.RawMessage); ok {
		// Written as the decoded value is (its keys sorted), to the same
		// 40 bytes.
		var x any
		if json.Unmarshal(raw, &x) == nil {
			v = x
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
}

// Lookup is the value at the dotted path of a decoded document, and
// whether there is one.
func Lookup(doc any, path string) (any, bool) {
	for _, k := range strings.Split(path, ".") {
		m, ok := doc.(map[string]any)
		if !ok {
			return nil, false
		}
		if doc, ok = m[k]; !ok {
			return nil, false
		}
	}
	return doc, true
}

// Sets says whether v, the value of the switch's key, switches every hook
// off: it is the switch's Value, or one of its Values. Numbers compare by
// value, whatever their decoded Go type.
func (sw *Switch) Sets(v any) bool {
	if sw.Contains != "" {
		return false
	}
	vals := sw.Values
	if sw.Values == nil {
		vals = []any{sw.Value}
	}
	for _, want := range vals {
		if sameValue(v, want) {
			return true
		}
	}
	return false
}

// sameValue compares two decoded scalars, numbers by value.
func sameValue(a, b any) bool {
	if TypeOf(a) != TypeOf(b) {
		return false
	}
	if TypeOf(a) == "number" {
		return number(a) == number(b)
	}
	return a == b
}

func number(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int64:
		return float64(n)
	case int:
		return float64(n)
	case json.Number:
		f, _ := n.Float64()
		return f
	}
	return 0
}

// Broken returns the offset in doc, a JSON document with comments, of the
// first character of a comment that the harness keeps when it strips the
// comments, and then fails to parse (Comments.Breaks), or -1. stripped is
// doc with its comments blanked (jsonedit.WithoutComments).
func (t *Table) Broken(doc, stripped []byte) int {
	if t.breaks == nil {
		return -1
	}
	for _, loc := range t.breaks.FindAllIndex(doc, -1) {
		if stripped[loc[0]] != doc[loc[0]] { // blanked: in a comment
			return loc[0]
		}
	}
	return -1
}

// Expanded returns the first text of s the harness would rewrite before
// running it as a command (its entry's Expands), or "".
func (t *Table) Expanded(s string) string {
	if t.expands == nil {
		return ""
	}
	return t.expands.FindString(s)
}

// compileExpands compiles the entry's Expands and the comments' Breaks,
// which #Provider accepted.
func (t *Table) compileExpands() error {
	t.expands = nil
	if e := t.Config.Hooks.Entry.Expands; e != nil {
		re, err := regexp.Compile(e.Regexp)
		if err != nil {
			return fmt.Errorf("%s: config.hooks.entry.expands.regexp: %w", t.Key(), err)
		}
		t.expands = re
	}
	t.breaks = nil
	if c := t.Config.Comments; c != nil && c.Breaks != nil {
		re, err := regexp.Compile(c.Breaks.Regexp)
		if err != nil {
			return fmt.Errorf("%s: config.comments.breaks.regexp: %w", t.Key(), err)
		}
		t.breaks = re
	}
	return nil
}
