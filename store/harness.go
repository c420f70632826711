package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"

	"dalo/providers"
	"dalo/store/plan"
)

// A HarnessEntry is one dispatcher entry of a harness configuration: the
// shape both harnesses read, {"matcher": "*", "hooks": [{"type": "command",
// "command": "...", "timeout": 10}]}. The command is what makes it dalo's:
// `<dalo> hook dispatch --provider P --event E`, or the same from dalo-hook,
// `<dalo-hook> dispatch --provider P --event E` (see [Dispatcher]).
type HarnessEntry struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []HarnessHook `json:"hooks"`
}

// A HarnessHook is the command of an entry. Its timeout is written under
// the key the provider table names (timeout.field), so that a harness
// whose key differs needs a table, not Go: the JSON is
// {"type": ..., "command": ..., TimeoutField: Timeout}, in that order, and
// reading it back takes the one other member as the timeout.
type HarnessHook struct {
	Type         string
	Command      string
	Timeout      int    // in the table's unit
	TimeoutField string // the native key of Timeout
}

func (h HarnessHook) MarshalJSON() ([]byte, error) {
	if h.TimeoutField == "" || h.TimeoutField == "type" || h.TimeoutField == "command" {
		return nil, fmt.Errorf("harness hook %q: timeout field %q", h.Command, h.TimeoutField)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as the rest of the entry is written
	b.WriteString(`{"type":`)
	enc.Encode(h.Type)
	b.WriteString(`,"command":`)
	enc.Encode(h.Command)
	b.WriteString(",")
	enc.Encode(h.TimeoutField)
	b.WriteString(":")
	enc.Encode(h.Timeout)
	b.WriteString("}")
	return b.Bytes(), nil
}

func (h *HarnessHook) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*h = HarnessHook{}
	for k, v := range m {
		var err error
		switch k {
		case "type":
			err = json.Unmarshal(v, &h.Type)
		case "command":
			err = json.Unmarshal(v, &h.Command)
		default:
			if h.TimeoutField != "" {
				return fmt.Errorf("harness hook: members %s and %s; want one timeout", h.TimeoutField, k)
			}
			h.TimeoutField = k
			err = json.Unmarshal(v, &h.Timeout)
		}
		if err != nil {
			return fmt.Errorf("harness hook %s: %w", k, err)
		}
	}
	if h.TimeoutField == "" {
		return errors.New("harness hook: no timeout")
	}
	return nil
}

// HarnessState records what dalo wrote into one harness configuration file,
// so that it removes exactly that and notices when the user changed it.
type HarnessState struct {
	File        string `json:"file"`
	CreatedFile bool   `json:"created_file,omitempty"`
	// CreatedDir is the outermost directory above File that dalo created
	// with it; removing the file removes those directories too, if empty.
	CreatedDir   string                  `json:"created_dir,omitempty"`
	CreatedHooks bool                    `json:"created_hooks,omitempty"`
	Entries      map[string]HarnessEntry `json:"entries"`        // native event → entry as written
	Created      map[string]bool         `json:"created_events"` // events whose key dalo added
	// Interior is the text that was between the brackets of an empty
	// container before dalo added to it ("." the document, "hooks", or an
	// event), so that removing dalo's entry restores it byte for byte.
	Interior map[string]string `json:"interior,omitempty"`
	// Trust is the harness trust dalo recorded for its entries (install
	// --trust), by native event: what remove takes back, and what doctor
	// compares the harness's trust with.
	Trust map[string]TrustRecord `json:"trust,omitempty"`
	// TrustFileCreated says dalo created the harness's trust file for its
	// trust: once none of dalo's is left in it and nothing else, it goes.
	TrustFileCreated bool `json:"trust_file_created,omitempty"`
}

// An owner says whose entries of a harness configuration are dalo's, and
// how the harness reads the file: the entries of provider that dispatch
// from the store at home (or name no store: an earlier dalo's), in a file
// the harness (its name) reads as dups says (providers.ReadsLast or
// ReadsNone) when an object holds a key twice.
type owner struct {
	provider, home string
	harness, dups  string
	// comments: the harness reads the file as JSON with comments.
	comments bool
}

