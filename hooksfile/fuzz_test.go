package hooksfile

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"dalo/jsonedit"
)

// The fuzz target of the editor of a harness's hooks file (scanned by
// jsonedit, then edited by its splices). Its seed corpus, and whatever a
// run finds, are regression cases under testdata/fuzz.

// FuzzEditConfig: adding dalo's entries to any configuration dalo accepts
// gives JSON holding the user's values and dalo's entries, and nothing
// else, written as adding them one at a time writes them; adding them
// again changes nothing; removing them gives back the
// user's bytes, every one.
func FuzzEditConfig(f *testing.F) {
	want := map[string]Entry{
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
				return jsonedit.WithoutComments(b)
			}
			return b
		}
		_, _, owned, err := o.Scan("settings.json", doc)
		if err != nil || len(owned) > 0 {
			return // refused, or already holding entries of dalo's that no state describes
		}
		got, st, err := o.Edit("settings.json", doc, Record{}, want)
		if err != nil {
			return
		}
		if !json.Valid(plain(got)) {
			t.Fatalf("%q: edited into %q, not JSON", doc, got)
		}
		// Both at once, as one after the other (in the order an edit
		// adds them).
		one, st1, err := o.Edit("settings.json", doc, Record{}, map[string]Entry{"PreToolUse": want["PreToolUse"]})
		if err != nil {
			t.Fatalf("%q: adding one entry: %v", doc, err)
		}
		if two, _, err := o.Edit("settings.json", one, st1, want); err != nil || !bytes.Equal(two, got) {
			t.Fatalf("%q: edited at once into %q, one entry at a time into %q (%v)", doc, got, two, err)
		}
		again, st2, err := o.Edit("settings.json", got, st, want)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("%q: editing %q again gave %q (%v)", doc, got, again, err)
		}
		back, _, err := o.Edit("settings.json", got, st2, nil)
		if err != nil || !bytes.Equal(back, doc) {
			t.Fatalf("%q: removing dalo's entries from %q gave %q (%v), not the user's bytes", doc, got, back, err)
		}
		if v, _ := jsonedit.Scan(plain(doc)); v == nil || jsonedit.AnyDuplicate(v) != nil {
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
func withoutEntries(after, before map[string]any, want map[string]Entry) map[string]any {
	hooks, _ := after["hooks"].(map[string]any)
	beforeHooks, hadHooks := before["hooks"].(map[string]any)
	for ev, w := range want {
		var we any
		json.Unmarshal(w, &we)
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
