package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"dalo/internal/termtext"
	"dalo/plan"
	"dalo/providers"
	"dalo/store"
)

const pluginInstallDoc = `Plugin install activates a package on a harness. It copies the exact
approved tool bytes into a content-addressed, read-only directory of the
store, writes the package's skills and agents where the harness reads them
(an agent becomes its inline fallback skill where the harness has no
subagents), rewrites the provider's dispatch plan, and adds one dispatcher
entry per native event in use to the harness's hooks file, editing only
its own entries: every other byte of the file is kept, comments too.
{{hooks files}}

The entries call a copy of the dispatcher kept in the store (dalo-hook of
this dalo's build, else dalo itself), so that they keep working however
dalo was started (go run) and wherever you move or upgrade it, and they
name the store, so that a harness started with another environment
dispatches from this one. On an event where a required fail_closed hook is
installed, the entry blocks the action when its dispatcher cannot start or
dies, as the hook's policy would. Every write of the plan points every
entry of the provider at this dalo's dispatcher.

It refuses, writing nothing, when tool bytes differ from their grant (it
lists the files that changed), when a required member or hook is missing,
blocked, unapproved or unsupported on the provider (optional ones are
omitted and listed), when a required instruction member is not enabled in
a file the harness reads ('dalo instruction enable' works before install;
it names the command), and when the harness configuration is one the
harness would read otherwise than dalo (a key twice) or one dalo must not
replace (read-only, hard links). Instruction members are never written by
install. A skill or agent of the same name that is not dalo's, or one dalo
wrote that you changed since, is a conflict, never overwritten. 'dalo
plugin review --provider P' shows the same decision for every member.

Codex runs only the hooks you trusted in its /hooks review. --trust records
that trust for dalo's own entries, and nothing else, exactly as the review
would: it asks Codex (codex on PATH, through 'codex app-server') for the
hash of each entry and writes it into $CODEX_HOME/config.toml. Codex's
hash covers the entry (its command, timeout and matcher), not the files it
runs: dalo's own grants cover those bytes. Without --trust, install says
which entries Codex will not run yet, and 'dalo doctor' checks.

--dry-run prints the diffs of the files it would change and writes nothing.

Exit status: 0 installed; 1 refused or failed; 2 bad usage.

Examples:
  dalo plugin install company:design-review --provider claude --dry-run
  dalo plugin install company:design-review --provider codex --trust
`

func init() {
	register(&command{
		name: "plugin install", usage: "SOURCE:NAME --provider {{provider choices}} [--trust] [--dry-run]",
		short: "install an approved package on a harness", doc: pluginInstallDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.String("provider", "", "the harness to install on (NAME or NAME@VERSION)")
			fs.Bool("trust", false, "record the harness's trust for dalo's own entries ("+expandDoc("{{trust harnesses}}")+")")
			fs.Bool("dry-run", false, "print what would change and write nothing")
		},
		run: runPluginInstall,
	})
}

func runPluginInstall(e *env, fs *pflag.FlagSet) int {
	const cmd = "plugin install"
	if !packageArg(e, cmd, fs) {
		return exitUsage
	}
	provider, _ := fs.GetString("provider")
	dry, _ := fs.GetBool("dry-run")
	if provider == "" {
		return usageError(e, cmd, "--provider is required")
	}
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	disp, err := dispatcher()
	if err != nil {
		return fail(e, cmd, err)
	}
	trust, _ := fs.GetBool("trust")
	tg, code := findInstallTarget(e, s, cmd, provider, trust)
	if tg == nil {
		return code
	}
	tg.opt.DryRun = dry
	sel, err := s.Select(fs.Arg(0), tg.t.Key())
	if err != nil {
		return fail(e, cmd, err)
	}
	res, err := s.Install(sel, disp, tg.opt)
	if err != nil {
		return installFailed(e, cmd, err)
	}
	verb := "installed"
	if dry {
		verb = "would install"
	}
	fmt.Fprintf(e.stdout, "%s %s on %s\n", verb, sel.Identity, res.Provider)
	tg.notes(res, disp)
	printInstall(e.stdout, res, dry)
	if dry {
		printDiffs(e.stdout, res)
	}
	return exitOK
}

// printDiffs ends a dry run of install: the diffs of the files it would
// change.
func printDiffs(w io.Writer, res *store.InstallResult) {
	if res.Diff == "" {
		fmt.Fprintf(w, "%s would not change\n", res.Config)
	} else {
		fmt.Fprint(w, res.Diff)
	}
	fmt.Fprint(w, res.TrustDiff)
	fmt.Fprintln(w, "dry run: nothing was written")
}

// An installTarget is the table install uses, and how: the table of
// exactly the harness the user runs, unless they name one.
type installTarget struct {
	t        *providers.Table
	opt      store.InstallOptions
	provider string         // as the user wrote it
	h        *store.Harness // the harness found, or nil
	herr     error          // why none was found
}

