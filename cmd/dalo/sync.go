package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"dalo/internal/termtext"
	"dalo/project"
	"dalo/providers"
	"dalo/store"
	"dalo/store/gitrepo"
)

const syncDoc = `Sync makes this machine match the project's dalo.lock: the project is the
directory holding dalo.toml, the current directory or the nearest above
it, and its lock pins each source's commit and the digest of every grant
its packages ask for. Sync installs them into the project's own scope of
each harness the lock names, where the harness reads a project's hooks
(the project's file each user keeps for themselves), skills and agents,
never into your own settings and never into a file the project commits:
{{project scopes}}

In order, writing nothing until each step passed:
  - in a git work tree, the project's per-user file of each harness (the
    first above) must be one git ignores and does not track: dalo's
    entries there name a path of this machine. Sync says how to ignore it
    (for this clone, or for the team) and writes nothing;
  - each locked source is found in your registry under its id, at the same
    git URL or project directory; one you have not registered is shown and
    asked for before anything is fetched (--yes answers yes); one
    registered elsewhere is refused;
  - the lock is checked as 'dalo lock --check' checks it, in a scratch
    directory: it must say what dalo.toml says, and every grant's digest
    must be what the pinned commits give; a lock that does not hold is
    refused and nothing is written;
  - each git source is registered and pinned at the locked commit (a
    source of yours moves its pin there; what you installed from it keeps
    running its approved bytes), and each grant is computed again from
    those bytes for the harness version you run;
  - the grants you have not approved are shown, as 'dalo plugin approve'
    shows them, and asked for: a lock grants nothing, and --yes approves
    exactly what is shown, never more; without a terminal and without
    --yes sync refuses, exit 1, and takes back the sources it registered;
  - each package is installed into the project's scope of each provider
    it lists, and what the lock no longer holds is removed from it.
A required instruction member a package cannot be installed without is
shown with the grants, where it applies and its text, as 'dalo instruction
enable' shows it, and asked for with them; --yes enables exactly what was
shown. dalo.toml cannot enable an instruction: a recommended or optional
one stays off until you run 'dalo instruction enable' yourself. A
provider whose harness this machine lacks, or whose table states no
project scope, is skipped with a note.

--check changes nothing: it exits 1 when what is installed in the
project's scope differs from the lock (a package missing, extra, or
installed under other grants, or with a grant the lock does not hold),
and names each difference. --dry-run shows what sync would do and writes
nothing. --json prints what sync did (with --check, whether the project
matches and each difference) as JSON; it asks nothing, so what needs an
answer needs --yes.

Exit status: 0 in sync; 1 refused, not approved, out of sync (--check) or
failed; 2 bad usage.

Examples:
  dalo sync
  dalo sync --yes
  dalo sync --check
`

func init() {
	register(&command{
		name: "sync", usage: "[--json] [--yes] [--check] [--dry-run]",
		short: "install a project's locked packages into its scope", doc: syncDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.Bool("yes", false, "approve exactly what is shown, without asking")
			fs.Bool("check", false, "change nothing; exit 1 when this machine differs from the lock")
			fs.Bool("dry-run", false, "show what would change and write nothing")
		},
		run: runSync,
	})
}

// A syncTarget is one locked package on one provider this machine has.
type syncTarget struct {
	pkg   project.LockedPackage
	sel   *store.Selection // the package on the table in the project's scope
	props []store.Proposal
	// instrs are its required instructions not in force: shown and
	// asked for as 'dalo instruction enable' would write them.
	instrs []store.PendingInstruction
}

// syncReport is what --json prints: what sync did (or with --dry-run
// would ask for), and with --check whether the project matches its lock.
// The text report says the same, a line each.
type syncReport struct {
	Project      string        `json:"project"`
	DryRun       bool          `json:"dry_run,omitempty"`
	InSync       *bool         `json:"in_sync,omitempty"` // --check
	Differences  []string      `json:"differences,omitempty"`
	Registered   []string      `json:"registered"` // source ids
	Pinned       []syncPinJSON `json:"pinned"`
	Asked        []string      `json:"asked"`    // grant ids shown, not yet approved
	Approved     []string      `json:"approved"` // grant ids
	Instructions []string      `json:"instructions_enabled"`
	Installed    []syncPkgJSON `json:"installed"`
	Removed      []syncPkgJSON `json:"removed"`
	Notes        []string      `json:"notes"`
}

type syncPinJSON struct {
	Source string `json:"source"`
	From   string `json:"from"`
	To     string `json:"to"`
}

