// Package hooksfile finds, adds and removes dalo's entries in a harness's
// hooks file, byte-preserving (with package jsonedit), and reads what in
// the user's settings turns hooks off, as the provider table says the
// harness reads them. It takes and returns bytes: package store reads and
// writes the files, under its lock, and keeps each file's [Record] in its
// install records.
//
// An entry is dalo's by its command ([Command]): one that starts a
// dispatcher for the provider and for the store (and project scope) doing
// the edit, or for no store at all (an earlier dalo's, which the next
// install rewrites). Everything else in the file is the user's, and stays
// as it is, byte for byte.
package hooksfile

import (
	"fmt"
	"sort"
	"sync/atomic"

	"dalo/jsonedit"
	"dalo/providers"
)

// An Owner says whose entries of a harness configuration are dalo's, and
// how the harness reads the file: the entries of provider that dispatch
// from the store at home (or name no store: an earlier dalo's), with the
// command at command (the entry template's path to $command), in a file
// the harness (its name) reads as dups says (providers.ReadsLast or
// ReadsNone) when an object holds a key twice.
type Owner struct {
	provider, home string
	project        string // the project scope's id; "" for the user's
	harness, dups  string
	command        []string
	// comments: the harness reads the file as JSON with comments.
	comments bool
}

// OwnerOf is the owner of t's hooks file for the store at home and the
// project scope project ("" for the user's).
func OwnerOf(t *providers.Table, home, project string) Owner {
	return Owner{provider: t.Name, home: home, project: project, harness: t.Harness, dups: t.Config.Hooks.DuplicateKeys.Reads,
		command: t.EntryPath(providers.EntryCommand), comments: t.Config.Comments != nil}
}

// Owns says which event a configuration entry is dalo's entry for, if
// any: one that holds, at the place of the template's command (any element
// of an array on the way), a command that starts a dispatcher
// (ParseCommand) for o's provider and store.
func (o Owner) Owns(entry *jsonedit.Value) (event string, ok bool) {
	return o.commandAt(entry, o.command)
}

