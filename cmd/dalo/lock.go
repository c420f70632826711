package main

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"

	"github.com/spf13/pflag"

	"dalo/engine"
	"dalo/project"
)

const lockDoc = `Lock resolves the project's dalo.toml into dalo.lock: each git source's
URL, as written, and the commit its ref names, and each package's id,
version and the digest of every grant installing it on each of its
providers asks for (its tools, hooks, skills and agents), on every version
of the harness dalo has a table for, since a hook's digest can differ
between them. Commit both files. A lock grants nothing: each teammate's 'dalo sync' shows them what
it holds and asks them to approve it, and the digests are what that
approval is checked against.

The project is the directory holding dalo.toml: the working directory or
the nearest one above it. A git source is fetched as 'dalo source add'
fetches (the same hardened git) into a scratch directory that is removed
afterwards: locking changes neither your store nor your registry. A path
source is read as it is, and stays inside the project.

Without flags, the pin of every git source the lock already holds with the
same URL and ref is kept, a new or changed source is pinned to what its ref
names now, and every digest is computed again at the pins. It prints what
changed and writes dalo.lock when anything did, atomically.

--update moves the pins of every git source, or of SOURCE alone, to what
their refs name now, and prints what changed: per package, each grant whose
digest moved, old -> new.

--check writes nothing: it exits 1 when the lock does not hold what
dalo.toml declares, or its digests are not those of what the pinned commits
hold. A source moving upstream is not drift: the lock pins a commit. It
needs no harness, no store and no approval: for CI.

A dalo.toml or dalo.lock that cannot be read is refused with each finding
at its line and column, and nothing is written.

--json prints {"written": bool, "changes": [...]}, or with --check
{"holds": bool, "findings": [...]}, each finding as validate's
diagnostics: severity, code, message, file, line, column, field.

Exit status: 0 locked (or, with --check, the lock holds); 1 a finding, the
lock does not hold, or a fetch failed; 2 bad usage, or no dalo.toml here or
above.

Examples:
  dalo lock
  dalo lock --check
  dalo lock --update team
`

func init() {
	register(&command{
		name:  "lock",
		usage: "[--json] [--check | --update [SOURCE]]",
		short: "resolve dalo.toml into dalo.lock, or check that the lock holds",
		doc:   lockDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.Bool("check", false, "write nothing; exit 1 when dalo.lock does not hold")
			fs.Bool("update", false, "move the pins of every git source, or of SOURCE, to what their refs name now")
		},
		run: runLock,
	})
}

