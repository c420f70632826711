package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"dalo/engine"
	"dalo/providers"
	"dalo/store"
	"dalo/store/plan"
)

const sourceAddDoc = `Source add registers a source directory under an identity of your choice.
The registry is yours: a package cannot add or trust a source by naming it.
References to other sources (kind:source:selector) resolve through it when
you review, approve or install; validate never consults it.

PATH is a source directory: the one holding plugins/<name>/PLUGIN.toml.

Exit status: 0 added; 1 the id is already registered or the store cannot be
written; 2 bad usage, an invalid ID, or a PATH that is no directory.

Examples:
  dalo source add company ~/src/company-agents
`

const sourceListDoc = `Source list prints the registered sources: identity and directory.

Examples:
  dalo source list
  dalo --json source list
`

const sourceRemoveDoc = `Source remove unregisters a source. It refuses while grants or
installations of its packages exist.

Examples:
  dalo source remove company
`

func init() {
	register(&command{name: "source add", usage: "ID PATH", short: "register a source directory", doc: sourceAddDoc, run: runSourceAdd})
	register(&command{name: "source list", usage: "[--json]", short: "list registered sources", doc: sourceListDoc, run: runSourceList})
	register(&command{name: "source remove", usage: "ID", short: "unregister a source", doc: sourceRemoveDoc, run: runSourceRemove})
}

// openStore opens the store at $DALO_HOME (or its default).
func openStore(e *env, cmd string) (*store.Store, bool) {
	dir, err := plan.Home()
	if err == nil {
		var s *store.Store
		if s, err = store.Open(dir); err == nil {
			return s, true
		}
	}
	fmt.Fprintf(e.stderr, "dalo %s: %v\n", cmd, err)
	return nil, false
}

// fail reports err for cmd and returns exitFail, or exitUsage for an
// unknown provider: a --provider no table describes is bad usage, in every
// command.
func fail(e *env, cmd string, err error) int {
	if errors.Is(err, providers.ErrUnknownProvider) {
		return usageError(e, cmd, "%v", err)
	}
	fmt.Fprintf(e.stderr, "dalo %s: %v\n", cmd, err)
	return exitFail
}

func runSourceAdd(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() != 2 {
		return usageError(e, "source add", "want ID and PATH, got %d arguments", fs.NArg())
	}
	if err := engine.CheckSourceID(fs.Arg(0)); err != nil {
		return usageError(e, "source add", "%v", err)
	}
	s, ok := openStore(e, "source add")
	if !ok {
		return exitFail
	}
	src, err := s.AddSource(fs.Arg(0), fs.Arg(1))
	if errors.Is(err, engine.ErrNoSource) {
		// As for validate: a PATH that is no directory is a bad invocation.
		return usageError(e, "source add", "%v", err)
	}
	if err != nil {
		return fail(e, "source add", err)
	}
	fmt.Fprintf(e.stdout, "added source %s: %s\n", src.ID, src.Path)
	return exitOK
}

func runSourceList(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() != 0 {
		return usageError(e, "source list", "takes no arguments")
	}
	s, ok := openStore(e, "source list")
	if !ok {
		return exitFail
	}
	srcs, err := s.Sources()
	if err != nil {
		return fail(e, "source list", err)
	}
	if e.json {
		if srcs == nil {
			srcs = []store.Source{}
		}
		printJSON(e, srcs)
		return exitOK
	}
	if len(srcs) == 0 {
		fmt.Fprintln(e.stdout, "no sources; add one with 'dalo source add ID PATH'")
	}
	for _, x := range srcs {
		fmt.Fprintf(e.stdout, "%s\t%s\n", x.ID, x.Path)
	}
	return exitOK
}

func runSourceRemove(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() != 1 {
		return usageError(e, "source remove", "want exactly one source ID, got %d arguments", fs.NArg())
	}
	s, ok := openStore(e, "source remove")
	if !ok {
		return exitFail
	}
	if err := s.RemoveSource(fs.Arg(0)); err != nil {
		return fail(e, "source remove", err)
	}
	fmt.Fprintf(e.stdout, "removed source %s\n", fs.Arg(0))
	return exitOK
}