type syncPkgJSON struct {
	Package  string `json:"package"`
	Provider string `json:"provider"` // NAME@VERSION, or NAME for a removal
}

// runSync runs sync, and with --json prints its report instead of the
// text: JSON asks nothing, so without --yes what needs an answer is
// refused as without a terminal.
func runSync(e *env, fs *pflag.FlagSet) int {
	rep := &syncReport{Registered: []string{}, Pinned: []syncPinJSON{}, Asked: []string{}, Approved: []string{}, Instructions: []string{}, Installed: []syncPkgJSON{}, Removed: []syncPkgJSON{}, Notes: []string{}}
	if !e.json {
		return runSyncWith(e, fs, rep)
	}
	out := e.stdout
	e.stdout = io.Discard
	code := runSyncWith(e, fs, rep)
	e.stdout = out
	if code == exitOK || (code == exitFail && rep.InSync != nil) {
		if c := writeJSON(e, rep); c != exitOK {
			return c
		}
	}
	return code
}

func runSyncWith(e *env, fs *pflag.FlagSet, rep *syncReport) int {
	const cmd = "sync"
	if fs.NArg() != 0 {
		return usageError(e, cmd, "takes no arguments")
	}
	yes, _ := fs.GetBool("yes")
	check, _ := fs.GetBool("check")
	dry, _ := fs.GetBool("dry-run")
	if check && (yes || dry) {
		return usageError(e, cmd, "--check changes nothing; do not combine it with --yes or --dry-run")
	}
	root, proj, lock, code := openProject(e, cmd)
	if proj == nil {
		return code
	}
	rep.Project, rep.DryRun = root, dry
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	ps, err := s.InProject(root)
	if err != nil {
		return fail(e, cmd, err)
	}
	ts, err := providers.Load()
	if err != nil {
		return fail(e, cmd, err)
	}

	// Sources: registered as the lock has them, or asked for.
	unregistered, moves, err := lockedSources(s, root, lock)
	if err != nil {
		return fail(e, cmd, err)
	}
	if check {
		return syncCheck(e, s, ps, ts, lock, unregistered, moves, rep)
	}
	if code, ok := checkLocalIgnored(e, cmd, ps, ts, lock); !ok {
		return code
	}
	if len(unregistered) > 0 {
		fmt.Fprintf(e.stdout, "The lock of %s uses sources you have not registered:\n", termtext.Escape(root))
		for _, ls := range unregistered {
			fmt.Fprintf(e.stdout, "  %s: %s\n", ls.ID, termtext.Escape(lockedWhere(root, ls)))
		}
		if dry {
			for _, ls := range unregistered {
				rep.Notes = append(rep.Notes, fmt.Sprintf("would register source %s: %s", ls.ID, lockedWhere(root, ls)))
			}
			fmt.Fprintln(e.stdout, "dry run: nothing was fetched or written")
			return exitOK
		}
		if !yes && !confirm(e, cmd, fmt.Sprintf("Register and fetch these %d sources?", len(unregistered)), "register sources", "no source registered", "'dalo sync --dry-run'") {
			return exitFail
		}
	}
	// Every digest against the lock, in a scratch store, before anything
	// is registered, approved or installed.
	findings, _, err := project.Verify(proj, lock, project.Options{Progress: e.progress})
	if err != nil {
		return fail(e, cmd, err)
	}
	if len(findings) > 0 {
		for _, d := range findings {
			fmt.Fprintln(e.stderr, d)
		}
		fmt.Fprintf(e.stderr, "dalo %s: %s does not hold for %s and the commits it pins: nothing was written; run 'dalo lock --check' where dalo.toml is kept\n", cmd, project.LockFile, project.File)
		return exitFail
	}
	if dry && len(moves) > 0 {
		for _, m := range moves {
			fmt.Fprintf(e.stdout, "would pin source %s at %s (now %s)\n", m.id, m.to, m.from)
		}
		fmt.Fprintln(e.stdout, "dry run: nothing was fetched or written")
		return exitOK
	}
	// From here on sync writes the registry; undo takes that back when
	// the lock is refused.
	undo, err := registerLocked(s, root, unregistered, moves)
	if err != nil {
		return fail(e, cmd, err)
	}

	// Every digest against the lock, before anything is approved or
	// installed.
	targets, notes, mismatch, err := syncTargets(ps, ts, lock)
	if err != nil {
		return fail(e, cmd, errors.Join(err, undo()))
	}
	if len(mismatch) > 0 {
		fmt.Fprintf(e.stderr, "dalo %s: %s does not match the commits it pins:\n  %s\nnothing was installed; run 'dalo lock --check' and 'dalo lock' where dalo.toml is kept\n", cmd, filepath.Join(root, project.LockFile), strings.Join(mismatch, "\n  "))
		return takeBack(e, cmd, undo)
	}
	for _, n := range notes {
		fmt.Fprintf(e.stdout, "note: %s\n", termtext.Escape(n))
	}
	rep.Notes = append(rep.Notes, notes...)
	for _, ls := range unregistered {
		rep.Registered = append(rep.Registered, ls.ID)
	}
	for _, m := range moves {
		rep.Pinned = append(rep.Pinned, syncPinJSON{Source: m.id, From: m.from, To: m.to})
	}

	if code, goOn := approveTargets(e, cmd, s, ps.Project(), targets, yes, dry, undo, rep); !goOn {
		return code
	}

	return installTargets(e, cmd, ps, ts, root, lock, targets, dry, rep)
}

