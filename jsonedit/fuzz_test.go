package jsonedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"unicode/utf8"
)

// FuzzScanJSON: the scanner accepts only JSON, every value it reports is
// the JSON at its offsets, and it accepts the JSON the harnesses read: not
// nested past its limit, in UTF-8 without a byte order mark, without
// duplicate keys (which it may or may not refuse); the skimmed scans of a
// harness configuration agree with it.
func FuzzScanJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkSkimmed(t, doc)
		v, err := Scan(doc)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Column < 1 || se.Line > bytes.Count(doc, []byte("\n"))+1 {
				t.Fatalf("%q: error %v is no position in the document", doc, err)
			}
			if json.Valid(doc) && utf8.Valid(doc) && !bytes.HasPrefix(doc, []byte(utf8BOM)) && jsonDepth(doc) <= MaxDepth && !duplicateKeys(doc) {
				t.Fatalf("%q: valid JSON refused: %v", doc, err)
			}
			return
		}
		if !json.Valid(doc) {
			t.Fatalf("%q: accepted, but not JSON", doc)
		}
		checkSpans(t, doc, v, 0, len(doc))
	})
}

// checkSpans checks that v, found within doc[lo:hi], is the JSON value at
// its offsets, and so are its children, in order and within it.
func checkSpans(t *testing.T, doc []byte, v *Value, lo, hi int) {
	t.Helper()
	if v.Start < lo || v.End > hi || v.Start >= v.End || !json.Valid(doc[v.Start:v.End]) {
		t.Fatalf("%q: value at [%d:%d] outside [%d:%d] or not JSON", doc, v.Start, v.End, lo, hi)
	}
	if v.Kind == '"' {
		var s string
		if json.Unmarshal(doc[v.Start:v.End], &s) != nil || s != v.Str {
			t.Fatalf("%q: string at [%d:%d] read as %q", doc, v.Start, v.End, v.Str)
		}
	}
	at := v.Start + 1
	for _, m := range v.Members {
		var key string
		if m.KeyStart < at || json.NewDecoder(bytes.NewReader(doc[m.KeyStart:])).Decode(&key) != nil || key != m.Key {
			t.Fatalf("%q: key %q at %d", doc, m.Key, m.KeyStart)
		}
		checkSpans(t, doc, m.Val, m.KeyStart, v.End-1)
		at = m.Val.End
	}
	for _, e := range v.Elems {
		checkSpans(t, doc, e, at, v.End-1)
		at = e.End
	}
}

// jsonDepth is how deeply valid JSON doc nests.
func jsonDepth(doc []byte) int {
	depth, deepest := 0, 0
	dec := json.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

// duplicateKeys says whether valid JSON doc has an object with a key twice.
func duplicateKeys(doc []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(doc))
	type frame struct {
		keys   map[string]bool
		object bool
		key    bool // the next token is a key
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF || err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].key {
			if k, ok := tok.(string); ok {
				if stack[n-1].keys[k] {
					return true
				}
				stack[n-1].keys[k] = true
				stack[n-1].key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{keys: map[string]bool{}, object: true, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: in an object, a key comes next.
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].key = true
		}
	}
}
