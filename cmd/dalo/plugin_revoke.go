package main

import (
	"fmt"

	"github.com/spf13/pflag"
)

const pluginRevokeDoc = `Plugin revoke removes grants of a package from the ledger: the tools and
hooks named, or all of its grants. Dispatch re-checks the ledger before every
run, so a revoked hook stops running at the next harness event even while
the harness configuration still calls dalo; 'dalo plugin remove' takes the
entries away.

Examples:
  dalo plugin revoke company:design-review
  dalo plugin revoke company:design-review --hook design-context
`

func init() {
	register(&command{
		name: "plugin revoke", usage: "SOURCE:NAME [--tool ID]... [--hook ID]...",
		short: "remove approvals", doc: pluginRevokeDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.StringArray("tool", nil, "revoke this tool's grants (repeatable)")
			fs.StringArray("hook", nil, "revoke this hook's grants (repeatable)")
		},
		run: runPluginRevoke,
	})
}

func runPluginRevoke(e *env, fs *pflag.FlagSet) int {
	const cmd = "plugin revoke"
	if !packageArg(e, cmd, fs) {
		return exitUsage
	}
	tools, _ := fs.GetStringArray("tool")
	hooks, _ := fs.GetStringArray("hook")
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	gs, err := s.Revoke(fs.Arg(0), tools, hooks)
	if err != nil {
		return fail(e, cmd, err)
	}
	for _, g := range gs {
		fmt.Fprintf(e.stdout, "revoked %s %s on %s: grant %s\n", g.Kind, g.Item, g.Provider, g.ID)
	}
	fmt.Fprintln(e.stdout, "revoked hooks stop running at the next dispatch; 'dalo plugin remove' takes their harness entries away")
	return exitOK
}