// checkLocalIgnored refuses, before anything is asked or written, to
// write dalo's entries into a project's per-user file (the hooks file of
// each table's config.project: Claude Code's .claude/settings.local.json,
// GitHub Copilot CLI's .github/copilot/settings.local.json) that git would
// commit, for any provider of the lock: the entries name a
// dispatcher in this user's store, a path of this machine. Which ignore
// rule to add, the team's .gitignore or this clone's .git/info/exclude,
// is the user's choice, and a tracked file needs 'git rm --cached', which
// is never dalo's to run: sync says how, and writes nothing.
func checkLocalIgnored(e *env, cmd string, ps *store.Store, ts *providers.Tables, lock *project.Lock) (code int, ok bool) {
	checked := map[string]bool{}
	for _, lp := range lock.Packages {
		for _, name := range lp.Providers {
			if checked[name] {
				continue
			}
			checked[name] = true
			_, pt, skip := projectTable(ps, ps.Project(), ts, name)
			if skip != "" {
				continue // skipped with a note when the targets are chosen
			}
			file, err := pt.Path(pt.Config.Hooks.Location, os.Getenv)
			if err != nil {
				return fail(e, cmd, err), false
			}
			err = project.CheckIgnored(ps.Project(), file)
			var ie *project.IgnoreError
			switch {
			case errors.As(err, &ie):
				fmt.Fprintf(e.stderr, "dalo %s: %s\n", cmd, termtext.Escape(ie.Error()))
				for _, f := range ie.Fix() {
					fmt.Fprintf(e.stderr, "  %s\n", termtext.Escape(f))
				}
				fmt.Fprintln(e.stderr, "nothing was written")
				return exitFail, false
			case errors.Is(err, project.ErrNoGit):
				fmt.Fprintf(e.stdout, "note: %s\n", termtext.Escape(err.Error()))
			case err != nil:
				return fail(e, cmd, err), false
			}
		}
	}
	return exitOK, true
}

// openProject finds the project the working directory is in and reads its
// dalo.toml and dalo.lock; proj is nil, and code the exit status, when it
// cannot.
func openProject(e *env, cmd string) (root string, proj *project.Project, lock *project.Lock, code int) {
	wd, err := os.Getwd()
	if err != nil {
		return "", nil, nil, fail(e, cmd, err)
	}
	root, err = project.Find(wd)
	if errors.Is(err, project.ErrNoProject) {
		return "", nil, nil, usageError(e, cmd, "%v", err) // as dalo lock says it
	}
	if err != nil {
		return "", nil, nil, fail(e, cmd, err)
	}
	proj, err = project.Load(root)
	if err != nil {
		return "", nil, nil, fail(e, cmd, err)
	}
	lock, err = project.ReadLock(root)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil, nil, fail(e, cmd, fmt.Errorf("%s has no %s: run 'dalo lock' there first", root, project.LockFile))
	}
	if err != nil {
		return "", nil, nil, fail(e, cmd, err)
	}
	return root, proj, lock, exitOK
}

