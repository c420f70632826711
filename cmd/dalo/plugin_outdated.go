package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"dalo/internal/termtext"
)

const pluginOutdatedDoc = `Plugin outdated lists the installed packages whose source now differs from
what you approved and installed, and how: tool bytes and contracts, hooks,
members added or removed, the bytes of skills and agents, or the package
gone from its source or no longer valid there, with the unified diff of
each changed text file (a tool's, a skill's, an agent's). It compares with the source
as it is pinned (a git source: 'dalo source update' fetches and moves the
pin) or, for a directory, as it is now. It never fetches and writes
nothing. 'dalo plugin update' moves a package, asking only for what changed.

--json prints a list of {package, provider, state (outdated, gone,
invalid), why, installed_commit, source_commit, grants: [{kind, item,
state (changed, new, gone), why}], differences: [{item, field, old,
new}], file_diffs: [{item, file, diff, note}]}.

Exit status: 0 listed (outdated or not); 1 the store or a source cannot
be read.

Examples:
  dalo plugin outdated
  dalo --json plugin outdated
`

func init() {
	register(&command{name: "plugin outdated", usage: "[--json]", short: "list installed packages whose source changed", doc: pluginOutdatedDoc, run: runPluginOutdated})
}

func runPluginOutdated(e *env, fs *pflag.FlagSet) int {
	const cmd = "plugin outdated"
	if fs.NArg() != 0 {
		return usageError(e, cmd, "takes no arguments")
	}
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	out, err := s.Outdated()
	if err != nil {
		return fail(e, cmd, err)
	}
	if e.json {
		if out == nil {
			return writeJSON(e, []any{})
		}
		return writeJSON(e, out)
	}
	if len(out) == 0 {
		fmt.Fprintln(e.stdout, "every installed package is as its source has it")
		return exitOK
	}
	for _, o := range out {
		pkg := termtext.Escape(o.Package)
		at := ""
		if o.To != "" {
			at = ": commit " + short(o.From) + " -> " + short(o.To)
			if o.From == "" {
				at = ": commit " + short(o.To)
			}
		}
		switch o.State {
		case "gone":
			fmt.Fprintf(e.stdout, "%s on %s: gone from its source%s\n  %s\n  it keeps running what you approved; 'dalo plugin remove %s --provider %s' takes it away\n", pkg, o.Provider, atCommit(o.To), termtext.Escape(o.Why), pkg, o.Provider)
			continue
		case "invalid":
			fmt.Fprintf(e.stdout, "%s on %s: its source's version does not validate%s\n  'dalo plugin review %s' shows why; it keeps running what you approved\n", pkg, o.Provider, atCommit(o.To), pkg)
			continue
		}
		fmt.Fprintf(e.stdout, "%s on %s%s\n", pkg, o.Provider, at)
		writeDifferences(e.stdout, "  ", o.Differences, nil)
		writeFileDiffs(e.stdout, "  ", o.FileDiffs)
		writeGrantChanges(e.stdout, "  ", o.Grants, false)
		fmt.Fprintf(e.stdout, "  'dalo plugin update %s --provider %s' moves it\n", pkg, o.Provider)
	}
	return exitOK
}