// ownerOf is the owner of t's hook file for the store s.
func (s *Store) ownerOf(t *providers.Table) owner {
	return owner{provider: t.Name, home: s.Dir, harness: t.Harness, dups: t.Config.Hooks.DuplicateKeys.Reads,
		comments: t.Config.Comments != nil}
}

// ownedEvent says which event a configuration entry is dalo's entry for, if
// any: an object whose hooks hold one command that starts a dispatcher
// (parseEntryCommand) for o's provider and store.
func (o owner) ownedEvent(entry *jvalue) (string, bool) {
	if entry.kind != '{' {
		return "", false
	}
	hs := entry.member("hooks")
	if hs == nil || hs.val.kind != '[' {
		return "", false
	}
	for _, h := range hs.val.elems {
		if h.kind != '{' {
			continue
		}
		c := h.member("command")
		if c == nil || c.val.kind != '"' {
			continue
		}
		if e, ok := parseEntryCommand(c.val.str); ok && e.Provider == o.provider && (e.Home == "" || e.Home == o.home) {
			return e.Event, true
		}
	}
	return "", false
}

// A ConfigError is a harness configuration dalo cannot edit safely.
type ConfigError struct {
	File string
	Msg  string
}

func (e *ConfigError) Error() string { return e.File + ": " + e.Msg }

// found is one of dalo's entries in a document.
type found struct {
	event    string
	arr      *jvalue // the event's array
	index    int
	val      *jvalue
	memberOf *jvalue // the hooks object
}

// scanConfig scans doc and finds the entries of o's in it. It refuses a
// document the harness would read otherwise than dalo: one with a key twice
// in an object dalo reads to edit (the top level, hooks, one of its
// entries) when the harness keeps the last copy, where dalo would edit the
// first; anywhere in it when the harness then reads none of its hooks.
func (o owner) scanConfig(file string, doc []byte) (top, hooks *jvalue, owned []found, err error) {
	return o.scanConfigWith(false, file, doc)
}

// scanConfigWith is scanConfig; checked says doc was scanned before and
// since changed only by dalo's splices.
func (o owner) scanConfigWith(checked bool, file string, doc []byte) (top, hooks *jvalue, owned []found, err error) {
	top, err = scanConfigJSON(doc, o.comments, checked)
	if err != nil {
		return nil, nil, nil, &ConfigError{file, err.Error()}
	}
	if top.kind != '{' {
		return nil, nil, nil, &ConfigError{file, "the top level is not a JSON object"}
	}
	if o.dups == providers.ReadsNone {
		if d := anyDuplicate(top); d != nil {
			return nil, nil, nil, o.duplicateError(file, doc, d)
		}
	}
	if _, _, ok := top.duplicate(); ok {
		return nil, nil, nil, o.duplicateError(file, doc, top)
	}
	m := top.member("hooks")
	if m == nil {
		return top, nil, nil, nil
	}
	if m.val.kind != '{' {
		l, c := position(doc, m.val.start)
		return nil, nil, nil, &ConfigError{file, fmt.Sprintf("%d:%d: hooks is not a JSON object", l, c)}
	}
	hooks = m.val
	if _, _, ok := hooks.duplicate(); ok {
		return nil, nil, nil, o.duplicateError(file, doc, hooks)
	}
	for _, ev := range hooks.members {
		if ev.val.kind != '[' {
			continue
		}
		for i, e := range ev.val.elems {
			if got, ok := o.ownedEvent(e); ok {
				if d := anyDuplicate(e); d != nil {
					return nil, nil, nil, o.duplicateError(file, doc, d)
				}
				if got != ev.key {
					l, c := position(doc, e.start)
					return nil, nil, nil, &ConfigError{file, fmt.Sprintf("%d:%d: dalo's entry for %s is under hooks.%s; move or delete it", l, c, got, ev.key)}
				}
				owned = append(owned, found{event: ev.key, arr: ev.val, index: i, val: e, memberOf: hooks})
			}
		}
	}
	return top, hooks, owned, nil
}