// approveTargets shows what of targets this user has not approved, and
// only that, and approves it when they agree (or gave --yes); when they
// refuse, or approving fails, it calls undo. goOn says whether sync goes
// on to install, and code, when not, is its exit status.
func approveTargets(e *env, cmd string, s *store.Store, root string, targets []*syncTarget, yes, dry bool, undo func() error, rep *syncReport) (code int, goOn bool) {
	// The review: what this user has not approved, and only that.
	var fresh int
	var asked []store.Proposal
	for _, tg := range targets {
		var shown bool
		for _, p := range tg.props {
			if p.Exists {
				continue
			}
			if !shown {
				fmt.Fprintf(e.stdout, "Approve for %s on %s (%s):\n", tg.sel.Identity, tg.sel.Table.Name, tg.sel.Table.Key())
				shown = true
			}
			fmt.Fprintf(e.stdout, "  %s\n", termtext.Escape(describeGrant(p.Grant)))
			asked = append(asked, p)
			fresh++
		}
	}
	// A grant replaced stops the hooks installed elsewhere with the old
	// one (the user's own install of the package, another project's):
	// said before anything is asked. This project's own, sync installs
	// again.
	var stops []store.GrantUse
	for _, u := range stoppedHooks(asked) {
		if u.Project != root {
			stops = append(stops, u)
		}
	}
	warnStops(e, stops)
	instrs := showInstructions(e, targets)
	for _, p := range asked {
		rep.Asked = append(rep.Asked, p.Grant.ID)
	}
	if fresh+len(instrs) > 0 {
		if dry {
			fmt.Fprintf(e.stdout, "dry run: %s would be asked for; nothing was written\n", askedFor(fresh, len(instrs)))
			return exitOK, false
		}
		if !yes && !confirm(e, cmd, "Approve these "+askedFor(fresh, len(instrs))+"?", "approve", "nothing approved", "'dalo sync --dry-run'") {
			return takeBack(e, cmd, undo), false
		}
		// Every grant shown, in one write of the ledger.
		if len(asked) > 0 {
			if err := s.Approve(asked); err != nil {
				return fail(e, cmd, errors.Join(fmt.Errorf("approving: %w", err), undo())), false
			}
		}
		for _, p := range asked {
			fmt.Fprintf(e.stdout, "approved %s %s: grant %s\n", p.Grant.Kind, p.Grant.Item, p.Grant.ID)
			rep.Approved = append(rep.Approved, p.Grant.ID)
		}
		// Then exactly the instructions shown, as 'dalo instruction
		// enable' writes them.
		for _, in := range instrs {
			ed, err := s.EnableInstruction(in.Target, in.Asset, store.EditOptions{})
			if err != nil {
				return fail(e, cmd, fmt.Errorf("enabling %s of %s in %s: %w", in.Ref, in.Asset.Package, in.Target.File, err)), false
			}
			fmt.Fprintf(e.stdout, "%s %s (%s of %s)\n", instructionDone[ed.Action], termtext.Escape(in.Target.File), termtext.Escape(in.Ref), in.Asset.Package)
			rep.Instructions = append(rep.Instructions, in.Asset.Package+" "+in.Ref)
		}
	}

	return exitOK, true
}

// showInstructions prints the required instructions of targets not in
// force, each with where it applies and its block as enable writes it,
// and returns them: what sync asks to enable, and --yes enables, exactly.
// dalo.toml names packages, never instructions: only this user's answer
// enables one.
func showInstructions(e *env, targets []*syncTarget) []store.PendingInstruction {
	var out []store.PendingInstruction
	for _, tg := range targets {
		for _, in := range tg.instrs {
			if slices.ContainsFunc(out, func(o store.PendingInstruction) bool { return o.Asset.ID == in.Asset.ID && o.Target == in.Target }) {
				continue
			}
			fmt.Fprintf(e.stdout, "Enable %s of %s, required to install it on %s:\n", termtext.Escape(in.Ref), tg.sel.Identity, tg.sel.Table.Name)
			printTarget(e.stdout, in.Target)
			for _, line := range strings.SplitAfter(string(in.Asset.Content), "\n") {
				if line != "" {
					fmt.Fprintf(e.stdout, "  | %s\n", termtext.Escape(strings.TrimSuffix(line, "\n")))
				}
			}
			out = append(out, in)
		}
	}
	return out
}

// askedFor says what sync asks for: N grants and M instructions.
func askedFor(grants, instrs int) string {
	var parts []string
	if grants > 0 {
		parts = append(parts, plural(grants, "grant"))
	}
	if instrs > 0 {
		parts = append(parts, plural(instrs, "instruction"))
	}
	return strings.Join(parts, " and ")
}

