package hooksfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"

	"dalo/jsonedit"
	"dalo/providers"
)

// An Off is a setting of the user's or the machine's that keeps the
// harness from running dalo's entries, as the table says the harness
// reads it: a file the harness drops (its table's drop), a switch set
// (its off), a character that keeps it from reading a file at all.
type Off struct {
	File string
	// Why is what doctor says: the file, the key and what the harness
	// does. Fix is what install tells the user to do.
	Why, Fix string
	// Event, when set, is the one event whose entry is off (a list of
	// commands naming it, a drop of that event's hooks); else every
	// entry is.
	Event string
	// Project: the setting is a project's own, in force there only.
	Project bool
}

// A Warning is a settings file the reader could not read as the harness
// does, so it cannot tell what the file sets: doctor's warning.
type Warning struct {
	File, Msg string
}

// Settings reads the settings files a table lists, as the harness reads
// them.
type Settings struct {
	Table  *providers.Table
	Getenv func(string) string
	// Project is the project whose own settings are read, or "".
	Project string
	// Entries are dalo's entries, for a switch that lists commands.
	Entries map[string]Entry
	// Read reads a file (os.ReadFile when nil): install reads the hooks
	// file as it is about to write it.
	Read func(string) ([]byte, error)

	// Warnings are the files Off could not read.
	Warnings []Warning
	docs     map[string]any // decoded, by file; nil for a file not there
}

// Off lists every setting that keeps the harness from running dalo's
// entries, in the table's order: its drop list, then its off list.
func (r *Settings) Off() []Off {
	if r.Read == nil {
		r.Read = os.ReadFile
	}
	r.docs = map[string]any{}
	t := r.Table
	var out []Off
	if hooks, err := t.Path(t.Config.Hooks.Location, r.Getenv); err == nil {
		if o, ok := r.broken(hooks); ok {
			out = append(out, o)
		}
	}
	for _, d := range t.Config.Drop {
		file, where, ok := r.locate(d.Location)
		if !ok || d.OwnFile && !r.holdsEntries(file) {
			continue
		}
		doc, ok := r.decode(file)
		if !ok {
			continue
		}
		for _, v := range d.Violations(doc) {
			ev := ""
			if d.Scope == providers.DropsEvent {
				ev = v.Member
			}
			out = append(out, Off{
				File:    file,
				Event:   ev,
				Why:     fmt.Sprintf("%s%s: %s is %s, where %s accepts %s: %s", where, file, v.Path, v.Got, t.Harness, v.Want, d.Means),
				Fix:     fmt.Sprintf("give %s a value %s accepts (%s), or remove it", v.Path, t.Harness, v.Want),
				Project: d.Location.Root == "project",
			})
		}
	}
	for _, sw := range t.Config.Off {
		file, where, ok := r.locate(sw.Location)
		if !ok {
			continue
		}
		doc, ok := r.decode(file)
		if !ok {
			continue
		}
		v, ok := providers.Lookup(doc, sw.Key)
		if !ok {
			continue
		}
		project := sw.Location.Root == "project"
		if sw.Contains != "" {
			list, _ := v.([]any)
			for _, ev := range slices.Sorted(maps.Keys(r.Entries)) {
				e := r.Entries[ev]
				for _, item := range list {
					if s, _ := item.(string); s != "" && s == e.Command(t) {
						out = append(out, Off{File: file, Event: ev, Project: project,
							Why: fmt.Sprintf("%s%s lists dalo's %s entry in %s: %s", where, file, ev, sw.Key, sw.Means),
							Fix: fmt.Sprintf("take dalo's %s entry out of %s", ev, sw.Key)})
					}
				}
			}
			continue
		}
		if !sw.Sets(v) {
			continue
		}
		if sw.OwnFile && !r.holdsEntries(file) {
			// Only that file's hooks: dalo's entries are elsewhere.
			continue
		}
		if sw.Default {
			// The hook file's own value of the key, when it has one,
			// overrides a default.
			if hooks, err := t.Path(t.Config.Hooks.Location, r.Getenv); err == nil && hooks != file {
				if hd, ok := r.decode(hooks); ok {
					if _, set := providers.Lookup(hd, sw.Key); set {
						continue
					}
				}
			}
		}
		fix := fmt.Sprintf("remove %s from %s", sw.Key, file)
		if sw.Default {
			hooks, _ := t.Path(t.Config.Hooks.Location, r.Getenv)
			fix = fmt.Sprintf("set %s in %s, which overrides this default, or remove it from %s", sw.Key, hooks, file)
		}
		out = append(out, Off{File: file, Project: project,
			Why: fmt.Sprintf("%s%s sets %s to %s: %s", where, file, sw.Key, jsonValue(v), sw.Means),
			Fix: fix})
	}
	return out
}

// holdsEntries says whether file is the hook file dalo's entries are in,
// the table's (the user's, or a project's for a table InProject).
func (r *Settings) holdsEntries(file string) bool {
	hooks, err := r.Table.Path(r.Table.Config.Hooks.Location, r.Getenv)
	return err == nil && filepath.Clean(hooks) == filepath.Clean(file)
}

// locate is the file of l, and how a message places it: a project's own
// is read only when r has a project.
func (r *Settings) locate(l providers.Location) (file, where string, ok bool) {
	if l.Root == "project" {
		if r.Project == "" {
			return "", "", false
		}
		return filepath.Join(r.Project, filepath.FromSlash(l.Path)), "in this project, ", true
	}
	file, err := r.Table.Path(l, r.Getenv)
	if err != nil || l.RootOwned != nil && !rootOwned(file) {
		return "", "", false // the harness skips it
	}
	return file, "", true
}

