package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"dalo/store"
)

const providersUseDoc = `Providers use names the harness binary dalo reads the version of, for
install and doctor, instead of the one named for the provider on PATH
({{providers}}): for a harness installed elsewhere,
or one of several. dalo runs it with --version (at most 30 seconds: a first
start may unpack the harness before it answers) and says which version it
is and whether dalo has a table, with evidence, for exactly that version.
The path is kept in the store. Without PATH, it forgets it: PATH is used
again.

Install uses the table of exactly the version it finds, shipped or
verified on this machine, and refuses a version no table covers: prove it
with 'dalo providers verify NAME', or name a table with --provider
NAME@VERSION to install for it anyway (recorded as your choice, not as
evidence).

Examples:
  dalo providers use claude /opt/claude/bin/claude
  dalo providers use claude
`

func init() {
	register(&command{
		name:  "providers use",
		usage: "NAME [PATH]",
		short: "name the harness binary whose version install uses",
		doc:   providersUseDoc,
		run:   runProvidersUse,
	})
}

func runProvidersUse(e *env, fs *pflag.FlagSet) int {
	const cmd = "providers use"
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return usageError(e, cmd, "want NAME [PATH]")
	}
	name := fs.Arg(0)
	if !slices.Contains(store.Providers(), name) {
		return usageError(e, cmd, "unknown provider %s; known: %s", name, strings.Join(store.Providers(), ", "))
	}
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	ts, err := s.Tables()
	if err != nil {
		return fail(e, cmd, err)
	}
	h, err := s.UseHarness(ts, name, fs.Arg(1))
	if err != nil {
		return fail(e, cmd, err)
	}
	if h == nil {
		fmt.Fprintf(e.stdout, "%s: dalo finds it on PATH again\n", name)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%s: %s, version %s\n", name, h.Path, orOutput(h))
	switch {
	case h.Table != nil && h.Table.Verified != nil:
		fmt.Fprintf(e.stdout, "  dalo has a table for it: %s; %s\n", h.Table.Key(), store.VerifiedNote(h.Table))
	case h.Table != nil:
		fmt.Fprintf(e.stdout, "  dalo has a table for it: %s\n", h.Table.Key())
	default:
		fmt.Fprintf(e.stdout, "  dalo has no table for it (evidence for %s): install refuses it; prove it on this machine with 'dalo providers verify %s', or name a table with --provider %s@VERSION\n", strings.Join(store.Versions(ts, name), ", "), name, name)
	}
	return exitOK
}
