package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz targets for what store parses from files the user owns: a harness
// configuration (scanned, then edited by splices) and a file holding
// instruction blocks. Their seed corpora, and whatever a run finds, are
// regression cases under testdata/fuzz.

// FuzzScanJSON: the scanner accepts only JSON, every value it reports is
// the JSON at its offsets, and it accepts the JSON the harnesses read: not
// nested past its limit, in UTF-8 without a byte order mark, without
// duplicate keys (which it may or may not refuse); the skimmed scans of a
// harness configuration agree with it.
func FuzzScanJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkSkimmed(t, doc)
		v, err := scanJSON(doc)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Column < 1 || se.Line > bytes.Count(doc, []byte("\n"))+1 {
				t.Fatalf("%q: error %v is no position in the document", doc, err)
			}
			if json.Valid(doc) && utf8.Valid(doc) && !bytes.HasPrefix(doc, []byte(utf8BOM)) && jsonDepth(doc) <= maxJSONDepth && !duplicateKeys(doc) {
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
func checkSpans(t *testing.T, doc []byte, v *jvalue, lo, hi int) {
	t.Helper()
	if v.start < lo || v.end > hi || v.start >= v.end || !json.Valid(doc[v.start:v.end]) {
		t.Fatalf("%q: value at [%d:%d] outside [%d:%d] or not JSON", doc, v.start, v.end, lo, hi)
	}
	if v.kind == '"' {
		var s string
		if json.Unmarshal(doc[v.start:v.end], &s) != nil || s != v.str {
			t.Fatalf("%q: string at [%d:%d] read as %q", doc, v.start, v.end, v.str)
		}
	}
	at := v.start + 1
	for _, m := range v.members {
		var key string
		if m.keyStart < at || json.NewDecoder(bytes.NewReader(doc[m.keyStart:])).Decode(&key) != nil || key != m.key {
			t.Fatalf("%q: key %q at %d", doc, m.key, m.keyStart)
		}
		checkSpans(t, doc, m.val, m.keyStart, v.end-1)
		at = m.val.end
	}
	for _, e := range v.elems {
		checkSpans(t, doc, e, at, v.end-1)
		at = e.end
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

// FuzzEditConfig: adding dalo's entries to any configuration dalo accepts
// gives JSON holding the user's values and dalo's entries, and nothing
// else; adding them again changes nothing; removing them gives back the
// user's bytes, every one.
func FuzzEditConfig(f *testing.F) {
	want := map[string]HarnessEntry{
		"PreToolUse": entry(dispatchPre, 7, "*"),
		"Stop":       entry(strings.Replace(dispatchPre, "PreToolUse", "Stop", 1), 7, ""),
	}
	f.Add([]byte("// mine\n{\"hooks\": { /* none */ }, \"a\": \"//\" // x\n}"), true)
	f.Fuzz(func(t *testing.T, doc []byte, comments bool) {
		// comments: a harness that reads its settings as JSON with
		// comments (Gemini CLI's); they are whitespace to it.
		o := testOwner("claude")
		o.comments = comments
		plain := func(b []byte) []byte {
			if comments {
				return withoutComments(b)
			}
			return b
		}
		_, _, owned, err := o.scanConfig("settings.json", doc)
		if err != nil || len(owned) > 0 {
			return // refused, or already holding entries of dalo's that no state describes
		}
		got, st, err := o.editConfig("settings.json", doc, HarnessState{}, want)
		if err != nil {
			return
		}
		if !json.Valid(plain(got)) {
			t.Fatalf("%q: edited into %q, not JSON", doc, got)
		}
		again, st2, err := o.editConfig("settings.json", got, st, want)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("%q: editing %q again gave %q (%v)", doc, got, again, err)
		}
		back, _, err := o.editConfig("settings.json", got, st2, nil)
		if err != nil || !bytes.Equal(back, doc) {
			t.Fatalf("%q: removing dalo's entries from %q gave %q (%v), not the user's bytes", doc, got, back, err)
		}
		if duplicateKeys(doc) {
			return // which of two values is the user's is issue 10's
		}
		var before, after map[string]any
		json.Unmarshal(plain(doc), &before)
		json.Unmarshal(plain(got), &after)
		if !reflect.DeepEqual(withoutEntries(after, before, want), before) {
			t.Fatalf("%q: edited into %q, which changes the user's values", doc, got)
		}
	})
}

// withoutEntries is the decoded configuration after without the entries
// of want, and without the hooks object and event arrays before lacked.
func withoutEntries(after, before map[string]any, want map[string]HarnessEntry) map[string]any {
	hooks, _ := after["hooks"].(map[string]any)
	beforeHooks, hadHooks := before["hooks"].(map[string]any)
	for ev, w := range want {
		var we any
		json.Unmarshal(mustJSON(w), &we)
		arr, _ := hooks[ev].([]any)
		var kept []any
		for _, e := range arr {
			if !reflect.DeepEqual(e, we) {
				kept = append(kept, e)
			}
		}
		if _, had := beforeHooks[ev]; had {
			if kept == nil {
				kept = []any{}
			}
			hooks[ev] = kept
		} else {
			delete(hooks, ev)
		}
	}
	if !hadHooks {
		delete(after, "hooks")
	}
	return after
}

// FuzzInstructionBlocks: in any file, the blocks found are where their
// markers are; enabling an instruction of any content writes a block that
// reads back as dalo's and unedited, keeps every other block, is stable,
// and disabling it gives back the file's bytes.
func FuzzInstructionBlocks(f *testing.F) {
	f.Fuzz(func(t *testing.T, data, content []byte) {
		blocks, err := parseBlocks("CLAUDE.md", data)
		var me *MarkerError
		if err != nil && !errors.As(err, &me) {
			t.Fatalf("%q: error %v is no MarkerError", data, err)
		}
		end := 0
		for _, b := range blocks {
			if b.Start < end || b.End > len(data) || !bytes.HasPrefix(data[b.Start:], []byte(beginPrefix)) {
				t.Fatalf("%q: block of %s at [%d:%d]", data, b.ID, b.Start, b.End)
			}
			end = b.End
		}
		in := Instruction{ID: InstructionID{Source: "company", Selector: "design-context"}, Package: "company:review-kit", Content: content}
		e, err := enableBlock("CLAUDE.md", data, in, false)
		if err != nil {
			return
		}
		after, err := parseBlocks("CLAUDE.md", e.After)
		if err != nil {
			t.Fatalf("%q with %q: enabled into %q, which does not parse: %v", data, content, e.After, err)
		}
		var mine *Block
		for _, b := range after {
			if b.ID == in.ID {
				mine = b
			}
		}
		if mine == nil || mine.Edited() || mine.Package != in.Package {
			t.Fatalf("%q with %q: enabled into %q, where the block is %+v", data, content, e.After, mine)
		}
		for _, b := range blocks {
			if b.ID == in.ID {
				continue
			}
			found := false
			for _, a := range after {
				found = found || a.ID == b.ID && bytes.Equal(e.After[a.Start:a.End], data[b.Start:b.End])
			}
			if !found {
				t.Fatalf("%q with %q: enabled into %q, which lost or changed the block of %s", data, content, e.After, b.ID)
			}
		}
		again, err := enableBlock("CLAUDE.md", e.After, in, false)
		if err != nil || again.Action != ActionUnchanged || !bytes.Equal(again.After, e.After) {
			t.Fatalf("%q with %q: enabling again: %v %+v", data, content, err, again)
		}
		if e.Action != ActionAdd || len(blocks) > 0 {
			return // an update or a file with other blocks: the bytes before are not all the user's
		}
		d, err := disableBlock("CLAUDE.md", e.After, in.ID, false, e.NewlineAdded)
		if err != nil || !bytes.Equal(d.After, data) {
			t.Fatalf("%q with %q: enabled into %q, disabled into %q (%v)", data, content, e.After, d.After, err)
		}
	})
}