// duplicateError reports the first key that d, an object of doc, holds
// twice, with the position of both copies and what the harness makes of it.
func (o owner) duplicateError(file string, doc []byte, d *jvalue) error {
	first, again, _ := d.duplicate()
	l1, c1 := position(doc, first.keyStart)
	l2, c2 := position(doc, again.keyStart)
	reads := "reads only the last copy, and dalo would edit the first"
	if o.dups == providers.ReadsNone {
		reads = "then reads none of this file's hooks"
	}
	harness := o.harness
	if harness == "" {
		harness = "the harness"
	}
	return &ConfigError{file, fmt.Sprintf("%d:%d: the key %q appears twice, here and at %s:%d:%d; %s %s: keep one copy, then run dalo again", l1, c1, first.key, file, l2, c2, harness, reads)}
}

// sameEntry says whether the entry text in doc means entry.
func sameEntry(text []byte, e HarnessEntry) bool {
	var a, b any
	if json.Unmarshal(text, &a) != nil {
		return false
	}
	json.Unmarshal(mustJSON(e), &b)
	return reflect.DeepEqual(a, b)
}

// editConfig computes the configuration text that holds exactly the
// entries want (native event → entry) of dalo's for provider, from doc
// (nil: the file does not exist) and what dalo wrote before (st). It
// refuses when one of dalo's entries was changed since dalo wrote it. It
// returns nil bytes when the file should be deleted (dalo created it and
// nothing else is left in it).
func (o owner) editConfig(file string, doc []byte, st HarnessState, want map[string]HarnessEntry) ([]byte, HarnessState, error) {
	// Its own copies: the caller's st still describes the file as it is
	// (install records both until the new file is written).
	st.Entries = cloneMap(st.Entries)
	st.Created = cloneMap(st.Created)
	st.Interior = cloneMap(st.Interior)
	st.File = file
	if doc == nil {
		if len(want) == 0 {
			return nil, HarnessState{File: file}, nil
		}
		doc = []byte("{\n}\n")
		st = HarnessState{File: file, CreatedFile: true, Entries: map[string]HarnessEntry{}, Created: map[string]bool{}, Interior: map[string]string{}}
	}
	// Every entry of dalo's in the file must be what dalo wrote.
	_, _, owned, err := o.scanConfig(file, doc)
	if err != nil {
		return nil, st, err
	}
	for _, f := range owned {
		rec, ok := st.Entries[f.event]
		if !ok || !sameEntry(doc[f.val.start:f.val.end], rec) {
			if w, ok := want[f.event]; ok && sameEntry(doc[f.val.start:f.val.end], w) {
				continue // what dalo would write anyway
			}
			l, c := position(doc, f.val.start)
			return nil, st, &ConfigError{file, fmt.Sprintf("%d:%d: dalo's %s entry was changed since dalo wrote it; restore it or delete it, then run dalo again", l, c, f.event)}
		}
	}
	events := make([]string, 0, len(want))
	for ev := range want {
		events = append(events, ev)
	}
	sort.Strings(events)
	// One edit at a time, each on a fresh scan: edits never overlap.
	edit := func(sp splice) { doc = applySplices(doc, []splice{sp}) }
	for {
		// Scanned whole above; since, only dalo's own splices changed it.
		top, hooks, owned, err := o.scanConfigWith(true, file, doc)
		if err != nil {
			return nil, st, err
		}
		// Remove what is no longer wanted, and duplicates.
		done := false
		seen := map[string]bool{}
		for _, f := range owned {
			w, wanted := want[f.event]
			if wanted && !seen[f.event] {
				seen[f.event] = true
				if !sameEntry(doc[f.val.start:f.val.end], w) {
					l := containerLayout(doc, f.arr)
					ind, own := lineIndent(doc, f.val.start)
					if !own {
						ind = l.child
					}
					text := render(w, ind, unitOf(l, doc), true)
					if !l.multiline {
						text = inline(doc, w)
					}
					edit(splice{f.val.start, f.val.end, text})
					done = true
					break
				}
				continue
			}
			if len(f.arr.elems) == 1 && st.Created[f.event] {
				i := memberIndex(f.memberOf, f.event)
				interior := ""
				if len(f.memberOf.members) == 1 {
					// Only the last member's removal leaves what was
					// between the braces before dalo added any.
					interior = takeInterior(st, "hooks")
				}
				edit(removeChild(f.memberOf, i, interior))
				delete(st.Created, f.event)
			} else {
				edit(removeChild(f.arr, f.index, takeInterior(st, f.event)))
			}
			done = true
			break
		}
		if done {
			continue
		}
		// Add what is missing.
		for _, ev := range events {
			if seen[ev] {
				continue
			}
			w := want[ev]
			switch {
			case hooks == nil:
				keepInterior(st, ".", doc, top)
				edit(insertMember(doc, top, "hooks", map[string][]HarnessEntry{ev: {w}}))
				st.CreatedHooks = true
				st.Created[ev] = true
			case hooks.member(ev) == nil:
				keepInterior(st, "hooks", doc, hooks)
				edit(insertMember(doc, hooks, ev, []HarnessEntry{w}))
				st.Created[ev] = true
			default:
				arr := hooks.member(ev).val
				if arr.kind != '[' {
					l, c := position(doc, arr.start)
					return nil, st, &ConfigError{file, fmt.Sprintf("%d:%d: hooks.%s is not a JSON array", l, c, ev)}
				}
				keepInterior(st, ev, doc, arr)
				edit(appendElem(doc, arr, w))
			}
			done = true
			break
		}
		if done {
			continue
		}
		// Tidy what dalo created and no longer needs.
		if hooks != nil && len(hooks.members) == 0 && st.CreatedHooks && len(want) == 0 {
			edit(removeChild(top, memberIndex(top, "hooks"), takeInterior(st, ".")))
			st.CreatedHooks = false
			continue
		}
		if st.CreatedFile && len(want) == 0 && len(top.members) == 0 {
			return nil, HarnessState{File: file}, nil
		}
		break
	}
	st.Entries = map[string]HarnessEntry{}
	for ev, w := range want {
		st.Entries[ev] = w
	}
	return doc, st, nil
}