func runLock(e *env, fs *pflag.FlagSet) int {
	const cmd = "lock"
	check, _ := fs.GetBool("check")
	update, _ := fs.GetBool("update")
	switch {
	case check && update:
		return usageError(e, cmd, "--check and --update exclude each other")
	case fs.NArg() > 1:
		return usageError(e, cmd, "takes at most one SOURCE, got %d arguments", fs.NArg())
	case fs.NArg() == 1 && !update:
		return usageError(e, cmd, "a SOURCE names the source whose pin --update moves; without --update, lock takes none")
	}
	wd, err := os.Getwd()
	if err != nil {
		return fail(e, cmd, err)
	}
	root, err := project.Find(wd)
	if errors.Is(err, project.ErrNoProject) {
		return usageError(e, cmd, "%v", err)
	}
	if err != nil {
		return fail(e, cmd, err)
	}
	p, err := project.Load(root)
	if err != nil {
		return lockRefused(e, err)
	}
	old, err := project.ReadLock(root)
	switch {
	case errors.Is(err, iofs.ErrNotExist) && check:
		fmt.Fprintf(e.stderr, "dalo lock: %s has no %s: run 'dalo lock' and commit it\n", root, project.LockFile)
		return exitFail
	case errors.Is(err, iofs.ErrNotExist):
		old = nil
	case err != nil:
		return lockRefused(e, err)
	}
	opts := project.Options{Update: update, Progress: e.progress}
	if update && fs.NArg() == 1 {
		opts.Only = fs.Arg(0)
		switch s, ok := p.Source(opts.Only); {
		case !ok:
			return usageError(e, cmd, "%s declares no source %s", project.File, opts.Only)
		case s.Git == "":
			return usageError(e, cmd, "source %s is a directory of the project: it has no pin to move", opts.Only)
		}
	}
	if check {
		d, now, err := project.Verify(p, old, opts)
		// Tables a newer dalo wrote digests for, which this one cannot
		// compute: said, not failed.
		unknown := project.UnknownTables(old)
		switch {
		case err != nil:
			return lockRefused(e, err)
		case e.json:
			if d == nil {
				d = []engine.Diagnostic{}
			}
			if code := writeJSON(e, lockCheckJSON{Holds: len(d) == 0, Findings: d, Unchecked: unknown}); code != exitOK || len(d) == 0 {
				return code
			}
			return exitFail
		case len(d) > 0:
			return lockDoesNotHold(e, d)
		}
		for _, t := range unknown {
			fmt.Fprintf(e.stdout, "note: not checked on %s, a harness version this dalo has no table for\n", t)
		}
		fmt.Fprintf(e.stdout, "%s holds: %s\n", project.LockFile, lockSummary(now))
		return exitOK
	}
	now, err := project.Resolve(p, old, opts)
	if err != nil {
		return lockRefused(e, err)
	}
	if old != nil && bytes.Equal(old.Marshal(), now.Marshal()) {
		if e.json {
			return writeJSON(e, lockJSON{Written: false, Changes: []string{}})
		}
		fmt.Fprintf(e.stdout, "%s is up to date: %s\n", project.LockFile, lockSummary(now))
		return exitOK
	}
	changes := project.Changes(old, now)
	if err := project.WriteLock(root, now); err != nil {
		return lockRefused(e, err)
	}
	if e.json {
		return writeJSON(e, lockJSON{Written: true, Changes: append([]string{}, changes...)})
	}
	for _, line := range changes {
		fmt.Fprintln(e.stdout, line)
	}
	fmt.Fprintf(e.stdout, "wrote %s: %s\n", project.LockFile, lockSummary(now))
	return exitOK
}

// lockCheckJSON is what --json --check prints: whether the lock holds,
// and each finding where it does not, as validate's diagnostics.
type lockCheckJSON struct {
	Holds    bool                `json:"holds"`
	Findings []engine.Diagnostic `json:"findings"`
	// Unchecked are the tables the lock names that this dalo has none
	// of.
	Unchecked []string `json:"unchecked,omitempty"`
}

// lockJSON is what --json prints when the lock is written or already up
// to date: the lines the text report prints, one a change.
type lockJSON struct {
	Written bool     `json:"written"`
	Changes []string `json:"changes"`
}

// lockRefused prints why dalo.toml or dalo.lock was refused, or resolving
// failed (a path that cannot be locked, a fetch), a finding a line, and
// says nothing was written.
func lockRefused(e *env, err error) int {
	var pe *project.Error
	if errors.As(err, &pe) {
		for _, d := range pe.Diagnostics {
			fmt.Fprintln(e.stderr, d)
		}
	} else {
		fmt.Fprintf(e.stderr, "dalo lock: %v\n", err)
	}
	fmt.Fprintln(e.stderr, "nothing was written")
	return exitFail
}

func lockDoesNotHold(e *env, ds []engine.Diagnostic) int {
	for _, d := range ds {
		fmt.Fprintln(e.stderr, d)
	}
	fmt.Fprintf(e.stderr, "%s does not hold: run 'dalo lock' (or 'dalo lock --update') and commit it\n", project.LockFile)
	return exitFail
}

// lockSummary counts what a lock holds: grants by id, whatever the
// harness versions they are locked for.
func lockSummary(l *project.Lock) string {
	grants := 0
	for _, p := range l.Packages {
		grants += p.GrantCount()
	}
	return fmt.Sprintf("%s, %s, %s", plural(len(l.Sources), "source"), plural(len(l.Packages), "package"), plural(grants, "grant"))
}
