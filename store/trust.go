package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"dalo/codexapp"
	"dalo/providers"
	"dalo/tomledit"
)

// Some harnesses run only the hooks their user trusted (Codex keeps a hash
// of each trusted hook's definition in its config.toml, written by its
// /hooks review). dalo's grants decide what dalo runs; the harness's trust
// only decides whether it starts dalo's dispatcher at all. Install --trust
// records that trust for dalo's own entries, and nothing else, as the
// harness's review would: with the hash the harness itself reports for the
// entry, never one dalo computes. The hash covers the entry's definition
// (command, timeout, matcher), not the files it runs, so trust recorded
// once stays valid while the entry does; dalo's grants cover the bytes.

// A TrustRecord is the harness trust dalo recorded for one of its entries:
// the key the harness knows the entry by, the hash it reported, the entry
// as it was then, and the text dalo appended to the trust file (to remove
// it whole), if it appended it rather than changed a value in place.
type TrustRecord struct {
	Key   string       `json:"key"`
	Hash  string       `json:"hash"`
	Entry HarnessEntry `json:"entry"`
	Added string       `json:"added,omitempty"`
}

// trustKey is the key a trust-keeping harness knows the handler of group
// index group of event by, in the hooks file file: <file>:<event in snake
// case>:<group>:<handler>, dalo's entries having one handler. snake, when
// set, is the event's name as the harness spelled it in a key it listed.
func trustKey(file, event, snake string, group int) string {
	if snake == "" {
		snake = snakeCase(event)
	}
	return file + ":" + snake + ":" + strconv.Itoa(group) + ":0"
}

// keySnake is the event part of a key trustKey made, or "".
func keySnake(key, file string) string {
	rest, ok := strings.CutPrefix(key, file+":")
	if !ok {
		return ""
	}
	snake, _, _ := strings.Cut(rest, ":")
	return snake
}

// snakeCase spells a native event in snake case, as Codex's trust keys do:
// PreToolUse, pre_tool_use.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// trustFile is the file where t's harness keeps its trust, or "" when it
// keeps none dalo can read.
func trustFile(t *providers.Table, getenv func(string) string) (string, error) {
	st := t.Config.Trust.State
	if st == nil {
		return "", nil
	}
	p, err := t.Path(st.Location, getenv)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r, nil
	}
	return p, nil
}

// trust says, for each of dalo's entries in the hooks file (owned), whether
// the harness will run it: trusted with the hash dalo recorded for the
// entry as it is now; untrusted; trusted for an older version of the entry
// (a hash dalo recorded for it before); or trusted with a hash dalo never
// recorded (the user's own review), which it cannot check without running
// the harness. It starts no harness process.
func (c *forceCheck) trust(file string, doc []byte, owned []found) {
	t, in := c.t, c.in
	st := t.Config.Trust.State
	if st == nil {
		c.add(StatusUnverified, file, "%s runs only hooks the user trusted; whether dalo's entries are trusted cannot be verified (%s keeps no trust record dalo can read): check its /hooks review", t.Harness, t.Key())
		for _, f := range owned {
			c.trusted[f.event] = t.Harness + " runs only hooks the user trusted, and dalo cannot read that trust"
		}
		return
	}
	tf, err := trustFile(t, c.opt.Getenv)
	if err != nil {
		c.add(StatusProblem, t.Name, "%v", err)
		return
	}
	state, err := readTrustFile(tf, st.Table, st.Field)
	if err != nil {
		c.add(StatusProblem, tf, "%v", err)
		for _, f := range owned {
			c.why(c.event, f.event, t.Harness+" cannot read "+tf+", so dalo cannot tell whether it trusts the entry")
		}
		return
	}
	for _, f := range owned {
		rec, recorded := in.Harness.Trust[f.event]
		key := trustKey(file, f.event, keySnake(rec.Key, file), f.index)
		have := state[key]
		entry := in.Harness.Entries[f.event]
		trustCmd := fmt.Sprintf("run 'dalo plugin install PACKAGE --provider %s --trust' (any package installed there), or trust it in %s's /hooks review", t.Name, t.Harness)
		switch {
		case have == "":
			why := fmt.Sprintf("%s has not trusted dalo's %s entry (key %s), so it skips it without a word: %s", t.Harness, f.event, key, trustCmd)
			c.add(StatusProblem, file, "%s", why)
			c.why(c.event, f.event, why)
		case recorded && have == rec.Hash && rec.Key == key && reflect.DeepEqual(rec.Entry, entry):
			c.add(StatusOK, file, "dalo entry for %s is trusted by %s (%s)", f.event, t.Harness, key)
		case recorded && have == rec.Hash:
			why := fmt.Sprintf("%s trusts an older version of dalo's %s entry (the entry or its place changed since dalo recorded the trust), so it skips it: %s", t.Harness, f.event, trustCmd)
			c.add(StatusProblem, file, "%s", why)
			c.why(c.event, f.event, why)
		default:
			why := fmt.Sprintf("%s holds a trusted hash for dalo's %s entry that dalo did not record, and dalo cannot check it against the entry without running %s: %s to check and record it", tf, f.event, t.Harness, trustCmd)
			c.add(StatusUnverified, file, "%s", why)
			c.trusted[f.event] = why
		}
	}
}

