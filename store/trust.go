package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"dalo/hooksfile"
	"dalo/hooktrust"
	"dalo/providers"
	"dalo/tomledit"
)

// The harness's own trust of dalo's entries (see package hooktrust):
// doctor reads it, and install and remove record and take back dalo's,
// editing the trust file with package tomledit.

// trust says, for each of dalo's entries in the hooks file (owned), whether
// the harness will run it: trusted with the hash dalo recorded for the
// entry as it is now; untrusted; trusted for an older version of the entry
// (a hash dalo recorded for it before); or trusted with a hash dalo never
// recorded (the user's own review), which it cannot check without running
// the harness. It starts no harness process.
func (c *forceCheck) trust(file string, doc []byte, owned []hooksfile.Found) {
	t, in := c.t, c.in
	st := t.Config.Trust.State
	if st == nil {
		c.add(StatusUnverified, file, "%s runs only hooks the user trusted; whether dalo's entries are trusted cannot be verified (%s keeps no trust record dalo can read): check its /hooks review", t.Harness, t.Key())
		for _, f := range owned {
			c.trusted[f.Event] = t.Harness + " runs only hooks the user trusted, and dalo cannot read that trust"
		}
		return
	}
	tf, err := hooktrust.File(t, c.opt.Getenv)
	if err != nil {
		c.add(StatusProblem, t.Name, "%v", err)
		return
	}
	state, err := readTrustFile(tf, st.Table, st.Field)
	if err != nil {
		c.add(StatusProblem, tf, "%v", err)
		for _, f := range owned {
			c.why(c.event, f.Event, t.Harness+" cannot read "+tf+", so dalo cannot tell whether it trusts the entry")
		}
		return
	}
	for _, f := range owned {
		rec, recorded := in.Harness.Trust[f.Event]
		key := hooktrust.Key(file, f.Event, hooktrust.KeySnake(rec.Key, file), f.Index)
		have := state[key]
		entry := in.Harness.Entries[f.Event]
		trustCmd := fmt.Sprintf("run 'dalo plugin install PACKAGE --provider %s --trust' (any package installed there), or trust it in %s's /hooks review", t.Name, t.Harness)
		switch {
		case have == "":
			why := fmt.Sprintf("%s has not trusted dalo's %s entry (key %s), so it skips it without a word: %s", t.Harness, f.Event, key, trustCmd)
			c.add(StatusProblem, file, "%s", why)
			c.why(c.event, f.Event, why)
		case recorded && have == rec.Hash && rec.Key == key && reflect.DeepEqual(rec.Entry, entry):
			c.add(StatusOK, file, "dalo entry for %s is trusted by %s (%s)", f.Event, t.Harness, key)
		case recorded && have == rec.Hash:
			why := fmt.Sprintf("%s trusts an older version of dalo's %s entry (the entry or its place changed since dalo recorded the trust), so it skips it: %s", t.Harness, f.Event, trustCmd)
			c.add(StatusProblem, file, "%s", why)
			c.why(c.event, f.Event, why)
		default:
			why := fmt.Sprintf("%s holds a trusted hash for dalo's %s entry that dalo did not record, and dalo cannot check it against the entry without running %s: %s to check and record it", tf, f.Event, t.Harness, trustCmd)
			c.add(StatusUnverified, file, "%s", why)
			c.trusted[f.Event] = why
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

// A trustEdit is the change to a harness's trust file that goes with a
// change of dalo's entries: the trust dalo records for them (install
// --trust), and the trust it takes back for entries that go.
type trustEdit struct {
	file     string
	old, new []byte                      // nil: the file does not exist, or goes
	records  map[string]hooktrust.Record // native event → what the new state records
	created  bool                        // dalo created the file and it stays
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
	recs := map[string]hooktrust.Record{}
	var gone []hooktrust.Record
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
	file, err := hooktrust.File(t, os.Getenv)
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
	hashes, snakes, err := hooktrust.Hashes(t, exe, next.Entries)
	if err != nil {
		return nil, err
	}
	top, _, owned, err := s.ownerOf(t).Scan(cfg, doc)
	if err != nil || top == nil {
		return nil, fmt.Errorf("--trust: reading the new %s: %v", cfg, err)
	}
	set := map[string]string{}
	keys := map[string]string{}
	for _, f := range owned {
		k := hooktrust.Key(cfg, f.Event, snakes[f.Event], f.Index)
		set[k], keys[f.Event] = hashes[f.Event], k
	}
	out, added, err := tomledit.Set(file, e.new, state.Table, state.Field, set)
	var refused *tomledit.RefusedError
	if errors.As(err, &refused) {
		return nil, hooktrust.Refused(refused)
	}
	if err != nil {
		return nil, err
	}
	e.new = out
	for ev, k := range keys {
		r := hooktrust.Record{Key: k, Hash: set[k], Entry: next.Entries[ev], Added: added[k]}
		if prev, ok := recs[ev]; ok && prev.Key == k && r.Added == "" && prev.Added != "" {
			// dalo's own table, its value replaced in place.
			r.Added = strings.Replace(prev.Added, tomledit.Quote(prev.Hash), tomledit.Quote(r.Hash), 1)
		}
		recs[ev] = r
	}
	return e, nil
}

// write writes the trust file, unless it changed since it was read.
func (e *trustEdit) write() error {
	if !e.changed() {
		return nil
	}
	return writeConfig(e.file, e.old, e.new)
}
