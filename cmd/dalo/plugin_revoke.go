package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"dalo/plan"
	"dalo/store"
)

const pluginRevokeDoc = `Plugin revoke removes grants of a package from the ledger: the tools and
hooks named, or all of its grants. Dispatch re-checks the ledger before every
run, so a revoked hook stops running at the next harness event even while
the harness configuration still calls dalo. An installed hook whose grant
is revoked is not run, and fails under its failure policy at every event
it matches: you see a failure message each time (and with fail_closed the
action it guards is denied, or a stop asks for another workflow pass, at
most %d in a row) until 'dalo plugin remove' takes the package away. Revoke
names each such hook.

Examples:
  dalo plugin revoke company:design-review
  dalo plugin revoke company:design-review --hook design-context
`

func init() {
	register(&command{
		name: "plugin revoke", usage: "SOURCE:NAME [--tool ID]... [--hook ID]...",
		short: "remove approvals", doc: fmt.Sprintf(pluginRevokeDoc, plan.FailClosedPasses),
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
	// Every installed hook that runs with a revoked grant, once, with the
	// first such grant: dispatch checks the tool grant before the hook's.
	var stuck []store.GrantUse
	why := map[string]*plan.Grant{}
	for _, g := range gs {
		fmt.Fprintf(e.stdout, "revoked %s %s on %s: grant %s\n", g.Kind, g.Item, g.Provider, g.ID)
		uses, err := s.GrantUses(g.ID)
		if err != nil {
			return fail(e, cmd, err)
		}
		for _, u := range uses {
			k := u.Provider + " " + u.Package + " " + u.Hook
			// Dispatch checks the hook grant first: with both revoked,
			// its message names the hook grant.
			if why[k] == nil || g.Kind == "hook" {
				if why[k] == nil {
					stuck = append(stuck, u)
				}
				why[k] = g
			}
		}
	}
	if len(stuck) == 0 {
		fmt.Fprintln(e.stdout, "no installed hook runs with these grants")
	}
	for _, u := range stuck {
		g := why[u.Provider+" "+u.Package+" "+u.Hook]
		fmt.Fprintf(e.stdout, "hook %s stays installed on %s and no longer runs: %s (\"not run: %s grant: %s is revoked\")\n", u.Hook, u.Provider, u.Failing(), g.Kind, g.ID)
		fmt.Fprintf(e.stdout, "  until you run 'dalo plugin remove %s --provider %s' (or approve it again and run 'dalo plugin install %s --provider %s')\n", u.Package, u.Provider, u.Package, u.Provider)
	}
	return exitOK
}