// installTargets installs targets into the project's scope of ps, then
// removes what the lock no longer holds.
func installTargets(e *env, cmd string, ps *store.Store, ts *providers.Tables, root string, lock *project.Lock, targets []*syncTarget, dry bool, rep *syncReport) (code int) {
	disp, err := dispatcher()
	if err != nil {
		return fail(e, cmd, err)
	}
	if !dry && !planTargets(e, cmd, ps, disp, root, targets) {
		return exitFail
	}
	code = exitOK
	var done, failed []string
	for _, tg := range targets {
		sel := *tg.sel
		res, err := ps.Install(&sel, disp, store.InstallOptions{DryRun: dry})
		if err != nil {
			code = installFailed(e, cmd, err)
			failed = append(failed, sel.Identity.String()+" on "+sel.Table.Key())
			continue
		}
		done = append(done, sel.Identity.String()+" on "+res.Provider)
		verb := "installed"
		if dry {
			verb = "would install"
		}
		fmt.Fprintf(e.stdout, "%s %s on %s in %s\n", verb, sel.Identity, res.Provider, termtext.Escape(root))
		printInstall(e.stdout, res, dry)
		rep.Installed = append(rep.Installed, syncPkgJSON{Package: sel.Identity.String(), Provider: res.Provider})
	}
	extra, err := syncExtra(ps, ts, lock)
	if err != nil {
		return fail(e, cmd, err)
	}
	for _, r := range extra {
		if dry {
			fmt.Fprintf(e.stdout, "would remove %s from %s in %s\n", r.pkg, r.table.Name, termtext.Escape(root))
			continue
		}
		if _, err := ps.Remove(r.table, []string{r.pkg}, disp, false); err != nil {
			code = fail(e, cmd, err)
			continue
		}
		fmt.Fprintf(e.stdout, "removed %s from %s in %s\n", r.pkg, r.table.Name, termtext.Escape(root))
		rep.Removed = append(rep.Removed, syncPkgJSON{Package: r.pkg, Provider: r.table.Name})
	}
	if dry {
		fmt.Fprintln(e.stdout, "dry run: nothing was written")
	}
	if len(failed) > 0 {
		// Planned, and then failed writing: say what the project holds.
		fmt.Fprintf(e.stderr, "dalo %s: %s does not match its lock: installed %s; not installed %s: run 'dalo sync' again ('dalo sync --check' says what differs)\n",
			cmd, termtext.Escape(root), orNone(done), strings.Join(failed, ", "))
	}
	return code
}

// planTargets plans every install of targets before any is written: a
// sync for several harnesses installs on all of them or on none. One that
// would fail (a settings file the harness could not read, a switch that
// turns its hooks off) is said, with the rest, and nothing is installed;
// the approvals given are kept, so the next sync asks nothing again.
func planTargets(e *env, cmd string, ps *store.Store, disp store.Dispatcher, root string, targets []*syncTarget) bool {
	ok := true
	for _, tg := range targets {
		sel := *tg.sel
		if _, err := ps.Install(&sel, disp, store.InstallOptions{DryRun: true}); err != nil {
			fmt.Fprintf(e.stderr, "dalo %s: %s on %s: %s\n", cmd, sel.Identity, sel.Table.Key(), termtext.Escape(err.Error()))
			ok = false
		}
	}
	if !ok {
		fmt.Fprintf(e.stderr, "nothing was installed in %s: fix what is above, then run 'dalo sync' again (the approvals above are kept)\n", termtext.Escape(root))
	}
	return ok
}

// orNone joins s, or says none.
func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// lockedSources compares the lock's sources with the user's registry: the
// ones not registered, and the git ones whose pin sync moves to the locked
// commit. A registered source of the same id elsewhere is an error.
func lockedSources(s *store.Store, root string, lock *project.Lock) (unregistered []project.LockedSource, moves []sourceMove, err error) {
	for _, ls := range lock.Sources {
		src, err := s.LookupSource(ls.ID)
		if err != nil {
			unregistered = append(unregistered, ls)
			continue
		}
		if why := sourceDiffers(root, ls, src); why != "" {
			return nil, nil, fmt.Errorf("source %s: %s; the lock needs it as %s (rename yours, or use another id in dalo.toml)", ls.ID, why, lockedWhere(root, ls))
		}
		if src.Git != nil && src.Git.Commit != ls.Commit {
			moves = append(moves, sourceMove{id: ls.ID, from: src.Git.Commit, to: ls.Commit})
		}
	}
	return unregistered, moves, nil
}