// findInstallTarget resolves --provider for install and update: a table
// named NAME@VERSION is the user's choice; a bare NAME is the table of
// the harness of that name installed, which must exist, shipped or
// verified on this machine (the store's local tables). With trust, the
// harness is what install asks for the hashes of its entries. It reports
// what goes wrong and returns nil with the exit status.
func findInstallTarget(e *env, s *store.Store, cmd, provider string, trust bool) (*installTarget, int) {
	ts, err := s.Tables()
	if err != nil {
		return nil, fail(e, cmd, err)
	}
	tg := &installTarget{provider: provider, opt: store.InstallOptions{Trust: trust}}
	tg.h, tg.herr = s.FindHarness(ts, strings.SplitN(provider, "@", 2)[0])
	if strings.Contains(provider, "@") {
		if tg.t, err = ts.Resolve(provider); err != nil {
			return nil, usageError(e, cmd, "%v", err)
		}
		// The table of the harness found is evidence, named or not.
		tg.opt.Chosen = tg.h == nil || tg.h.Table != tg.t
	} else {
		if _, ok := ts.Newest(provider); !ok {
			return nil, usageError(e, cmd, "unknown provider %s; known: %s", provider, strings.Join(store.Providers(), ", "))
		}
		if tg.t, tg.h, err = s.HarnessTable(ts, provider); err != nil {
			fmt.Fprintf(e.stderr, "dalo %s: %v\nnothing was written\n", cmd, err)
			return nil, exitFail
		}
	}
	if trust {
		// Before anything is planned: a flag that cannot apply.
		if err := store.TrustRecordable(tg.t); err != nil {
			return nil, usageError(e, cmd, "%v", err)
		}
	}
	if tg.h != nil {
		tg.opt.Harness = tg.h.Path
	} else if trust {
		fmt.Fprintf(e.stderr, "dalo %s: --trust: no %s to ask for the hash of dalo's entries: %v\nnothing was written\n", cmd, tg.t.Harness, tg.herr)
		return nil, exitFail
	}
	return tg, exitOK
}

// notes adds to res what install says of the table it used and of the
// dispatcher the entries call.
func (tg *installTarget) notes(res *store.InstallResult, disp store.Dispatcher) {
	t, h := tg.t, tg.h
	switch {
	case tg.opt.Chosen && h != nil && h.Table != t:
		res.Notes = append(res.Notes, fmt.Sprintf("%s is your choice (--provider %s), not evidence: the %s found is %s (%s)", t.Key(), tg.provider, t.Name, orOutput(h), h.Path))
	case tg.opt.Chosen && h == nil:
		res.Notes = append(res.Notes, fmt.Sprintf("%s is your choice (--provider %s), not evidence: %v", t.Key(), tg.provider, tg.herr))
	}
	if t.Verified != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("%s: %s", t.Key(), store.VerifiedNote(t)))
	}
	if !disp.Hook && len(res.Hooks) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("no %s of this dalo's build beside it: the harness entries call 'dalo hook dispatch', which adds more than twice dalo-hook's overhead to every tool call (build both together: go install ./cmd/...)", plan.HookBinary))
	}
}

// installFailed reports an install that refused or failed.
func installFailed(e *env, cmd string, err error) int {
	var be *store.BlockedError
	if errors.As(err, &be) {
		fmt.Fprintf(e.stderr, "dalo %s: %v\nnothing was written\n", cmd, err)
		return exitFail
	}
	return fail(e, cmd, err)
}

// orOutput is the version of h, or what its --version printed.
func orOutput(h *store.Harness) string {
	if h.Version != "" {
		return h.Version
	}
	return fmt.Sprintf("%q", h.Output)
}

func printInstall(w io.Writer, res *store.InstallResult, dry bool) {
	for _, h := range res.Hooks {
		fmt.Fprintf(w, "  hook %s\n", h)
	}
	for _, d := range res.Staged {
		fmt.Fprintf(w, "  staged %s\n", d)
	}
	for _, d := range res.Skills {
		fmt.Fprintf(w, "  skill %s\n", termtext.Escape(d))
	}
	for _, d := range res.Agents {
		fmt.Fprintf(w, "  agent %s\n", termtext.Escape(d))
	}
	for _, d := range res.Fallbacks {
		fmt.Fprintf(w, "  fallback: %s\n", termtext.Escape(d))
	}
	for _, d := range res.Omitted {
		fmt.Fprintf(w, "  omitted: %s\n", termtext.Escape(d))
	}
	for _, d := range res.Notes {
		fmt.Fprintf(w, "  note: %s\n", termtext.Escape(d))
	}
	printMoved(w, res.Moved)
	if !dry {
		if res.Diff != "" {
			fmt.Fprintf(w, "  updated %s\n", res.Config)
		} else {
			fmt.Fprintf(w, "  %s unchanged\n", res.Config)
		}
		if res.TrustDiff != "" {
			fmt.Fprintf(w, "  updated %s\n", res.TrustFile)
		}
	}
}

// printMoved lists the trust keys of the user's own hooks that a change of
// dalo's entries moves: the harness then runs them no more until its user
// trusts them again.
func printMoved(w io.Writer, moved []string) {
	for _, m := range moved {
		fmt.Fprintf(w, "  note: your hook %s: the harness knows hooks by their place, so it will skip it until you trust it again in its /hooks review\n", m)
	}
}

// dispatcher is the program the harness entries start dispatch with, for
// the running dalo (see store.FindDispatcher); install copies it into the
// store.
func dispatcher() (store.Dispatcher, error) {
	exe, err := os.Executable()
	if err != nil {
		return store.Dispatcher{}, fmt.Errorf("locating the dalo executable: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return store.Dispatcher{}, fmt.Errorf("locating the dalo executable: %w", err)
	}
	return store.FindDispatcher(exe), nil
}
