package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"dalo/internal/termtext"
	"dalo/store"
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

--exit-code makes the answer a script can ask, as git diff --exit-code:
exit 1 when a package is listed (outdated, gone or invalid), 0 when none
is. Without it, listing is success whatever it lists.

Exit status: 0 listed (outdated or not), or with --exit-code nothing to
list; 1 with --exit-code something listed, or the store or a source cannot
be read (said on stderr); 2 bad usage.

Examples:
  dalo plugin outdated
  dalo --json plugin outdated
  dalo plugin outdated --exit-code >/dev/null || echo 'run dalo plugin update'
`

func init() {
	register(&command{name: "plugin outdated", usage: "[--json] [--exit-code]", short: "list installed packages whose source changed", doc: pluginOutdatedDoc, run: runPluginOutdated,
		flags: func(fs *pflag.FlagSet) {
			fs.Bool("exit-code", false, "exit 1 when a package is listed")
		}})
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
	status := exitOK
	if exitCode, _ := fs.GetBool("exit-code"); exitCode && len(out) > 0 {
		status = exitFail
	}
	if e.json {
		if out == nil {
			out = []store.Outdated{}
		}
		if code := writeJSON(e, out); code != exitOK {
			return code
		}
		return status
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
	return status
}