// registerLocked registers the sources of the lock the user has not
// (unregistered) and moves the pins of moves to the locked commits; undo
// takes both back, saying what it could not. On an error it has already
// undone them, and the error says so.
func registerLocked(s *store.Store, root string, unregistered []project.LockedSource, moves []sourceMove) (undo func() error, err error) {
	var added []string
	undo = func() error {
		var errs []error
		for _, id := range slices.Backward(added) {
			if err := s.RemoveSource(id); err != nil {
				errs = append(errs, fmt.Errorf("taking back source %s, which sync registered: %w", id, err))
			}
		}
		for _, m := range moves {
			if slices.Contains(added, m.id) {
				continue // removed with its registration
			}
			if _, err := s.UpdateSource(m.id, m.from); err != nil {
				errs = append(errs, fmt.Errorf("moving the pin of source %s back to %s: %w", m.id, m.from, err))
			}
		}
		return errors.Join(errs...)
	}
	for _, ls := range unregistered {
		loc, ref := ls.Git, ls.Ref
		if loc == "" {
			loc = filepath.Join(root, filepath.FromSlash(ls.Path))
		}
		if _, err := s.AddSource(ls.ID, loc, ref); err != nil {
			return nil, errors.Join(fmt.Errorf("registering source %s: %w", ls.ID, err), undo())
		}
		added = append(added, ls.ID)
		if ls.Commit != "" {
			src, err := s.LookupSource(ls.ID)
			if err != nil {
				return nil, errors.Join(err, undo())
			}
			if src.Git != nil && src.Git.Commit != ls.Commit {
				moves = append(moves, sourceMove{id: ls.ID, from: src.Git.Commit, to: ls.Commit})
			}
		}
	}
	for i, m := range moves {
		if _, err := s.UpdateSource(m.id, m.to); err != nil {
			moves = moves[:i]
			return nil, errors.Join(fmt.Errorf("pinning source %s at the locked commit %s: %w", m.id, m.to, err), undo())
		}
	}
	return undo, nil
}

// takeBack calls undo after sync refused, and is sync's exit status:
// exitFail, with what undo could not take back said.
func takeBack(e *env, cmd string, undo func() error) int {
	if err := undo(); err != nil {
		return fail(e, cmd, err)
	}
	return exitFail
}

// A sourceMove is a git source's pin sync moves to the locked commit.
type sourceMove struct{ id, from, to string }

// lockedWhere is where the lock says a source is: its git URL (and ref),
// or its directory in the project.
func lockedWhere(root string, ls project.LockedSource) string {
	if ls.Git != "" {
		w := ls.Git
		if ls.Ref != "" {
			w += " (" + ls.Ref + ")"
		}
		return w
	}
	return filepath.Join(root, filepath.FromSlash(ls.Path))
}

// sourceDiffers says why the registered source src is not the locked ls,
// or "".
func sourceDiffers(root string, ls project.LockedSource, src store.Source) string {
	if ls.Git != "" {
		if src.Git == nil {
			return fmt.Sprintf("you registered it as the directory %s", src.Path)
		}
		want, _, err := gitrepo.ParseURL(ls.Git)
		if err != nil {
			return err.Error()
		}
		if src.Git.URL != want.String() {
			return fmt.Sprintf("you registered it at %s", src.Git.URL)
		}
		return ""
	}
	if src.Git != nil {
		return fmt.Sprintf("you registered it at %s", src.Git.URL)
	}
	if filepath.Clean(src.Path) != filepath.Join(root, filepath.FromSlash(ls.Path)) {
		return fmt.Sprintf("you registered it as the directory %s", src.Path)
	}
	return ""
}

// projectTable is the table of the harness of provider name that s finds,
// and that table in the scope of the project dir; skip says why sync
// skips the provider instead: a harness with no project scope (whichever
// version is installed), or no harness with a table. Sync has no
// --provider, so skip never says to name a table with it.
func projectTable(s *store.Store, dir string, ts *providers.Tables, name string) (t, pt *providers.Table, skip string) {
	t, _, err := s.HarnessTable(ts, name)
	if err != nil {
		if newest, ok := ts.Newest(name); ok {
			if _, perr := newest.InProject(dir); perr != nil {
				return nil, nil, perr.Error()
			}
		}
		var nh *store.NoHarnessError
		var nt *store.NoTableError
		switch {
		case errors.As(err, &nh):
			return nil, nil, nh.NoChoice()
		case errors.As(err, &nt):
			return nil, nil, nt.NoChoice()
		}
		return nil, nil, err.Error()
	}
	if pt, err = t.InProject(dir); err != nil {
		return nil, nil, err.Error()
	}
	return t, pt, ""
}