// readTrustFile reads the trust in the TOML file name: table."<key>".field
// for every key. A file that does not exist trusts nothing.
func readTrustFile(name, table, field string) (map[string]string, error) {
	data, exists, err := readUserFile(name, "", nil)
	if err != nil || !exists {
		return map[string]string{}, err
	}
	return tomledit.Values(name, data, table, field)
}

// trustHashes asks the harness (the executable exe) for the hash of each
// of the entries want (native event → entry): it writes them alone into a
// hooks file of a scratch home and lists the hooks read there. It returns
// per event the hash and the event's name in keys. Only a listed hook whose
// command is byte for byte the entry's counts.
func trustHashes(t *providers.Table, exe string, want map[string]HarnessEntry) (hashes, snakes map[string]string, err error) {
	if t.Config.Trust.State == nil || t.Config.Trust.State.List != providers.TrustListCodexAppServer {
		return nil, nil, fmt.Errorf("%s keeps no trust dalo can record", t.Key())
	}
	dir, err := os.MkdirTemp("", "dalo-trust-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return nil, nil, err
	}
	hooks := map[string][]HarnessEntry{}
	for ev, e := range want {
		hooks[ev] = []HarnessEntry{e}
	}
	b, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	home := filepath.Join(dir, ".codex")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, nil, err
	}
	file := filepath.Join(home, filepath.Base(t.Config.Hooks.Path))
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return nil, nil, err
	}
	listed, err := codexapp.ListHooks(exe, dir)
	if err != nil {
		return nil, nil, err
	}
	hashes, snakes = map[string]string{}, map[string]string{}
	for ev, e := range want {
		for _, h := range listed {
			if h.Command == e.command(t) && strings.HasPrefix(h.Key, file+":") && strings.HasPrefix(h.Hash, "sha256:") {
				hashes[ev], snakes[ev] = h.Hash, keySnake(h.Key, file)
			}
		}
		if hashes[ev] == "" {
			return nil, nil, fmt.Errorf("%s app-server did not list dalo's %s entry with a hash (it listed %d hooks); trust dalo's entries in its /hooks review instead", exe, ev, len(listed))
		}
	}
	return hashes, snakes, nil
}

// A trustEdit is the change to a harness's trust file that goes with a
// change of dalo's entries: the trust dalo records for them (install
// --trust), and the trust it takes back for entries that go.
type trustEdit struct {
	file     string
	old, new []byte                 // nil: the file does not exist, or goes
	records  map[string]TrustRecord // native event → what the new state records
	created  bool                   // dalo created the file and it stays
}

// changed says whether the edit writes anything.
func (e *trustEdit) changed() bool {
	return e != nil && (!bytes.Equal(e.old, e.new) || (e.old == nil) != (e.new == nil))
}

// TrustRecordable says why --trust cannot apply on t's harness, one that
// keeps no trust of its hooks dalo can record, or is nil.
func TrustRecordable(t *providers.Table) error {
	if t.Config.Trust.State == nil {
		return fmt.Errorf("--trust: %s keeps no trust of its hooks that dalo can record (%s)", t.Key(), t.Config.Trust.How)
	}
	return nil
}

