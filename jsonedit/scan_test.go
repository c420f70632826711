package jsonedit

import (
	"fmt"
	"strings"
	"testing"
)

// A document the scanner refuses gets a position and words for what is
// there; a byte order mark is named, not shown as the character 'ï'.
func TestScanJSONErrors(t *testing.T) {
	tests := []struct{ doc, want string }{
		{utf8BOM + `{"hooks": {}}`, "1:1: not valid JSON: the file starts with a UTF-8 byte order mark (U+FEFF), which JSON does not allow and the harness would not read either; save the file without it"},
		{utf8BOM, "1:1: not valid JSON: the file starts with a UTF-8 byte order mark (U+FEFF), which JSON does not allow and the harness would not read either; save the file without it"},
		{"{,", "1:2: not valid JSON: expected a string key"},
		{"{}\n{}", `2:1: not valid JSON: unexpected '{' after the top-level value`},
		{"\xff", "1:1: not valid JSON: not UTF-8"},
	}
	for _, tt := range tests {
		_, err := Scan([]byte(tt.doc))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Scan(%q) = %v, want %s", tt.doc, err, tt.want)
		}
	}
	if _, err := Scan([]byte(`{"a": "` + utf8BOM + `"}`)); err != nil {
		t.Errorf("U+FEFF inside a string is text: %v", err)
	}
}

// skimDocs are documents whose skimmed scans (ScanMember, ScanStrings)
// must agree with the whole scan: keys held twice at every depth, escapes,
// every kind of value, and broken ones.
var skimDocs = []string{
	`{}`,
	`{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}`,
	`{"permissions": {"allow": ["a", "b\"c", "d\\", "\u0041"], "deny": [1, -2.5e3, true, null, {}]}, "hooks": {}}`,
	`{"permissions": {"allow": [{"x": 1, "x": 2}], "ask": {"y": 1, "y": 2}}, "hooks": {"a": [], "a": []}}`,
	`{"p": [[{"k": 1}, {"k": 1, "j": {"z": 1, "z": 2}}], {"q": 1, "q": 2}]}`,
	`{"p": {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9, "j": 10, "k": 11, "l": 12, "m": 13, "n": 14, "o": 15, "p": 16, "q": 17, "a": 18}}`,
	`{"p": {"\u0061": 1, "a": 2}, "s": "x --provider claude y"}`,
	`{"p": ["a", "b"`,
	`{"p": ["a\x01"]}`,
	`{"p": ["\q"]}`,
	`{"p": [01]}`,
	`{"p": tru}`,
	`{"hooks": {"Stop": [{"hooks": [{"command": "a", "command": "b"}]}]}}`,
}

// TestScanSkimmed proves that a document scanned for editing one member,
// which skims the rest, refuses and accepts what the whole scan does, at
// the same place, and finds the same first object holding a key twice;
// and that ScanStrings visits the string values the whole scan holds.
func TestScanSkimmed(t *testing.T) {
	for _, doc := range skimDocs {
		checkSkimmed(t, []byte(doc))
	}
}

// checkSkimmed checks the skimmed scans of doc against the whole one
// (FuzzScanJSON runs it too).
func checkSkimmed(t *testing.T, doc []byte) {
	t.Helper()
	whole, werr := Scan(doc)
	for name, scan := range map[string]func([]byte, string, bool) (*Value, error){"ScanMember": ScanMember, "RescanMember": RescanMember} {
		if name == "RescanMember" && werr != nil {
			continue // it reads only documents scanned whole before
		}
		skim, serr := scan(doc, "hooks", false)
		if fmt.Sprint(werr) != fmt.Sprint(serr) {
			t.Errorf("%s(%q): error %v, the whole scan's %v", name, doc, serr, werr)
			continue
		}
		if werr != nil {
			continue
		}
		if got, want := dupText(AnyDuplicate(skim)), dupText(AnyDuplicate(whole)); got != want {
			t.Errorf("%s(%q): first duplicate %s, the whole scan's %s", name, doc, got, want)
		}
		if skim.Start != whole.Start || skim.End != whole.End || len(skim.Members) != len(whole.Members) {
			t.Errorf("%s(%q): the top level differs", name, doc)
		}
	}
	var visited []string
	serr := ScanStrings(doc, false, func(tok []byte) { visited = append(visited, string(tok)) })
	if fmt.Sprint(werr) != fmt.Sprint(serr) {
		t.Errorf("ScanStrings(%q): error %v, the whole scan's %v", doc, serr, werr)
	}
	if werr != nil {
		return
	}
	var want []string
	var walk func(v *Value)
	walk = func(v *Value) {
		if v.Kind == '"' {
			want = append(want, string(doc[v.Start:v.End]))
		}
		for _, m := range v.Members {
			walk(m.Val)
		}
		for _, e := range v.Elems {
			walk(e)
		}
	}
	walk(whole)
	if strings.Join(visited, "|") != strings.Join(want, "|") {
		t.Errorf("ScanStrings(%q) visited %q, want %q", doc, visited, want)
	}
}

func dupText(v *Value) string {
	if v == nil {
		return "none"
	}
	first, again, _ := v.Duplicate()
	return fmt.Sprintf("%q at %d and %d", first.Key, first.KeyStart, again.KeyStart)
}

// TestDuplicateKeys: a key held twice in an object is found whatever the
// object's size (a large one is searched through an index), the first
// pair in document order, so that dalo never edits one copy of a setting
// whose harness reads the other.
func TestDuplicateKeys(t *testing.T) {
	object := func(n int, dup ...int) string {
		var b strings.Builder
		b.WriteString(`{"p": {`)
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `"k%d": %d`, i, i)
		}
		for _, d := range dup {
			fmt.Fprintf(&b, `, "k%d": "again"`, d)
		}
		b.WriteString("}}")
		return b.String()
	}
	for _, c := range []struct {
		doc  string
		want string // key, or "" for none
	}{
		{object(3), ""},
		{object(3, 1), "k1"},
		{object(15, 0), "k0"},
		{object(16), ""},
		{object(16, 0), "k0"},
		{object(16, 15), "k15"},
		{object(40, 3), "k3"},
		{object(40, 39, 3), "k39"},
		{object(40, 20), "k20"},
	} {
		v, err := Scan([]byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		d := AnyDuplicate(v)
		got := ""
		if d != nil {
			first, again, _ := d.Duplicate()
			if first.Key != again.Key || first.KeyStart >= again.KeyStart {
				t.Errorf("%.60s…: duplicate %q at %d and %q at %d", c.doc, first.Key, first.KeyStart, again.Key, again.KeyStart)
			}
			got = first.Key
		}
		if got != c.want {
			t.Errorf("%.60s… (%d bytes): duplicate %q, want %q", c.doc, len(c.doc), got, c.want)
		}
	}
}

// TestPlainRun holds plainRun to stringSpecial a byte at a time: every
// byte value at every place of runs of every length up to 24, among
// bytes that end no run (ASCII and UTF-8's high bytes).
func TestPlainRun(t *testing.T) {
	slow := func(doc []byte, i int) int {
		for i < len(doc) && !stringSpecial[doc[i]] {
			i++
		}
		return i
	}
	for n := range 25 {
		for at := range n {
			for c := range 256 {
				doc := make([]byte, n)
				for k := range doc {
					doc[k] = "a~ \x7f\xc3\xa9\x80\xff"[k%8]
				}
				doc[at] = byte(c)
				for from := range min(n, 3) {
					if got, want := plainRun(doc, from), slow(doc, from); got != want {
						t.Fatalf("plainRun(%q, %d) = %d, want %d", doc, from, got, want)
					}
				}
			}
		}
	}
}
