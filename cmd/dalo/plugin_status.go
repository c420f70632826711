package main

import (
	"fmt"
	"sort"

	"github.com/spf13/pflag"

	"dalo/store"
	"dalo/store/plan"
)

const pluginStatusDoc = `Plugin status lists the approval ledger: every grant, what it covers, and
whether an installed plan uses it. With SOURCE:NAME, only that package's.

Examples:
  dalo plugin status
  dalo plugin status company:design-review --json
`

func init() {
	register(&command{name: "plugin status", usage: "[SOURCE:NAME] [--json]", short: "list approvals", doc: pluginStatusDoc, run: runPluginStatus})
}

type statusGrant struct {
	*plan.Grant
	Covers    string `json:"covers"`
	Installed bool   `json:"installed"` // a plan uses this grant with this digest
}

func runPluginStatus(e *env, fs *pflag.FlagSet) int {
	const cmd = "plugin status"
	if fs.NArg() > 1 {
		return usageError(e, cmd, "want at most one SOURCE:NAME")
	}
	if fs.NArg() == 1 {
		if _, _, err := store.ParsePackageRef(fs.Arg(0)); err != nil {
			return usageError(e, cmd, "%v", err)
		}
	}
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	gs, err := s.Grants()
	if err != nil {
		return fail(e, cmd, err)
	}
	used := map[string]string{}
	names, err := s.InstalledProviders()
	if err != nil {
		return fail(e, cmd, err)
	}
	for _, p := range names {
		in, err := s.Installed(p)
		if err != nil {
			return fail(e, cmd, err)
		}
		for _, ip := range in.Packages {
			for _, h := range ip.Hooks {
				used[h.Hook.ToolGrant.ID] = h.Hook.ToolGrant.Digest
				used[h.Hook.HookGrant.ID] = h.Hook.HookGrant.Digest
			}
		}
	}
	out := []statusGrant{}
	for _, g := range gs {
		if fs.NArg() == 1 && g.Package != fs.Arg(0) {
			continue
		}
		out = append(out, statusGrant{Grant: g, Covers: describeGrant(g), Installed: used[g.ID] == g.Digest})
	}
	if e.json {
		printJSON(e, out)
		return exitOK
	}
	if len(out) == 0 {
		fmt.Fprintln(e.stdout, "no grants")
		return exitOK
	}
	last := ""
	for _, g := range out {
		if g.Package+" "+g.Provider != last {
			last = g.Package + " " + g.Provider
			fmt.Fprintf(e.stdout, "%s on %s\n", g.Package, g.Provider)
		}
		inst := ""
		if g.Installed {
			inst = " [installed]"
		}
		fmt.Fprintf(e.stdout, "  %s %s: digest %s%s\n    %s\n", g.Kind, g.Item, g.Digest[:12], inst, g.Covers)
	}
	return exitOK
}

func sortStrings(s []string) { sort.Strings(s) }