// cloneMap copies m; nil gives an empty map.
func cloneMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// keepInterior remembers what is inside container c when it is empty.
func keepInterior(st HarnessState, key string, doc []byte, c *jvalue) {
	if len(c.members) == 0 && len(c.elems) == 0 {
		st.Interior[key] = string(doc[c.start+1 : c.end-1])
	}
}

func takeInterior(st HarnessState, key string) string {
	in := st.Interior[key]
	delete(st.Interior, key)
	return in
}

func memberIndex(obj *jvalue, key string) int {
	for i, m := range obj.members {
		if m.key == key {
			return i
		}
	}
	return -1
}

// configFile resolves the harness hooks configuration of table t, through
// a symlink (a dotfile manager's link stays a link).
func configFile(t *providers.Table) (string, error) {
	p, err := t.Path(t.Config.Hooks.Location, os.Getenv)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r, nil
	}
	return p, nil
}

// readConfig reads a harness configuration with readUserFile; nil when it
// does not exist. One dalo must not replace (read-only, hard links) is
// refused as an instruction target is (writableUserFile).
func readConfig(file string) ([]byte, error) {
	data, _, err := readUserFile(file, "", writableUserFile)
	return data, err
}

// writeConfig replaces file with data (or deletes it when data is nil),
// unless the file changed since it was read as old: the user may be
// editing it at this moment, and their edit wins.
func writeConfig(file string, old, data []byte) error {
	now, err := readConfig(file)
	if err != nil {
		return err
	}
	if string(now) != string(old) || (now == nil) != (old == nil) {
		return &ConfigError{file, "changed while dalo was editing it; run dalo again"}
	}
	if data == nil {
		if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return plan.SyncDir(filepath.Dir(file))
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	return writeFile(file, data, 0o600)
}