// planTrust is the trust edit that goes with dalo's entries changing from
// st to next in the hooks file cfg, whose new text is doc: with record,
// the harness (exe) is asked for each entry's hash (trustHashes) and that
// trust is recorded; the trust dalo recorded for entries that are gone is
// taken back. It is nil when t's harness keeps no trust dalo can record
// and none is asked for.
func (s *Store) planTrust(t *providers.Table, st, next HarnessState, cfg string, doc []byte, record bool, exe string) (*trustEdit, error) {
	state := t.Config.Trust.State
	if state == nil {
		if record {
			return nil, TrustRecordable(t)
		}
		return nil, nil
	}
	recs := map[string]TrustRecord{}
	var gone []TrustRecord
	for ev, r := range st.Trust {
		if _, ok := next.Entries[ev]; ok {
			recs[ev] = r
		} else {
			gone = append(gone, r)
		}
	}
	if !record && len(gone) == 0 {
		return &trustEdit{records: recs, created: st.TrustFileCreated}, nil
	}
	file, err := trustFile(t, os.Getenv)
	if err != nil {
		return nil, err
	}
	e := &trustEdit{file: file, records: recs, created: st.TrustFileCreated}
	data, exists, err := readUserFile(file, "", writableUserFile)
	if err != nil {
		return nil, err
	}
	e.old, e.new = data, data
	if !exists && record {
		e.created = true
	}
	if len(gone) > 0 {
		written := make([]tomledit.Written, len(gone))
		for i, r := range gone {
			written[i] = tomledit.Written{Key: r.Key, Value: r.Hash, Added: r.Added}
		}
		out, err := tomledit.Drop(file, e.new, state.Table, state.Field, written)
		var refused *tomledit.RefusedError
		if errors.As(err, &refused) {
			return nil, fmt.Errorf("%s: removing dalo's trust would break the file (%v); remove it by hand", file, refused.Err)
		}
		if err != nil {
			return nil, err
		}
		e.new = out
		if len(out) == 0 && e.created {
			e.new, e.created = nil, false // dalo made it for its trust alone
		} else if out == nil {
			e.new = []byte{}
		}
	}
	if !record || len(next.Entries) == 0 {
		return e, nil
	}
	if exe == "" {
		return nil, fmt.Errorf("--trust: no %s to ask for the hash of dalo's entries: put %s on PATH", t.Harness, t.Name)
	}
	hashes, snakes, err := trustHashes(t, exe, next.Entries)
	if err != nil {
		return nil, err
	}
	top, _, owned, err := s.ownerOf(t).scanConfig(cfg, doc)
	if err != nil || top == nil {
		return nil, fmt.Errorf("--trust: reading the new %s: %v", cfg, err)
	}
	set := map[string]string{}
	keys := map[string]string{}
	for _, f := range owned {
		k := trustKey(cfg, f.event, snakes[f.event], f.index)
		set[k], keys[f.event] = hashes[f.event], k
	}
	out, added, err := tomledit.Set(file, e.new, state.Table, state.Field, set)
	var refused *tomledit.RefusedError
	if errors.As(err, &refused) {
		return nil, trustRefused(refused)
	}
	if err != nil {
		return nil, err
	}
	e.new = out
	for ev, k := range keys {
		r := TrustRecord{Key: k, Hash: set[k], Entry: next.Entries[ev], Added: added[k]}
		if prev, ok := recs[ev]; ok && prev.Key == k && r.Added == "" && prev.Added != "" {
			// dalo's own table, its value replaced in place.
			r.Added = strings.Replace(prev.Added, tomledit.Quote(prev.Hash), tomledit.Quote(r.Hash), 1)
		}
		recs[ev] = r
	}
	return e, nil
}

// trustRefused says why the trust file cannot take dalo's trust, and what
// the user can do instead.
func trustRefused(e *tomledit.RefusedError) error {
	const instead = "trust dalo's entries in the harness's own review instead"
	switch {
	case e.Err != nil:
		return fmt.Errorf("%s: dalo cannot add its trust to this file (%v); %s", e.File, e.Err, instead)
	case e.Key != "":
		return fmt.Errorf("%s: dalo cannot add its trust for %s to this file as it is written; %s", e.File, e.Key, instead)
	}
	return fmt.Errorf("%s: adding dalo's trust would change more of this file than dalo's keys; %s", e.File, instead)
}

// write writes the trust file, unless it changed since it was read.
func (e *trustEdit) write() error {
	if !e.changed() {
		return nil
	}
	return writeConfig(e.file, e.old, e.new)
}

// movedKeys lists the hooks of the user's in the hooks file whose trust
// key a change of dalo's entries moves, old doc to new: the harness knows
// a hook by its place, so a moved one is untrusted until its user reviews
// it again. dalo adds its entries after the user's and replaces them in
// place, so only a removal moves a key.
func (o owner) movedKeys(file string, old, new []byte) []string {
	if old == nil || new == nil {
		return nil
	}
	_, oh, _, err1 := o.scanConfig(file, old)
	_, nh, _, err2 := o.scanConfig(file, new)
	if err1 != nil || err2 != nil || oh == nil || nh == nil {
		return nil
	}
	var out []string
	for _, m := range oh.Members {
		nm := nh.Member(m.Key)
		if m.Val.Kind != '[' || nm == nil || nm.Val.Kind != '[' {
			continue
		}
		var before, after []int // indexes of the user's entries
		for i, e := range m.Val.Elems {
			if _, ok := o.ownedEvent(e); !ok {
				before = append(before, i)
			}
		}
		for i, e := range nm.Val.Elems {
			if _, ok := o.ownedEvent(e); !ok {
				after = append(after, i)
			}
		}
		for k := 0; k < len(before) && k < len(after); k++ {
			if before[k] != after[k] {
				out = append(out, fmt.Sprintf("%s moves to %s", trustKey(file, m.Key, "", before[k]), trustKey(file, m.Key, "", after[k])))
			}
		}
	}
	return out
}
