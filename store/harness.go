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

	"dalo/jsonedit"
	"dalo/plan"
	"dalo/providers"
)

// A HarnessEntry is one of dalo's dispatcher entries in a harness's hooks
// file: the JSON the provider table's entry template gives for one native
// event ((*providers.Table).Entry), compact, its members in the template's
// order. What makes it dalo's is its command, at the template's place of
// $command: `<dalo> hook dispatch --provider P --event E`, or the same
// from dalo-hook, `<dalo-hook> dispatch --provider P --event E` (see
// [Dispatcher]). Install records read back hold it compact too, whatever
// spacing the record has.
type HarnessEntry json.RawMessage

// MarshalJSON writes the entry's bytes as they are, and null for none: an
// install record holds exactly the entry dalo wrote into the harness file.
func (e HarnessEntry) MarshalJSON() ([]byte, error) {
	if len(e) == 0 {
		return []byte("null"), nil
	}
	return e, nil
}

// UnmarshalJSON reads an entry back as dalo wrote it: compact, and its
// strings without the HTML escapes (\u0026 for &) that encoding/json adds
// when the install record is written, so that an entry read back is the
// same bytes as the one the table gives.
func (e *HarnessEntry) UnmarshalJSON(data []byte) error {
	var b bytes.Buffer
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := compactEntry(&b, dec); err != nil {
		return fmt.Errorf("harness entry: %w", err)
	}
	*e = b.Bytes()
	return nil
}

// compactEntry writes the next JSON value of dec compactly, its members in
// their order, its strings escaped as the harness configuration is written.
func compactEntry(b *bytes.Buffer, dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'), json.Delim('['):
		b.WriteString(tok.(json.Delim).String())
		obj := tok == json.Delim('{')
		for i := 0; dec.More(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if obj {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				writeJSONString(b, k.(string))
				b.WriteByte(':')
			}
			if err := compactEntry(b, dec); err != nil {
				return err
			}
		}
		end, err := dec.Token()
		if err != nil {
			return err
		}
		b.WriteString(end.(json.Delim).String())
		return nil
	}
	switch v := tok.(type) {
	case string:
		writeJSONString(b, v)
	case json.Number:
		b.WriteString(v.String())
	default: // bool, nil
		m, _ := json.Marshal(v)
		b.Write(m)
	}
	return nil
}

// writeJSONString writes s as a JSON string without HTML escapes.
func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}

// command is the command of e, a dalo entry of the table t's shape, at the
// place of the template's $command; "" when there is none.
func (e HarnessEntry) command(t *providers.Table) string {
	var v any
	if json.Unmarshal(e, &v) != nil {
		return ""
	}
	for _, k := range t.EntryPath(providers.EntryCommand) {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			if len(x) == 0 {
				return ""
			}
			v = x[0] // dalo's entries hold one command
		default:
			return ""
		}
	}
	s, _ := v.(string)
	return s
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
// from the store at home (or name no store: an earlier dalo's), with the
// command at command (the entry template's path to $command), in a file
// the harness (its name) reads as dups says (providers.ReadsLast or
// ReadsNone) when an object holds a key twice.
type owner struct {
	provider, home string
	project        string // the project scope's id; "" for the user's
	harness, dups  string
	command        []string
	// comments: the harness reads the file as JSON with comments.
	comments bool
}

// ownerOf is the owner of t's hook file for the store s.
func (s *Store) ownerOf(t *providers.Table) owner {
	return owner{provider: t.Name, home: s.Dir, project: s.projectID(), harness: t.Harness, dups: t.Config.Hooks.DuplicateKeys.Reads,
		command: t.EntryPath(providers.EntryCommand), comments: t.Config.Comments != nil}
}

// ownedEvent says which event a configuration entry is dalo's entry for, if
// any: one that holds, at the place of the template's command (any element
// of an array on the way), a command that starts a dispatcher
// (parseEntryCommand) for o's provider and store.
func (o owner) ownedEvent(entry *jsonedit.Value) (string, bool) {
	return o.commandAt(entry, o.command)
}

func (o owner) commandAt(v *jsonedit.Value, path []string) (string, bool) {
	if len(path) == 0 {
		if v.Kind != '"' {
			return "", false
		}
		if e, ok := parseEntryCommand(v.Str); ok && e.Provider == o.provider && (e.Home == "" || e.Home == o.home) && e.Project == o.project {
			return e.Event, true
		}
		return "", false
	}
	switch {
	case v.Kind == '{' && path[0] != "":
		if m := v.Member(path[0]); m != nil {
			return o.commandAt(m.Val, path[1:])
		}
	case v.Kind == '[' && path[0] == "":
		for _, e := range v.Elems {
			if ev, ok := o.commandAt(e, path[1:]); ok {
				return ev, true
			}
		}
	}
	return "", false
}

