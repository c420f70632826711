package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"dalo/internal/termtext"
	"dalo/store"
)

const pluginRemoveDoc = `Plugin remove uninstalls packages from a harness: what it staged, the
skills and agents dalo wrote for them (exactly those files), their place in
the dispatch plan, the dispatcher entries no installed package needs any
more, and the harness trust dalo recorded for those entries (install
--trust). Nothing else in the harness configuration changes. The entries
still in use are pointed at this dalo's dispatcher, since the plan they
read is written by this dalo. Grants stay in the ledger: revoke removes
them.

It refuses, writing nothing, to remove a package that another package
installed on the harness requires; remove both in one command. It lists
what it removed and what it kept, and why: a file you changed since dalo
wrote it is kept, and so is a skill directory that still holds it or files
dalo did not write; the files of that directory dalo removed are listed one
by one. No path is listed as both. Where the harness knows hooks by their
place (Codex), it names each hook of yours whose place the removal moves.
--dry-run prints what would change and writes nothing.

Exit status: 0 removed; 1 refused or failed; 2 bad usage.

Examples:
  dalo plugin remove company:design-review --provider claude
  dalo plugin remove company:base-style company:design-review --provider codex --dry-run
`

func init() {
	register(&command{
		name: "plugin remove", usage: "SOURCE:NAME... --provider P [--dry-run]",
		short: "uninstall packages from a harness", doc: pluginRemoveDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.String("provider", "", "the harness to remove them from")
			fs.Bool("dry-run", false, "print what would change and write nothing")
		},
		run: runPluginRemove,
	})
}

func runPluginRemove(e *env, fs *pflag.FlagSet) int {
	const cmd = "plugin remove"
	if fs.NArg() == 0 {
		return usageError(e, cmd, "want at least one SOURCE:NAME")
	}
	for _, a := range fs.Args() {
		if _, _, err := store.ParsePackageRef(a); err != nil {
			return usageError(e, cmd, "%v", err)
		}
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
	// The store's tables: what is installed may have been planned from a
	// table verified on this machine.
	ts, err := s.Tables()
	if err != nil {
		return fail(e, cmd, err)
	}
	t, err := ts.Resolve(provider)
	if err != nil {
		return usageError(e, cmd, "%v", err)
	}
	// What is installed was planned from the table of its version.
	if in, err := s.Installed(t.Name); err == nil && in.Version != "" && !strings.Contains(provider, "@") {
		if it, err := ts.Resolve(t.Name + "@" + in.Version); err == nil {
			t = it
		}
	}
	disp, err := dispatcher()
	if err != nil {
		return fail(e, cmd, err)
	}
	res, err := s.Remove(t, fs.Args(), disp, dry)
	if err != nil {
		var be *store.BlockedError
		if errors.As(err, &be) {
			fmt.Fprintf(e.stderr, "dalo %s: %v\nnothing was written\n", cmd, err)
			return exitFail
		}
		return fail(e, cmd, err)
	}
	verb, did := "removed", "removed"
	if dry {
		verb, did = "would remove", "would remove"
	}
	for _, a := range fs.Args() {
		fmt.Fprintf(e.stdout, "%s %s from %s\n", verb, a, t.Name)
	}
	for _, p := range res.Removed {
		fmt.Fprintf(e.stdout, "  %s %s\n", did, termtext.Escape(p))
	}
	for _, p := range res.Kept {
		fmt.Fprintf(e.stdout, "  kept %s\n", termtext.Escape(p))
	}
	for _, n := range res.Notes {
		fmt.Fprintf(e.stdout, "  note: %s\n", termtext.Escape(n))
	}
	printMoved(e.stdout, res.Moved)
	if dry {
		if res.Diff == "" {
			fmt.Fprintf(e.stdout, "%s would not change\n", res.Config)
		} else {
			fmt.Fprint(e.stdout, res.Diff)
		}
		fmt.Fprint(e.stdout, res.TrustDiff)
		fmt.Fprintln(e.stdout, "dry run: nothing was written")
		return exitOK
	}
	if res.Diff != "" {
		fmt.Fprintf(e.stdout, "  updated %s\n", res.Config)
	}
	if res.TrustDiff != "" {
		fmt.Fprintf(e.stdout, "  updated %s\n", res.TrustFile)
	}
	return exitOK
}