func (o Owner) commandAt(v *jsonedit.Value, path []string) (string, bool) {
	if len(path) == 0 {
		if v.Kind != '"' {
			return "", false
		}
		if e, ok := ParseCommand(v.Str); ok && e.Provider == o.provider && (e.Home == "" || e.Home == o.home) && e.Project == o.project {
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

// An Error is a harness configuration dalo cannot edit safely.
type Error struct {
	File string
	Msg  string
}

// Error names the file first, the way every error about a user's file does.
func (e *Error) Error() string { return e.File + ": " + e.Msg }

// Found is one of dalo's entries in a document: Val, element Index of the
// array of Event under hooks.
type Found struct {
	Event    string
	Index    int
	Val      *jsonedit.Value
	arr      *jsonedit.Value // the event's array
	memberOf *jsonedit.Value // the hooks object
}

// scansMade counts the scans of whole documents: a test holds an edit
// to a few, whatever it adds.
var scansMade atomic.Int64

// Scan scans doc and finds the entries of o's in it. It refuses a
// document the harness would read otherwise than dalo: one with a key twice
// in an object dalo reads to edit (the top level, hooks, one of its
// entries) when the harness keeps the last copy, where dalo would edit the
// first; anywhere in it when the harness then reads none of its hooks.
func (o Owner) Scan(file string, doc []byte) (top, hooks *jsonedit.Value, owned []Found, err error) {
	return o.scanWith(false, file, doc)
}

// scanWith is Scan; checked says doc was scanned before and since changed
// only by dalo's splices.
func (o Owner) scanWith(checked bool, file string, doc []byte) (top, hooks *jsonedit.Value, owned []Found, err error) {
	scansMade.Add(1)
	scan := jsonedit.ScanMember
	if checked {
		scan = jsonedit.RescanMember
	}
	top, err = scan(doc, "hooks", o.comments)
	if err != nil {
		return nil, nil, nil, &Error{file, err.Error()}
	}
	if top.Kind != '{' {
		return nil, nil, nil, &Error{file, "the top level is not a JSON object"}
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
		return nil, nil, nil, &Error{file, fmt.Sprintf("%d:%d: hooks is not a JSON object", l, c)}
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
			if got, ok := o.Owns(e); ok {
				if d := jsonedit.AnyDuplicate(e); d != nil {
					return nil, nil, nil, o.duplicateError(file, doc, d)
				}
				if got != ev.Key {
					l, c := jsonedit.Position(doc, e.Start)
					return nil, nil, nil, &Error{file, fmt.Sprintf("%d:%d: dalo's entry for %s is under hooks.%s; move or delete it", l, c, got, ev.Key)}
				}
				owned = append(owned, Found{Event: ev.Key, arr: ev.Val, Index: i, Val: e, memberOf: hooks})
			}
		}
	}
	return top, hooks, owned, nil
}

// duplicateError reports the first key that d, an object of doc, holds
// twice, with the position of both copies and what the harness makes of it.
func (o Owner) duplicateError(file string, doc []byte, d *jsonedit.Value) error {
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
	return &Error{file, fmt.Sprintf("%d:%d: the key %q appears twice, here and at %s:%d:%d; %s %s: keep one copy, then run dalo again", l1, c1, first.Key, file, l2, c2, harness, reads)}
}

// Edit computes the configuration text that holds exactly the entries
// want (native event → entry) of dalo's for provider, from doc (nil: the
// file does not exist) and what dalo wrote before (st). It refuses when
// one of dalo's entries was changed since dalo wrote it. It returns nil
// bytes when the file should be deleted (dalo created it and nothing else
// is left in it). The record it returns is a new one, nothing of st's
// kept, when doc is nil or the text is.
func (o Owner) Edit(file string, doc []byte, st Record, want map[string]Entry) ([]byte, Record, error) {
	// Its own copies: the caller's st still describes the file as it is
	// (install records both until the new file is written).
	st.Entries = cloneMap(st.Entries)
	st.Created = cloneMap(st.Created)
	st.Interior = cloneMap(st.Interior)
	st.File = file
	if doc == nil {
		if len(want) == 0 {
			return nil, Record{File: file}, nil
		}
		doc = []byte("{\n}\n")
		st = Record{File: file, CreatedFile: true, Entries: map[string]Entry{}, Created: map[string]bool{}, Interior: map[string]string{}}
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
		top, hooks, owned, err := o.scanWith(true, file, doc)
		if err != nil {
			return nil, st, err
		}
		sp, ok, seen := removal(doc, &st, want, top, hooks, owned)
		if ok {
			edit(sp)
			continue
		}
		sp, ok, err = addition(file, doc, &st, want, events, seen, top, hooks)
		if err != nil {
			return nil, st, err
		}
		if ok {
			edit(sp)
			continue
		}
		// Tidy what dalo created and no longer needs.
		if hooks != nil && len(hooks.Members) == 0 && st.CreatedHooks && len(want) == 0 {
			edit(jsonedit.RemoveChild(top, memberIndex(top, "hooks"), takeInterior(st, ".")))
			st.CreatedHooks = false
			continue
		}
		if st.CreatedFile && len(want) == 0 && len(top.Members) == 0 {
			return nil, Record{File: file}, nil
		}
		break
	}
	st.Entries = map[string]Entry{}
	for ev, w := range want {
		st.Entries[ev] = w
	}
	return doc, st, nil
}

// removal is the next edit that takes out or rewrites an entry of dalo's
// (owned) that is not as want has it, and which events want has an entry
// of dalo's for already (seen).
func removal(doc []byte, st *Record, want map[string]Entry, top, hooks *jsonedit.Value, owned []Found) (sp jsonedit.Splice, ok bool, seen map[string]bool) {
	seen = map[string]bool{}
	if len(want) == 0 && st.CreatedHooks && onlyCreated(*st, hooks, owned) {
		// The whole hooks object at once, as removing its members one
		// at a time and then it leaves the file: each edit rescans it.
		for _, f := range owned {
			delete(st.Created, f.Event)
		}
		takeInterior(*st, "hooks")
		st.CreatedHooks = false
		return jsonedit.RemoveChild(top, memberIndex(top, "hooks"), takeInterior(*st, ".")), true, seen
	}
	for _, f := range owned {
		w, wanted := want[f.Event]
		if wanted && !seen[f.Event] {
			seen[f.Event] = true
			if Same(doc[f.Val.Start:f.Val.End], w) {
				continue
			}
			l := jsonedit.ContainerLayout(doc, f.arr)
			ind, own := jsonedit.LineIndent(doc, f.Val.Start)
			if !own {
				ind = l.Child
			}
			text := jsonedit.Render(w, ind, jsonedit.UnitOf(l, doc), true)
			if !l.Multiline {
				text = jsonedit.Inline(doc, w)
			}
			return jsonedit.Splice{Start: f.Val.Start, End: f.Val.End, Text: text}, true, seen
		}
		if len(f.arr.Elems) == 1 && st.Created[f.Event] {
			i := memberIndex(f.memberOf, f.Event)
			interior := ""
			if len(f.memberOf.Members) == 1 {
				// Only the last member's removal leaves what was
				// between the braces before dalo added any.
				interior = takeInterior(*st, "hooks")
			}
			delete(st.Created, f.Event)
			return jsonedit.RemoveChild(f.memberOf, i, interior), true, seen
		}
		return jsonedit.RemoveChild(f.arr, f.Index, takeInterior(*st, f.Event)), true, seen
	}
	return jsonedit.Splice{}, false, seen
}

// onlyCreated reports whether hooks holds nothing but events dalo created,
// each holding only its entry (owned).
func onlyCreated(st Record, hooks *jsonedit.Value, owned []Found) bool {
	if hooks == nil || len(owned) != len(hooks.Members) {
		return false
	}
	events := map[string]bool{}
	for _, f := range owned {
		if len(f.arr.Elems) != 1 || !st.Created[f.Event] || events[f.Event] {
			return false
		}
		events[f.Event] = true
	}
	return true
}

// addition is the next edit that adds an entry want has and the file
// lacks (not seen).
func addition(file string, doc []byte, st *Record, want map[string]Entry, events []string, seen map[string]bool, top, hooks *jsonedit.Value) (jsonedit.Splice, bool, error) {
	for _, ev := range events {
		if seen[ev] {
			continue
		}
		w := want[ev]
		switch {
		case hooks == nil:
			// Every event at once, in one object rendered as the events
			// would be added one by one, in a file written on several
			// lines: each edit rescans the whole file, and a
			// settings.json of 50 MB given seven events was scanned nine
			// times. On one line, how a member is written depends on
			// those written before it.
			keepInterior(*st, ".", doc, top)
			add := map[string][]Entry{ev: {w}}
			if jsonedit.ContainerLayout(doc, top).Multiline {
				for _, e := range events {
					add[e] = []Entry{want[e]}
				}
			}
			for e := range add {
				st.Created[e] = true
			}
			st.CreatedHooks = true
			return jsonedit.InsertMember(doc, top, "hooks", add), true, nil
		case hooks.Member(ev) == nil:
			keepInterior(*st, "hooks", doc, hooks)
			// Every event missing from hooks at once, where the object
			// is written on several lines.
			var keys []string
			var vals []any
			for _, e := range events {
				if !seen[e] && hooks.Member(e) == nil {
					keys, vals = append(keys, e), append(vals, []Entry{want[e]})
				}
			}
			if len(keys) > 1 {
				if sp, ok := jsonedit.InsertMembers(doc, hooks, keys, vals); ok {
					for _, e := range keys {
						st.Created[e] = true
					}
					return sp, true, nil
				}
			}
			st.Created[ev] = true
			return jsonedit.InsertMember(doc, hooks, ev, []Entry{w}), true, nil
		default:
			arr := hooks.Member(ev).Val
			if arr.Kind != '[' {
				l, c := jsonedit.Position(doc, arr.Start)
				return jsonedit.Splice{}, false, &Error{file, fmt.Sprintf("%d:%d: hooks.%s is not a JSON array", l, c, ev)}
			}
			keepInterior(*st, ev, doc, arr)
			return jsonedit.AppendElem(doc, arr, w), true, nil
		}
	}
	return jsonedit.Splice{}, false, nil
}

// checkOwned says whether every entry of dalo's in the file is what dalo
// wrote (st) or what it would write anyway (want); else an Error.
func (o Owner) checkOwned(file string, doc []byte, st Record, want map[string]Entry) error {
	_, _, owned, err := o.Scan(file, doc)
	if err != nil {
		return err
	}
	for _, f := range owned {
		rec, ok := st.Entries[f.Event]
		if !ok || !Same(doc[f.Val.Start:f.Val.End], rec) {
			if w, ok := want[f.Event]; ok && Same(doc[f.Val.Start:f.Val.End], w) {
				continue // what dalo would write anyway
			}
			l, c := jsonedit.Position(doc, f.Val.Start)
			return &Error{file, fmt.Sprintf("%d:%d: dalo's %s entry was changed since dalo wrote it; restore it or delete it, then run dalo again", l, c, f.Event)}
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
func keepInterior(st Record, key string, doc []byte, c *jsonedit.Value) {
	if len(c.Members) == 0 && len(c.Elems) == 0 {
		st.Interior[key] = string(doc[c.Start+1 : c.End-1])
	}
}

func takeInterior(st Record, key string) string {
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
