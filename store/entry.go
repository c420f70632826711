package store

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"

	"dalo/hooksfile"
	"dalo/internal/regular"
	"dalo/jsonedit"
	"dalo/plan"
	"dalo/providers"
)

// A Dispatcher is the program harness entries start dispatch with: an
// executable of the running dalo's build, dalo-hook (Hook: its command is
// `dispatch`) or dalo itself (`hook dispatch`). Install does not write its
// path into the entries: it copies it into the store (see
// [Store.dispatcherCopy]), so that the entries keep working however dalo
// was started (`go run` builds it in a temporary directory) and wherever
// the user moves or upgrades it.
type Dispatcher struct {
	Exe  string
	Hook bool
}

// FindDispatcher is the dispatcher for the dalo executable exe (absolute,
// links resolved): the dalo-hook beside exe when there is one of the same
// build as the running dalo, since a harness starts it on every tool call
// and it links no CUE; else exe itself. A dalo-hook of another build might
// read another plan schema, and then fail every event.
func FindDispatcher(exe string) Dispatcher {
	hook := filepath.Join(filepath.Dir(exe), plan.HookBinary)
	if canRun(hook) && sameBuild(hook) {
		return Dispatcher{Exe: hook, Hook: true}
	}
	return Dispatcher{Exe: exe}
}

// sameBuild says whether the Go binary at path was built from the same
// module version and source revision as the running program, as far as
// their build information tells.
func sameBuild(path string) bool {
	self, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	other, err := buildinfo.ReadFile(path)
	if err != nil {
		return false
	}
	setting := func(bi *debug.BuildInfo, key string) string {
		for _, s := range bi.Settings {
			if s.Key == key {
				return s.Value
			}
		}
		return ""
	}
	if self.Main.Path != other.Main.Path || self.Main.Version != other.Main.Version || self.GoVersion != other.GoVersion {
		return false
	}
	for _, key := range []string{"vcs.revision", "vcs.modified"} {
		if setting(self, key) != setting(other, key) {
			return false
		}
	}
	return true
}

// dispatchersDir is where the store keeps its copies of dispatchers:
// dispatchers/<sha256 of the executable>/<its name>.
const dispatchersDir = "dispatchers"

// A dispatcherCopy is the store's copy of a dispatcher, which the entries
// call: Path, content-addressed, and what it copies.
type dispatcherCopy struct {
	Dispatcher
	Path   string
	digest string
	size   int64
}

// dispatcherCopy is where the store keeps d, by the digest of its bytes:
// the path the entries call. It copies nothing (see placeDispatcher).
func (s *Store) dispatcherCopy(d Dispatcher) (*dispatcherCopy, error) {
	fd, err := hashFile(d.Exe)
	if err != nil {
		return nil, fmt.Errorf("reading the dispatcher %s: %w", d.Exe, err)
	}
	name := "dalo"
	if d.Hook {
		name = plan.HookBinary
	}
	return &dispatcherCopy{Dispatcher: d, Path: s.path(dispatchersDir, fd.SHA256, name), digest: fd.SHA256, size: fd.Size}, nil
}

// placeDispatcher puts the copy c in the store, unless it is there already
// with its digest: a directory of its own, written under a temporary name,
// synced and renamed into place, the executable read-only. The caller
// holds the store lock.
func (s *Store) placeDispatcher(c *dispatcherCopy) error {
	if fd, err := hashFile(c.Path); err == nil && fd.SHA256 == c.digest && fd.Executable {
		return nil
	}
	dir := filepath.Dir(c.Path)
	if err := removeTree(dir); err != nil {
		return fmt.Errorf("replacing the dispatcher %s: %w", dir, err)
	}
	root := s.path(dispatchersDir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("copying the dispatcher: %w", err)
	}
	tmp, err := os.MkdirTemp(root, plan.TempMark)
	if err != nil {
		return fmt.Errorf("copying the dispatcher: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			removeTree(tmp)
		}
	}()
	src, fi, err := regular.Open(c.Exe)
	if err != nil {
		return fmt.Errorf("copying the dispatcher %s: %w", c.Exe, err)
	}
	defer src.Close()
	if fi.Size() != c.size {
		return fmt.Errorf("copying the dispatcher %s: it changed while dalo read it", c.Exe)
	}
	dst := filepath.Join(tmp, filepath.Base(c.Path))
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return fmt.Errorf("copying the dispatcher: %w", err)
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), io.LimitReader(src, c.size+1))
	if err == nil {
		err = f.Chmod(0o555)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copying the dispatcher to %s: %w", dst, err)
	}
	if hex.EncodeToString(h.Sum(nil)) != c.digest {
		return fmt.Errorf("copying the dispatcher %s: it changed while dalo read it", c.Exe)
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("copying the dispatcher: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("copying the dispatcher: %w", err)
	}
	ok = true
	return syncDir(root)
}

