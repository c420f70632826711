package main

import (
	"fmt"
	"os"
	"strings"

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
force says why. Run in a project 'dalo sync' installed into, the
project's installs count too, and say so ("installed in project DIR").
With SOURCE:NAME, only that package's.

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
	// Project is the project of the working directory when its scope
	// ('dalo sync') installs with this grant; User, when the user's own
	// installs do too.
	Project string `json:"project,omitempty"`
	User    bool   `json:"-"`
}

// statusScope returns the digest each grant an install of scope sc runs
// with, by grant id, and adds to notIn why a hook using it is not in
// force.
func statusScope(sc *store.Store, notIn map[string]string) (map[string]string, error) {
	ids := map[string]string{}
	forces, err := sc.Forces()
	if err != nil {
		return nil, err
	}
	force := map[string]store.HookForce{}
	for _, f := range forces {
		force[f.Provider+" "+f.Package+" "+f.Hook] = f
	}
	names, err := sc.InstalledProviders()
	if err != nil {
		return nil, err
	}
	for _, p := range names {
		in, err := sc.Installed(p)
		if err != nil {
			return nil, err
		}
		for _, ip := range in.Packages {
			// A skill or an agent is in force while it is where the
			// harness reads it: install wrote it under this grant.
			for _, o := range append(append([]store.OwnedTree(nil), ip.Skills...), ip.Agents...) {
				if o.Grant != nil {
					ids[o.Grant.ID] = o.Grant.Digest
				}
			}
			for _, h := range ip.Hooks {
				ids[h.Hook.ToolGrant.ID] = h.Hook.ToolGrant.Digest
				ids[h.Hook.HookGrant.ID] = h.Hook.HookGrant.Digest
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
	return ids, nil
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
	// The user's own installs, and those of the project the working
	// directory is in, which 'dalo sync' installed into its scope.
	scopes := []*store.Store{s}
	if wd, err := os.Getwd(); err == nil {
		if ps := s.ProjectScopeOf(wd); ps != nil {
			scopes = append(scopes, ps)
		}
	}
	notIn := map[string]string{}     // grant id → why a hook using it is not in force
	inUser := map[string]string{}    // grant id → the digest the user's own installs use
	inProject := map[string]string{} // grant id → the digest the project's installs use
	project := ""
	var names []string
	for _, sc := range scopes {
		ns, err := statusScope(sc, notIn)
		if err != nil {
			return fail(e, cmd, err)
		}
		for id, d := range ns {
			if sc.Project() == "" {
				inUser[id] = d
			} else {
				inProject[id], project = d, sc.Project()
			}
		}
		if sc.Project() == "" {
			if names, err = sc.InstalledProviders(); err != nil {
				return fail(e, cmd, err)
			}
		}
	}
	out := []statusGrant{}
	for _, g := range gs {
		if fs.NArg() == 1 && g.Package != fs.Arg(0) {
			continue
		}
		sg := statusGrant{Grant: g, Covers: describeGrant(g)}
		if inUser[g.ID] == g.Digest || inProject[g.ID] == g.Digest {
			sg.NotInForce = notIn[g.ID]
			sg.Installed = sg.NotInForce == ""
			if inProject[g.ID] == g.Digest {
				sg.Project = project
			}
			sg.User = inUser[g.ID] == g.Digest
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
		if g.Project != "" {
			where := "in project " + termtext.Escape(g.Project)
			if g.User {
				where = "for you and " + where
			}
			inst = strings.Replace(inst, "[installed", "[installed "+where, 1)
		}
		fmt.Fprintf(e.stdout, "  %s %s: digest %s%s\n    %s\n", g.Kind, g.Item, g.Digest[:12], inst, termtext.Escape(g.Covers))
	}
	return exitOK
}