// syncTargets selects every locked package on every provider it lists
// that this machine has, computes the grants each asks for, and compares
// them with the lock: mismatch names each grant whose digest differs, is
// missing or is not asked for. notes say which providers are skipped.
func syncTargets(ps *store.Store, ts *providers.Tables, lock *project.Lock) (targets []*syncTarget, notes, mismatch []string, err error) {
	for _, lp := range lock.Packages {
		for _, name := range lp.Providers {
			t, pt, skip := projectTable(ps, ps.Project(), ts, name)
			if skip != "" {
				notes = append(notes, fmt.Sprintf("%s on %s skipped: %s", lp.Ref(), name, skip))
				continue
			}
			sel, err := ps.Select(lp.Ref(), t.Key())
			if err != nil {
				return nil, nil, nil, err
			}
			// Proposed, digested and installed in the project's scope:
			// its skills and agents directories and its hooks file, the
			// project's install records.
			sel.Table = pt
			// As dalo lock computes them: the harness's directories
			// empty, so that only the package decides.
			got, err := ps.GrantDigests(sel, noHome)
			if err != nil {
				return nil, nil, nil, err
			}
			want := map[string]string{}
			for _, g := range lp.Grants {
				if slices.Contains(g.Tables, t.Key()) {
					want[g.ID] = g.Digest
				}
			}
			props, _, err := ps.Propose(sel, nil, nil, nil, true)
			if err != nil {
				return nil, nil, nil, err
			}
			// What approval would write is what was checked, and only that.
			for _, p := range props {
				if want[p.Grant.ID] != p.Grant.Digest && got[p.Grant.ID] == want[p.Grant.ID] {
					mismatch = append(mismatch, fmt.Sprintf("grant %s would bind digest %s, which the lock does not hold", p.Grant.ID, p.Grant.Digest))
				}
			}
			for _, id := range slices.Sorted(maps.Keys(want)) {
				switch d, ok := got[id]; {
				case !ok:
					mismatch = append(mismatch, fmt.Sprintf("grant %s is locked on %s, but %s asks for no such grant there", id, t.Key(), lp.Ref()))
				case d != want[id]:
					mismatch = append(mismatch, fmt.Sprintf("grant %s: the lock says digest %s, the pinned bytes give %s", id, want[id], d))
				}
			}
			for _, id := range slices.Sorted(maps.Keys(got)) {
				if _, ok := want[id]; !ok {
					mismatch = append(mismatch, fmt.Sprintf("grant %s (digest %s) is asked for by %s on %s, and the lock holds no digest of it there (a harness version the lock was not made with: run 'dalo lock' with this dalo)", id, got[id], lp.Ref(), t.Key()))
				}
			}
			instrs, err := ps.PendingInstructions(sel)
			if err != nil {
				return nil, nil, nil, err
			}
			targets = append(targets, &syncTarget{pkg: lp, sel: sel, props: props, instrs: instrs})
		}
	}
	return targets, notes, mismatch, nil
}

// noHome places the harnesses' directories nowhere: the environment dalo
// lock digests member grants in, so that what the lock holds and what sync
// computes depend on the package alone.
func noHome(key string) string {
	if key == "HOME" {
		return string(filepath.Separator) + "nonexistent"
	}
	return ""
}

// An extraInstall is a package installed in the project's scope that the
// lock does not hold on that provider.
type extraInstall struct {
	pkg   string
	table *providers.Table
}

// syncExtra lists what the project's scope holds that the lock does not:
// each package installed on a provider the lock does not hold it on. A
// record it cannot read, or of a table this dalo does not know, is an
// error: sync would otherwise leave, and --check pass over, what it
// could not see.
func syncExtra(ps *store.Store, ts *providers.Tables, lock *project.Lock) ([]extraInstall, error) {
	var out []extraInstall
	names, err := ps.InstalledProviders()
	if err != nil {
		return nil, fmt.Errorf("listing the installs of project %s: %w", ps.Project(), err)
	}
	for _, name := range names {
		in, err := ps.Installed(name)
		if err != nil {
			return nil, fmt.Errorf("reading the installs on %s of project %s: %w", name, ps.Project(), err)
		}
		if len(in.Packages) == 0 {
			continue
		}
		t, err := ts.Resolve(name + "@" + in.Version)
		if err != nil {
			return nil, fmt.Errorf("project %s has packages installed on %s@%s: %w", ps.Project(), name, in.Version, err)
		}
		pt, err := t.InProject(ps.Project())
		if err != nil {
			return nil, fmt.Errorf("project %s has packages installed on %s: %w", ps.Project(), name, err)
		}
		for _, ip := range in.Packages {
			lp, ok := lock.Package(ip.Package)
			if !ok || !slices.Contains(lp.Providers, name) {
				out = append(out, extraInstall{pkg: ip.Package, table: pt})
			}
		}
	}
	return out, nil
}