// A ConfigError is a harness configuration dalo cannot edit safely.
type ConfigError struct {
	File string
	Msg  string
}

// Error names the file first, the way every error about a user's file does.
func (e *ConfigError) Error() string { return e.File + ": " + e.Msg }

// found is one of dalo's entries in a document.
type found struct {
	event    string
	arr      *jsonedit.Value // the event's array
	index    int
	val      *jsonedit.Value
	memberOf *jsonedit.Value // the hooks object
}

// scanConfig scans doc and finds the entries of o's in it. It refuses a
// document the harness would read otherwise than dalo: one with a key twice
// in an object dalo reads to edit (the top level, hooks, one of its
// entries) when the harness keeps the last copy, where dalo would edit the
// first; anywhere in it when the harness then reads none of its hooks.
func (o owner) scanConfig(file string, doc []byte) (top, hooks *jsonedit.Value, owned []found, err error) {
	return o.scanConfigWith(false, file, doc)
}

// scanConfigWith is scanConfig; checked says doc was scanned before and
// since changed only by dalo's splices.
func (o owner) scanConfigWith(checked bool, file string, doc []byte) (top, hooks *jsonedit.Value, owned []found, err error) {
	scan := jsonedit.ScanMember
	if checked {
		scan = jsonedit.RescanMember
	}
	top, err = scan(doc, "hooks", o.comments)
	if err != nil {
		return nil, nil, nil, &ConfigError{file, err.Error()}
	}
	if top.Kind != '{' {
		return nil, nil, nil, &ConfigError{file, "the top level is not a JSON object"}
	}
	if o.dups == providers.ReadsNone {
		if d := jsonedit.AnyDuplicate(top); d != nil {
			return nil, nil, nil, o.duplicateError(file, doc, d)
		}
	}
	if _, _, ok := top.Duplicate(); ok {
		return nil, nil, nil, o.duplicateError(file, doc, top)
	}
	m := top.Member("hooks")
	if m == nil {
		return top, nil, nil, nil
	}
	if m.Val.Kind != '{' {
		l, c := jsonedit.Position(doc, m.Val.Start)
		return nil, nil, nil, &ConfigError{file, fmt.Sprintf("%d:%d: hooks is not a JSON object", l, c)}
	}
	hooks = m.Val
	if _, _, ok := hooks.Duplicate(); ok {
		return nil, nil, nil, o.duplicateError(file, doc, hooks)
	}
	for _, ev := range hooks.Members {
		if ev.Val.Kind != '[' {
			continue
		}
		for i, e := range ev.Val.Elems {
			if got, ok := o.ownedEvent(e); ok {
				if d := jsonedit.AnyDuplicate(e); d != nil {
					return nil, nil, nil, o.duplicateError(file, doc, d)
				}
				if got != ev.Key {
					l, c := jsonedit.Position(doc, e.Start)
					return nil, nil, nil, &ConfigError{file, fmt.Sprintf("%d:%d: dalo's entry for %s is under hooks.%s; move or delete it", l, c, got, ev.Key)}
				}
				owned = append(owned, found{event: ev.Key, arr: ev.Val, index: i, val: e, memberOf: hooks})
			}
		}
	}
	return top, hooks, owned, nil
}

