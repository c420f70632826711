package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"dalo/internal/termtext"
	"dalo/plan"
	"dalo/store"
)

const pluginStatusDoc = `Plugin status lists the approval ledger: every grant, what it covers, and
whether it is installed: an installed hook in force uses it, one the harness
will actually call (as 'dalo doctor' checks, without running the
dispatcher), or a skill or agent install wrote under it is where the
harness reads it. A grant an installed plan names whose hook is not in
force says why. With SOURCE:NAME, only that package's.

Examples:
  dalo plugin status
  dalo plugin status company:design-review --json
`

func init() {
	register(&command{name: "plugin status", usage: "[SOURCE:NAME] [--json]", short: "list approvals", doc: pluginStatusDoc, run: runPluginStatus})
}

type statusGrant struct {
	*plan.Grant
	Covers string `json:"covers"`
	// Installed says an installed hook in force uses this grant with this
	// digest; NotInForce, when a plan uses it but its hook is not in force,
	// says why.
	Installed  bool   `json:"installed"`
	NotInForce string `json:"not_in_force,omitempty"`
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
	forces, err := s.Forces()
	if err != nil {
		return fail(e, cmd, err)
	}
	force := map[string]store.HookForce{}
	for _, f := range forces {
		force[f.Provider+" "+f.Package+" "+f.Hook] = f
	}
	used := map[string]string{}  // grant id → the digest a plan uses
	notIn := map[string]string{} // grant id → why a hook using it is not in force
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
			// A skill or an agent is in force while it is where the
			// harness reads it: install wrote it under this grant.
			for _, o := range append(append([]store.OwnedTree(nil), ip.Skills...), ip.Agents...) {
				if o.Grant != nil {
					used[o.Grant.ID] = o.Grant.Digest
				}
			}
			for _, h := range ip.Hooks {
				used[h.Hook.ToolGrant.ID] = h.Hook.ToolGrant.Digest
				used[h.Hook.HookGrant.ID] = h.Hook.HookGrant.Digest
				if f := force[p+" "+ip.Package+" "+h.Hook.Hook]; !f.InForce {
					why := f.Why
					if why == "" {
						why = "dalo cannot tell"
					}
					for _, id := range []string{h.Hook.ToolGrant.ID, h.Hook.HookGrant.ID} {
						if notIn[id] == "" {
							notIn[id] = why
						}
					}
				}
			}
		}
	}
	out := []statusGrant{}
	for _, g := range gs {
		if fs.NArg() == 1 && g.Package != fs.Arg(0) {
			continue
		}
		sg := statusGrant{Grant: g, Covers: describeGrant(g)}
		if used[g.ID] == g.Digest {
			sg.NotInForce = notIn[g.ID]
			sg.Installed = sg.NotInForce == ""
		}
		out = append(out, sg)
	}
	if e.json {
		printJSON(e, out)
		return exitOK
	}
	// A table the user named at install is their choice, not evidence.
	for _, p := range names {
		if in, err := s.Installed(p); err == nil && in.Chosen {
			fmt.Fprintf(e.stdout, "%s@%s: installed for this version as your choice (--provider %s@%s), not one dalo found installed\n", p, in.Version, p, in.Version)
		}
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
		switch {
		case g.Installed:
			inst = " [installed]"
		case g.NotInForce != "":
			inst = " [installed, NOT in force: " + g.NotInForce + "]"
		}
		fmt.Fprintf(e.stdout, "  %s %s: digest %s%s\n    %s\n", g.Kind, g.Item, g.Digest[:12], inst, termtext.Escape(g.Covers))
	}
	return exitOK
}