// syncCheck is sync --check: it writes nothing and exits 1 when the
// project's scope differs from the lock.
func syncCheck(e *env, s, ps *store.Store, ts *providers.Tables, lock *project.Lock, unregistered []project.LockedSource, moves []sourceMove, rep *syncReport) int {
	var diffs []string
	for _, ls := range unregistered {
		diffs = append(diffs, fmt.Sprintf("source %s is not registered", ls.ID))
	}
	for _, m := range moves {
		diffs = append(diffs, fmt.Sprintf("source %s is pinned at %s, the lock at %s", m.id, m.from, m.to))
	}
	for _, lp := range lock.Packages {
		for _, name := range lp.Providers {
			t, _, skip := projectTable(s, ps.Project(), ts, name)
			if skip != "" {
				fmt.Fprintf(e.stdout, "note: %s on %s skipped: %s\n", lp.Ref(), name, termtext.Escape(skip))
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s on %s skipped: %s", lp.Ref(), name, skip))
				continue
			}
			in, err := ps.Installed(name)
			if err != nil {
				return fail(e, "sync", err)
			}
			ip := in.Find(lp.Ref())
			if ip == nil {
				diffs = append(diffs, fmt.Sprintf("%s is not installed on %s", lp.Ref(), name))
				continue
			}
			got := installedGrants(ip)
			for _, g := range lp.Grants {
				if !slices.Contains(g.Tables, t.Key()) {
					continue
				}
				if d, ok := got[g.ID]; ok && d != g.Digest {
					diffs = append(diffs, fmt.Sprintf("%s on %s runs grant %s with digest %s, the lock says %s", lp.Ref(), name, g.ID, d, g.Digest))
				} else if !ok {
					diffs = append(diffs, fmt.Sprintf("%s on %s does not run grant %s of the lock", lp.Ref(), name, g.ID))
				}
			}
			// And what it runs beyond the lock: a hook or member the
			// locked package no longer has.
			for _, id := range slices.Sorted(maps.Keys(got)) {
				if _, ok := lp.Digest(id, t.Key()); !ok {
					diffs = append(diffs, fmt.Sprintf("%s on %s runs grant %s (digest %s), which the lock does not hold", lp.Ref(), name, id, got[id]))
				}
			}
		}
	}
	// What the records say is installed, as the harness finds it: dalo's
	// entries in the project's files present, unchanged, and none beyond
	// the records (doctor's checks, of this project's files only).
	fs, err := ps.Doctor(store.DoctorOptions{})
	if err != nil {
		return fail(e, "sync", err)
	}
	for _, f := range fs {
		if f.Status == store.StatusProblem && strings.HasPrefix(f.Subject, ps.Project()+string(filepath.Separator)) {
			diffs = append(diffs, f.Subject+": "+f.Message)
		}
	}
	extra, err := syncExtra(ps, ts, lock)
	if err != nil {
		return fail(e, "sync", err)
	}
	for _, x := range extra {
		diffs = append(diffs, fmt.Sprintf("%s is installed on %s, and the lock does not hold it", x.pkg, x.table.Name))
	}
	inSync := len(diffs) == 0
	rep.InSync, rep.Differences = &inSync, diffs
	if len(diffs) > 0 {
		fmt.Fprintf(e.stdout, "%s differs from its lock:\n", termtext.Escape(ps.Project()))
		for _, d := range diffs {
			fmt.Fprintf(e.stdout, "  %s\n", termtext.Escape(d))
		}
		fmt.Fprintln(e.stdout, "run 'dalo sync' to make it match")
		return exitFail
	}
	fmt.Fprintf(e.stdout, "%s matches its lock\n", termtext.Escape(ps.Project()))
	return exitOK
}

// installedGrants maps every grant the installed package runs (its hooks'
// tool and hook grants, its members' grants) to its digest.
func installedGrants(ip *store.InstalledPackage) map[string]string {
	out := map[string]string{}
	for _, h := range ip.Hooks {
		out[h.Hook.ToolGrant.ID] = h.Hook.ToolGrant.Digest
		out[h.Hook.HookGrant.ID] = h.Hook.HookGrant.Digest
	}
	for _, o := range append(slices.Clone(ip.Skills), ip.Agents...) {
		if o.Grant != nil {
			out[o.Grant.ID] = o.Grant.Digest
		}
	}
	return out
}