// gcDispatchers removes the store's dispatcher copies that no entry calls,
// neither one an install record names nor one of the harness files those
// records name holds (a run killed between the two leaves them apart): the
// last entry that used one is gone. A harness session that read its
// configuration before the entry changed may still start the old copy;
// an entry of a required fail_closed hook then blocks (see [hooksfile.Command]),
// any other fails open until the harness reads its configuration again. It
// deletes nothing unless it read every install record and harness file.
// The caller holds the store lock.
func (s *Store) gcDispatchers() error {
	scopes, err := s.allScopes()
	if err != nil {
		return fmt.Errorf("collecting dispatcher copies: %w", err)
	}
	used := map[string]bool{}
	// Every string of a JSON document counts, wherever it is: its shape is
	// a table's, and dalo may have no table of the provider any more. Only
	// one that holds " --provider " (as written, or behind an escape) can
	// be an entry's command: the others are not decoded. Comments, which
	// some harnesses read as whitespace, run nothing.
	useStrings := func(doc []byte) error {
		return jsonedit.ScanStrings(doc, true, func(tok []byte) {
			if !bytes.Contains(tok, []byte(" --provider ")) && bytes.IndexByte(tok, '\\') < 0 {
				return
			}
			var cmd string
			if json.Unmarshal(tok, &cmd) != nil {
				return
			}
			if c, ok := hooksfile.ParseCommand(cmd); ok {
				used[c.Program] = true
			}
		})
	}
	var records []*Installed
	for _, sc := range scopes {
		names, err := sc.InstalledProviders()
		if err != nil {
			return fmt.Errorf("collecting dispatcher copies: %w", err)
		}
		for _, p := range names {
			in, err := sc.Installed(p)
			if err != nil {
				return fmt.Errorf("collecting dispatcher copies: %w", err)
			}
			records = append(records, in)
		}
	}
	for _, in := range records {
		p := in.Provider
		for ev, e := range in.Harness.Entries {
			if len(e) == 0 {
				continue
			}
			if err := useStrings(e); err != nil {
				return fmt.Errorf("collecting dispatcher copies: the install record of %s, entry %s: %w", p, ev, err)
			}
		}
		if in.Harness.File == "" {
			continue
		}
		doc, _, err := readUserFile(in.Harness.File, "", nil)
		if err != nil {
			return fmt.Errorf("collecting dispatcher copies: %w", err)
		}
		if doc == nil {
			continue
		}
		if err := useStrings(doc); err != nil {
			return fmt.Errorf("collecting dispatcher copies: %s: %w", in.Harness.File, err)
		}
	}
	root := s.path(dispatchersDir)
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("collecting dispatcher copies: %w", err)
	}
	removed := false
	for _, e := range ents {
		dir := filepath.Join(root, e.Name())
		if used[filepath.Join(dir, "dalo")] || used[filepath.Join(dir, plan.HookBinary)] {
			continue
		}
		if err := removeTree(dir); err != nil {
			return fmt.Errorf("collecting dispatcher copies: %w", err)
		}
		removed = true
	}
	if removed {
		return syncDir(root)
	}
	return nil
}

// wantEntryCommand is the command dalo writes into the entry of event for
// t, calling the dispatcher copy c of the store at home; failClosed when a
// required fail_closed hook is installed on the event.
func wantEntryCommand(t *providers.Table, c *dispatcherCopy, home, event string, failClosed bool) hooksfile.Command {
	e := hooksfile.Command{Program: c.Path, Dalo: !c.Hook, Home: home, Provider: t.Name, Event: event, FailClosed: failClosed,
		Open: !failClosed && t.FailedCommandDenies(event)}
	if failClosed {
		e.Block = t.Blocking.Exit
		if f, ok := t.Events[event].Payload.Fields["workflow.already_continued"]; ok {
			e.Continued = f.Key
		}
	}
	return e
}

// canRun says whether path is a regular file someone may execute.
func canRun(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
