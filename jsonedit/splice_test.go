package jsonedit

import "testing"

// TestInsertIntoEmpty: a child added to an empty container on one line
// goes after whatever comment it holds, a space apart, and the rest of
// the line is kept byte for byte.
func TestInsertIntoEmpty(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"a": []}`, `{"a": ["x"]}`},
		{`{"a": [ ]}`, `{"a": ["x"]}`},
		{`{"a": [/* none yet */]}`, `{"a": [/* none yet */ "x"]}`},
		{`{"a": [ /* none yet */ ]}`, `{"a": [ /* none yet */ "x"]}`},
		{`{"b": {}}`, `{"b": {"k": "x"}}`},
		{`{"b": {/* none yet */}}`, `{"b": {/* none yet */ "k": "x"}}`},
	} {
		v, err := ScanMember([]byte(c.doc), "", true)
		if err != nil {
			t.Fatalf("%s: %v", c.doc, err)
		}
		var s Splice
		if m := v.Member("a"); m != nil {
			s = AppendElem([]byte(c.doc), m.Val, "x")
		} else {
			s = InsertMember([]byte(c.doc), v.Member("b").Val, "k", "x")
		}
		if got := string(Apply([]byte(c.doc), []Splice{s})); got != c.want {
			t.Errorf("%s: got %s, want %s", c.doc, got, c.want)
		}
	}
}