// duplicateError reports the first key that d, an object of doc, holds
// twice, with the position of both copies and what the harness makes of it.
func (o owner) duplicateError(file string, doc []byte, d *jsonedit.Value) error {
	first, again, _ := d.Duplicate()
	l1, c1 := jsonedit.Position(doc, first.KeyStart)
	l2, c2 := jsonedit.Position(doc, again.KeyStart)
	reads := "reads only the last copy, and dalo would edit the first"
	if o.dups == providers.ReadsNone {
		reads = "then reads none of this file's hooks"
	}
	harness := o.harness
	if harness == "" {
		harness = "the harness"
	}
	return &ConfigError{file, fmt.Sprintf("%d:%d: the key %q appears twice, here and at %s:%d:%d; %s %s: keep one copy, then run dalo again", l1, c1, first.Key, file, l2, c2, harness, reads)}
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
	if err := o.checkOwned(file, doc, st, want); err != nil {
		return nil, st, err
	}
	events := make([]string, 0, len(want))
	for ev := range want {
		events = append(events, ev)
	}
	sort.Strings(events)
	// One edit at a time, each on a fresh scan: edits never overlap.
	edit := func(sp jsonedit.Splice) { doc = jsonedit.Apply(doc, []jsonedit.Splice{sp}) }
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
				if !sameEntry(doc[f.val.Start:f.val.End], w) {
					l := jsonedit.ContainerLayout(doc, f.arr)
					ind, own := jsonedit.LineIndent(doc, f.val.Start)
					if !own {
						ind = l.Child
					}
					text := jsonedit.Render(w, ind, jsonedit.UnitOf(l, doc), true)
					if !l.Multiline {
						text = jsonedit.Inline(doc, w)
					}
					edit(jsonedit.Splice{Start: f.val.Start, End: f.val.End, Text: text})
					done = true
					break
				}
				continue
			}
			if len(f.arr.Elems) == 1 && st.Created[f.event] {
				i := memberIndex(f.memberOf, f.event)
				interior := ""
				if len(f.memberOf.Members) == 1 {
					// Only the last member's removal leaves what was
					// between the braces before dalo added any.
					interior = takeInterior(st, "hooks")
				}
				edit(jsonedit.RemoveChild(f.memberOf, i, interior))
				delete(st.Created, f.event)
			} else {
				edit(jsonedit.RemoveChild(f.arr, f.index, takeInterior(st, f.event)))
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
				edit(jsonedit.InsertMember(doc, top, "hooks", map[string][]HarnessEntry{ev: {w}}))
				st.CreatedHooks = true
				st.Created[ev] = true
			case hooks.Member(ev) == nil:
				keepInterior(st, "hooks", doc, hooks)
				edit(jsonedit.InsertMember(doc, hooks, ev, []HarnessEntry{w}))
				st.Created[ev] = true
			default:
				arr := hooks.Member(ev).Val
				if arr.Kind != '[' {
					l, c := jsonedit.Position(doc, arr.Start)
					return nil, st, &ConfigError{file, fmt.Sprintf("%d:%d: hooks.%s is not a JSON array", l, c, ev)}
				}
				keepInterior(st, ev, doc, arr)
				edit(jsonedit.AppendElem(doc, arr, w))
			}
			done = true
			break
		}
		if done {
			continue
		}
		// Tidy what dalo created and no longer needs.
		if hooks != nil && len(hooks.Members) == 0 && st.CreatedHooks && len(want) == 0 {
			edit(jsonedit.RemoveChild(top, memberIndex(top, "hooks"), takeInterior(st, ".")))
			st.CreatedHooks = false
			continue
		}
		if st.CreatedFile && len(want) == 0 && len(top.Members) == 0 {
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

// checkOwned says whether every entry of dalo's in the file is what dalo
// wrote (st) or what it would write anyway (want); else a ConfigError.
func (o owner) checkOwned(file string, doc []byte, st HarnessState, want map[string]HarnessEntry) error {
	_, _, owned, err := o.scanConfig(file, doc)
	if err != nil {
		return err
	}
	for _, f := range owned {
		rec, ok := st.Entries[f.event]
		if !ok || !sameEntry(doc[f.val.Start:f.val.End], rec) {
			if w, ok := want[f.event]; ok && sameEntry(doc[f.val.Start:f.val.End], w) {
				continue // what dalo would write anyway
			}
			l, c := jsonedit.Position(doc, f.val.Start)
			return &ConfigError{file, fmt.Sprintf("%d:%d: dalo's %s entry was changed since dalo wrote it; restore it or delete it, then run dalo again", l, c, f.event)}
		}
	}
	return nil
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
func keepInterior(st HarnessState, key string, doc []byte, c *jsonedit.Value) {
	if len(c.Members) == 0 && len(c.Elems) == 0 {
		st.Interior[key] = string(doc[c.Start+1 : c.End-1])
	}
}

func takeInterior(st HarnessState, key string) string {
	in := st.Interior[key]
	delete(st.Interior, key)
	return in
}

func memberIndex(obj *jsonedit.Value, key string) int {
	for i, m := range obj.Members {
		if m.Key == key {
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
	if data == nil && old == nil {
		// Nothing there, nothing to write: a package without hooks on a
		// harness whose configuration directory does not exist yet.
		return nil
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
