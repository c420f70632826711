package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"dalo/hooksfile"
	"dalo/hooktrust"
	"dalo/plan"
	"dalo/providers"
)

// HarnessState records what dalo wrote into one harness configuration file,
// so that it removes exactly that and notices when the user changed it:
// the hooks file's record (package hooksfile edits the file), and the
// harness trust dalo recorded for its entries.
type HarnessState struct {
	hooksfile.Record
	// Trust is the harness trust dalo recorded for its entries (install
	// --trust), by native event: what remove takes back, and what doctor
	// compares the harness's trust with.
	Trust map[string]hooktrust.Record `json:"trust,omitempty"`
	// TrustFileCreated says dalo created the harness's trust file for its
	// trust: once none of dalo's is left in it and nothing else, it goes.
	TrustFileCreated bool `json:"trust_file_created,omitempty"`
}

// ownerOf is the owner of t's hook file for the store s.
func (s *Store) ownerOf(t *providers.Table) hooksfile.Owner {
	return hooksfile.OwnerOf(t, s.Dir, s.projectID())
}

// editConfig is the hooks file text that holds exactly the entries want
// of dalo's, from doc and what dalo wrote before (st), with the state that
// records it (see [hooksfile.Owner.Edit]). A file dalo creates or deletes
// keeps nothing of st's: its trust goes with it.
func editConfig(o hooksfile.Owner, file string, doc []byte, st HarnessState, want map[string]hooksfile.Entry) ([]byte, HarnessState, error) {
	text, rec, err := o.Edit(file, doc, st.Record, want)
	next := st
	if doc == nil || text == nil {
		next = HarnessState{}
	}
	next.Record = rec
	return text, next, err
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
		return &hooksfile.Error{File: file, Msg: "changed while dalo was editing it; run dalo again"}
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
