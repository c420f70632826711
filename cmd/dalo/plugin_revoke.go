package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"dalo/internal/termtext"
	"dalo/plan"
	"dalo/store"
)

const pluginRevokeDoc = `Plugin revoke removes grants of a package from the ledger: the tools,
hooks, skills and agents named, or all of its grants. Dispatch re-checks the ledger before every
run, so a revoked hook stops running at the next harness event even while
the harness configuration still calls dalo. An installed hook whose grant
is revoked is not run, and fails under its failure policy at every event
it matches: you see a failure message each time (and with fail_closed the
action it guards is denied, or a stop asks for another workflow pass, at
most %d in a row) until 'dalo plugin remove' takes the package away. Revoke
names each such hook.

A harness reads a skill or an agent with no dispatcher in between, so
revoking a member's grant takes the member away from where the harness
reads it, on every provider it is installed on, changes since install
included: it moves, whole, into the store ($DALO_HOME/revoked/), and revoke
says where.

Examples:
  dalo plugin revoke company:design-review
  dalo plugin revoke company:design-review --hook design-context
  dalo plugin revoke company:design-review --member skill:design-review
`

func init() {
	register(&command{
		name: "plugin revoke", usage: "SOURCE:NAME [--tool ID]... [--hook ID]... [--member KIND:NAME]...",
		short: "remove approvals", doc: fmt.Sprintf(pluginRevokeDoc, plan.FailClosedPasses),
		flags: func(fs *pflag.FlagSet) {
			fs.StringArray("tool", nil, "revoke this tool's grants (repeatable)")
			fs.StringArray("hook", nil, "revoke this hook's grants (repeatable)")
			fs.StringArray("member", nil, "revoke this skill's or agent's grants, as "+expandDoc("{{member refs}}")+", and take it away (repeatable)")
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
	members, _ := fs.GetStringArray("member")
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	gs, gone, err := s.Revoke(fs.Arg(0), tools, hooks, members)
	for _, w := range gone {
		fmt.Fprintf(e.stdout, "took %s away on %s: %s moved to %s\n", termtext.Escape(w.Ref), w.Provider, termtext.Escape(w.From), termtext.Escape(w.To))
	}
	if err != nil {
		return fail(e, cmd, err)
	}
	// Every installed hook that runs with a revoked grant, once, with the
	// first such grant: dispatch checks the tool grant before the hook's.
	var stuck []store.GrantUse
	why := map[string]*plan.Grant{}
	for _, g := range gs {
		fmt.Fprintf(e.stdout, "revoked %s %s on %s: grant %s\n", g.Kind, termtext.Escape(g.Item), g.Provider, termtext.Escape(g.ID))
		uses, err := s.GrantUses(g.ID)
		if err != nil {
			return fail(e, cmd, err)
		}
		for _, u := range uses {
			k := u.Where() + " " + u.Package + " " + u.Hook
			// Dispatch checks the hook grant first: with both revoked,
			// its message names the hook grant.
			if why[k] == nil || g.Kind == plan.GrantHook {
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
		g := why[u.Where()+" "+u.Package+" "+u.Hook]
		fmt.Fprintf(e.stdout, "hook %s stays installed on %s and no longer runs: %s (\"not run: %s grant: %s is revoked\")\n", u.Hook, u.Where(), u.Failing(), g.Kind, g.ID)
		if u.Project != "" {
			fmt.Fprintf(e.stdout, "  until you approve it again and run %s\n", u.Reinstall())
			continue
		}
		fmt.Fprintf(e.stdout, "  until you run 'dalo plugin remove %s --provider %s' (or approve it again and run %s)\n", u.Package, u.Provider, u.Reinstall())
	}
	return exitOK
}
