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
	"strconv"
	"strings"

	"dalo/internal/regular"
	"dalo/internal/termtext"
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
// an entry of a required fail_closed hook then blocks (see entryCommand),
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
			if c, ok := parseEntryCommand(cmd); ok {
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

// An entryCommand is the command line of one of dalo's harness entries:
//
//	<program> dispatch --home <store> --provider P --event E
//
// (`hook dispatch` when the program is dalo itself). On an event where a
// required fail_closed hook is installed it adds --fail-closed and a guard
// for a dispatcher that cannot answer at all: harnesses run the command
// with a shell, and a program that is missing (127), cannot be executed
// (126) or is killed by a signal (128+n) fails open on them; the guard maps
// those statuses, and only those, to the harness's blocking status with the
// reason on stderr. On an event that carries workflow.already_continued
// (Stop) the guard reads the payload first, and blocks only a workflow
// that did not go on already, so that it never loops the agent.
//
// On an event where the harness denies the action when a hook command
// fails (the table's events.<E>.failed_command, GitHub Copilot CLI's
// preToolUse) and no required fail_closed hook is installed, the command
// is guarded open instead (Open): every failure, whatever its status, exits
// 0 with the reason on stderr, so that a dispatcher that cannot answer
// lets the action go on, as the hooks' failure policies say.
//
// The guard names no shell variable: a harness may replace $name in its
// settings' strings before its shell sees them (Gemini CLI replaces $s by
// the variable s of its own environment, see the table's
// config.hooks.entry.expands), which would turn the guard into another
// command. It uses only $? (the status) and $* (the payload, held as the
// positional parameters), which no harness rewrites.
type entryCommand struct {
	Program    string
	Dalo       bool   // Program is dalo: `hook dispatch`
	Home       string // the store; "" in an entry a dalo before --home wrote
	Project    string // the project scope's id (--project); "" for the user's
	Provider   string
	Event      string
	FailClosed bool
	// The guard, with FailClosed: Block is the harness's blocking exit
	// status; Continued the payload key of workflow.already_continued on
	// the event, if it has one.
	Block     int
	Continued string
	// Open: the guard that maps every failure to a pass.
	Open bool
}

// guardedPrefix starts a guarded command on an event with Continued: the
// payload is read into the positional parameters ($*) and given to the
// dispatcher.
const guardedPrefix = `set -- "$(cat)"; printf '%s' "$*" | `

// oldGuardedPrefix is guardedPrefix as an earlier dalo wrote it, with a
// variable a harness may rewrite: its entries are still recognised as
// dalo's, and rewritten by the next install.
const oldGuardedPrefix = `p=$(cat); printf '%s' "$p" | `

// guardStatuses is the case pattern of the statuses the guard maps to a
// block: 126 to 255, a dispatcher that could not start or died by a signal.
const guardStatuses = `12[6-9]|1[3-9][0-9]|2[0-5][0-9]`

func (c entryCommand) String() string {
	var b strings.Builder
	if c.FailClosed && c.Continued != "" {
		b.WriteString(guardedPrefix)
	}
	b.WriteString(termtext.ShellQuote(c.Program))
	if c.Dalo {
		b.WriteString(" " + plan.DaloDispatch)
	} else {
		b.WriteString(" " + plan.HookDispatch)
	}
	if c.Home != "" {
		b.WriteString(" --home " + termtext.ShellQuote(c.Home))
	}
	if c.Project != "" {
		b.WriteString(" --project " + c.Project)
	}
	b.WriteString(" --provider " + c.Provider + " --event " + c.Event)
	if c.Open {
		fmt.Fprintf(&b, ` || { echo "dalo: the dispatcher could not answer (exit status $?); no required fail_closed hook guards %s, so dalo lets %s go on: run 'dalo doctor'" >&2; exit 0; }`, c.Event, c.Event)
		return b.String()
	}
	if !c.FailClosed {
		return b.String()
	}
	b.WriteString(" --fail-closed")
	// In a case arm $? is still the dispatcher's status.
	fmt.Fprintf(&b, ` || case $? in %s) echo "dalo: the dispatcher could not run (exit status $?); a required fail_closed hook guards %s, so dalo blocks it: run 'dalo doctor'" >&2; `, guardStatuses, c.Event)
	if c.Continued != "" {
		fmt.Fprintf(&b, `case $* in *'"%s":true'*|*'"%s": true'*) exit 1;; esac; `, c.Continued, c.Continued)
	}
	fmt.Fprintf(&b, "exit %d;; *) exit $?;; esac", c.Block)
	return b.String()
}

// Argv is the dispatcher's command line without a shell, with extra flags:
// how doctor runs an entry (--check).
func (c entryCommand) Argv(extra ...string) []string {
	argv := []string{c.Program}
	argv = append(argv, strings.Fields(plan.HookDispatch)...)
	if c.Dalo {
		argv = append([]string{c.Program}, strings.Fields(plan.DaloDispatch)...)
	}
	if c.Home != "" {
		argv = append(argv, "--home", c.Home)
	}
	if c.Project != "" {
		argv = append(argv, "--project", c.Project)
	}
	argv = append(argv, "--provider", c.Provider, "--event", c.Event)
	if c.FailClosed {
		argv = append(argv, "--fail-closed")
	}
	return append(argv, extra...)
}

// parseEntryCommand reads back the command line of an entry of dalo's, of
// this dalo's form or of an earlier one (no --home, no guard), without its
// guard's details: ok says the command starts a dispatcher for a provider
// and event. Whether the whole command is what dalo would write is for
// the caller to compare (String of the entry it wants).
func parseEntryCommand(cmd string) (c entryCommand, ok bool) {
	rest, guarded := strings.CutPrefix(cmd, guardedPrefix)
	if !guarded {
		rest, guarded = strings.CutPrefix(cmd, oldGuardedPrefix)
	}
	prog, rest, ok := termtext.ShellWord(rest)
	if !ok || prog == "" {
		return c, false
	}
	c.Program = prog
	switch {
	case strings.HasPrefix(rest, " "+plan.DaloDispatch+" "):
		c.Dalo = true
		rest = rest[len(" "+plan.DaloDispatch):]
	case strings.HasPrefix(rest, " "+plan.HookDispatch+" ") && filepath.Base(prog) == plan.HookBinary:
		rest = rest[len(" "+plan.HookDispatch):]
	default:
		return c, false
	}
	if r, ok := strings.CutPrefix(rest, " --home "); ok {
		home, r, ok := termtext.ShellWord(r)
		if !ok || home == "" {
			return c, false
		}
		c.Home, rest = home, r
	}
	if r, ok := strings.CutPrefix(rest, " --project "); ok {
		id, r, _ := strings.Cut(r, " ")
		if !plan.ValidProject(id) {
			return c, false
		}
		c.Project, rest = id, " "+r
	}
	r, ok := strings.CutPrefix(rest, " --provider ")
	if !ok {
		return c, false
	}
	c.Provider, rest, _ = strings.Cut(r, " ")
	r, ok = strings.CutPrefix(rest, "--event ")
	if !ok || c.Provider == "" {
		return c, false
	}
	c.Event, rest, _ = strings.Cut(r, " ")
	if c.Event == "" || strings.ContainsAny(c.Event, "'\"\\;|&$") || strings.ContainsAny(c.Provider, "'\"\\;|&$") {
		return c, false
	}
	if rest == "" {
		return c, !guarded
	}
	if strings.HasPrefix(rest, "|| { ") && !guarded {
		c.Open = true
		return c, true
	}
	r, ok = strings.CutPrefix(rest, "--fail-closed")
	if !ok {
		return c, false
	}
	c.FailClosed = true
	switch {
	case strings.HasPrefix(r, " || case $? in "):
		// This dalo's guard.
		if i := strings.LastIndex(r, "; exit "); i >= 0 {
			c.Block, _ = strconv.Atoi(strings.TrimSuffix(r[i+len("; exit "):], ";; *) exit $?;; esac"))
		}
		if guarded {
			if _, after, ok := strings.Cut(r, `case $* in *'"`); ok {
				c.Continued, _, _ = strings.Cut(after, `"`)
			}
		}
	case strings.HasPrefix(r, " || { "):
		// An earlier dalo's guard, with variables.
		if i := strings.LastIndex(r, "; exit "); i >= 0 {
			c.Block, _ = strconv.Atoi(strings.TrimSuffix(r[i+len("; exit "):], "; }"))
		}
		if guarded {
			if _, after, ok := strings.Cut(r, `case $p in *'"`); ok {
				c.Continued, _, _ = strings.Cut(after, `"`)
			}
		}
	default:
		return c, false
	}
	return c, true
}

// wantEntryCommand is the command dalo writes into the entry of event for
// t, calling the dispatcher copy c of the store at home; failClosed when a
// required fail_closed hook is installed on the event.
func wantEntryCommand(t *providers.Table, c *dispatcherCopy, home, event string, failClosed bool) entryCommand {
	e := entryCommand{Program: c.Path, Dalo: !c.Hook, Home: home, Provider: t.Name, Event: event, FailClosed: failClosed,
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
