package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"dalo/internal/termtext"
	"dalo/store"
)

const providersRemoveDoc = `Providers remove removes a local table: the table 'dalo providers verify'
wrote for a harness version it proved on this machine
($DALO_HOME/providers/NAME/VERSION.cue), and the recordings of that run
beside it. A table dalo ships cannot be removed; a local table that is
broken, or that a table this dalo ships for the same version replaces, can.

It refuses while packages are installed for that version from the local
table: doctor, update and remove check them against the table they were
planned from. Remove them, or install them for another version, first.
Install then refuses the version again until it is verified anew.

Examples:
  dalo providers remove claude@2.1.340
`

func init() {
	register(&command{
		name:  "providers remove",
		usage: "NAME@VERSION",
		short: "remove a table verified on this machine",
		doc:   providersRemoveDoc,
		run:   runProvidersRemove,
	})
}

func runProvidersRemove(e *env, fs *pflag.FlagSet) int {
	const cmd = "providers remove"
	if fs.NArg() != 1 {
		return usageError(e, cmd, "want exactly one NAME@VERSION, got %d arguments", fs.NArg())
	}
	name, version, ok := strings.Cut(fs.Arg(0), "@")
	if !ok || name == "" || version == "" {
		return usageError(e, cmd, "want NAME@VERSION, such as claude@2.1.340: a local table is of one exact version")
	}
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	removed, err := s.RemoveLocalTable(name, version)
	for _, p := range removed {
		fmt.Fprintf(e.stdout, "removed %s\n", termtext.Escape(p))
	}
	if errors.Is(err, store.ErrNoLocalTable) {
		return usageError(e, cmd, "%v (the tables dalo ships cannot be removed; 'dalo providers' lists the local ones)", err)
	}
	if err != nil {
		return fail(e, cmd, err)
	}
	return exitOK
}