// rootOwned says whether file and every directory above it belong to root
// and no group or other may write them.
func rootOwned(file string) bool {
	for p := filepath.Clean(file); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}

// decode reads file as the harness does: TOML for a *.toml file, else
// JSON (with comments blanked when the harness reads them so). A file
// that is not there sets nothing; one that does not decode is a warning.
func (r *Settings) decode(file string) (any, bool) {
	if doc, ok := r.docs[file]; ok {
		return doc, doc != nil
	}
	r.docs[file] = nil
	data, err := r.Read(file)
	if err != nil {
		return nil, false
	}
	var doc any
	if strings.HasSuffix(file, ".toml") {
		// TOML allows no byte order mark, but Codex reads past one.
		var m map[string]any
		err = toml.Unmarshal(bytes.TrimPrefix(data, []byte("\ufeff")), &m)
		doc = m
	} else {
		if r.Table.Config.Comments != nil && jsonedit.ScanStrings(data, true, func([]byte) {}) == nil {
			data = jsonedit.WithoutComments(data)
		}
		doc, err = r.decodeJSON(data)
	}
	if err != nil {
		r.Warnings = append(r.Warnings, Warning{file, fmt.Sprintf("doctor cannot read it as %s does (%v), so cannot tell what it sets", r.Table.Harness, err)})
		return nil, false
	}
	r.docs[file] = doc
	return doc, true
}

// decodeJSON is what json.Unmarshal decodes data into, but for the
// objects and arrays at the top level that no rule of the table reads
// inside (Config.ReadsInside): each of those is left as its JSON, a json.RawMessage of data,
// which providers.TypeOf, Lookup and a violation's text read as its
// decoded value. A user's settings.json can hold megabytes of permissions
// the table checks the type of and nothing else; decoding them was some
// 44% of an install beside a 50 MB one, and most of its page faults. What
// the scanner refuses (a byte order mark, nesting past its limit, bytes
// not UTF-8), or a document not an object, is decoded whole.
func (r *Settings) decodeJSON(data []byte) (any, error) {
	inside, all := r.Table.Config.ReadsInside()
	var top *jsonedit.Value
	if !all && !decodeWhole {
		// A key no member has: every member's value is skimmed.
		top, _ = jsonedit.ScanMember(data, "\x00", false)
	}
	if top == nil || top.Kind != '{' {
		var doc any
		err := json.Unmarshal(data, &doc)
		return doc, err
	}
	doc := make(map[string]any, len(top.Members))
	for _, m := range top.Members {
		raw := data[m.Val.Start:m.Val.End]
		if (m.Val.Kind == '{' || m.Val.Kind == '[') && !inside[m.Key] {
			doc[m.Key] = json.RawMessage(raw) // the last of a key held twice, as json does
			continue
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		doc[m.Key] = v
	}
	return doc, nil
}

// decodeWhole, set by a test, makes decodeJSON decode every document
// whole, as json.Unmarshal does: the reference it is held to.
var decodeWhole bool

// broken says whether the hook file holds, in a comment, a character the
// harness keeps when it strips its comments and then cannot parse: the
// harness then cannot read the file at all.
func (r *Settings) broken(file string) (Off, bool) {
	if r.Table.Config.Comments == nil || r.Table.Config.Comments.Breaks == nil {
		return Off{}, false
	}
	data, err := r.Read(file)
	if err != nil || jsonedit.ScanStrings(data, true, func([]byte) {}) != nil {
		return Off{}, false
	}
	off := r.Table.Broken(data, jsonedit.WithoutComments(data))
	if off < 0 {
		return Off{}, false
	}
	ch, _ := utf8.DecodeRune(data[off:])
	l, c := jsonedit.Position(data, off)
	return Off{
		File: file,
		Why:  fmt.Sprintf("%s:%d:%d: a comment holds %U, which %s keeps when it strips comments and then cannot parse: it cannot read the file, dalo's entries included", file, l, c, ch, r.Table.Harness),
		Fix:  fmt.Sprintf("replace the %U at line %d, column %d with a space", ch, l, c),
	}, true
}

// jsonValue writes a decoded value as JSON.
func jsonValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// CheckInForce refuses to write the hook file cfg as newCfg, with the
// entries want, when the harness would not run them: a command it would
// rewrite (the table's expands), a file it would drop or cannot read, a
// switch that turns every hook off for the user. A project's own settings
// are not read: they are that project's.
func CheckInForce(t *providers.Table, cfg string, newCfg []byte, want map[string]Entry) error {
	for _, ev := range slices.Sorted(maps.Keys(want)) {
		cmd := want[ev].Command(t)
		if x := t.Expanded(cmd); x != "" {
			return &Error{cfg, fmt.Sprintf("dalo's entry for %s would hold %s, which %s replaces in its settings before it runs the command (its store or dispatcher path holds it): keep the store (DALO_HOME) at a path without it, then install again", ev, x, t.Harness)}
		}
	}
	r := &Settings{Table: t, Getenv: os.Getenv, Read: func(file string) ([]byte, error) {
		if real, err := filepath.EvalSymlinks(file); file == cfg || err == nil && real == cfg {
			if newCfg == nil {
				return nil, fs.ErrNotExist
			}
			return newCfg, nil
		}
		return os.ReadFile(file)
	}}
	for _, o := range r.Off() {
		if _, ok := want[o.Event]; o.Project || o.Event != "" && !ok {
			continue // a project's own, or an event dalo writes no entry for
		}
		return fmt.Errorf("%s; %s would not run dalo's entries, so nothing was installed: %s, then install again", o.Why, t.Harness, o.Fix)
	}
	return nil
}
