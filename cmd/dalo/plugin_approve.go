package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"dalo/internal/termtext"
	"dalo/plan"
	"dalo/store"
)

const pluginApproveDoc = `Plugin approve records your trust in tools, hooks, skills and agents of a
package for one provider, in the approval ledger ($DALO_HOME/grants/<grant-id>.json). A tool
grant binds the package, the sha256, size and exec bit of every tool file
and the invocation contract (runtime, argv, env, cwd, inputs, capabilities,
platforms); a hook grant binds its event binding (subject, phase, every native
event it runs on, matcher, bindings), its effect, its tool's grant, and what a
failure does and when the hook counts (failure_policy, error_visibility,
timeout_ms, requirement): each changes what trusting the hook means. A
member grant (--member skill:NAME or agent:NAME) binds the exact bytes
install writes where the harness reads them: every file of a skill's
directory, or an agent's file, with sha256, size and exec bit. The harness
runs what a skill or agent says (inline commands, allowed tools, hooks,
permission modes) without dalo in between, so install writes none
without one. Lists are bound as written, in order. Any
change to what a grant binds needs a new approval; install checks it, and
dispatch holds every run to it.

Approving a hook proposes its tool too. It shows what it would grant and
asks for confirmation on a terminal; without a terminal it refuses unless
--yes is given. Selecting, validating, reviewing and installing grant
nothing.

A new grant replaces the one an installed hook runs with: that hook stops
running (dispatch fails it under its failure policy) until 'dalo plugin
install' runs again. Approve warns before it asks, and names the command.

Exit status: 0 approved; 1 refused, invalid package or store error; 2 bad usage.

Examples:
  dalo plugin approve company:design-review --provider claude --all
  dalo plugin approve company:design-review --provider codex --hook design-context --yes
`

func init() {
	register(&command{
		name: "plugin approve", usage: "SOURCE:NAME --provider P [--tool ID]... [--hook ID]... [--member KIND:NAME]... [--all] [--yes]",
		short: "approve tools, hooks, skills and agents of a package", doc: pluginApproveDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.String("provider", "", "the provider the grants are for (NAME or NAME@VERSION)")
			fs.StringArray("tool", nil, "approve this tool (repeatable)")
			fs.StringArray("hook", nil, "approve this hook and its tool (repeatable)")
			fs.StringArray("member", nil, "approve this skill or agent, as "+expandDoc("{{member refs}}")+" (repeatable)")
			fs.Bool("all", false, "approve every tool, hook, skill and agent the provider supports")
			fs.Bool("yes", false, "do not ask for confirmation")
		},
		run: runPluginApprove,
	})
}

func runPluginApprove(e *env, fs *pflag.FlagSet) int {
	const cmd = "plugin approve"
	if !packageArg(e, cmd, fs) {
		return exitUsage
	}
	provider, _ := fs.GetString("provider")
	tools, _ := fs.GetStringArray("tool")
	hooks, _ := fs.GetStringArray("hook")
	members, _ := fs.GetStringArray("member")
	all, _ := fs.GetBool("all")
	yes, _ := fs.GetBool("yes")
	if provider == "" {
		return usageError(e, cmd, "--provider is required: grants are per provider")
	}
	if all && len(tools)+len(hooks)+len(members) > 0 {
		return usageError(e, cmd, "--all approves everything; do not combine it with --tool, --hook or --member")
	}
	if !all && len(tools)+len(hooks)+len(members) == 0 {
		return usageError(e, cmd, "name what to approve: --tool ID, --hook ID, --member KIND:NAME or --all")
	}
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	provider, note := tableFor(s, provider)
	sel, err := s.Select(fs.Arg(0), provider)
	if err != nil {
		return fail(e, cmd, err)
	}
	if note != "" {
		fmt.Fprintf(e.stdout, "%s\n", note)
	}
	props, skipped, err := s.Propose(sel, tools, hooks, members, all)
	if err != nil {
		return fail(e, cmd, err)
	}
	for _, sk := range skipped {
		fmt.Fprintf(e.stdout, "skipped: %s\n", termtext.Escape(sk))
	}
	var fresh []store.Proposal
	for _, p := range props {
		if p.Exists {
			fmt.Fprintf(e.stdout, "already approved: %s %s (grant %s)\n", p.Grant.Kind, p.Grant.Item, p.Grant.ID)
			continue
		}
		fresh = append(fresh, p)
	}
	if len(fresh) == 0 {
		fmt.Fprintln(e.stdout, "nothing new to approve")
		stillChanged(e, s, sel)
		return exitOK
	}
	acts, err := s.MemberActions(sel, sel.Table, os.Getenv)
	if err != nil {
		return fail(e, cmd, err)
	}
	fmt.Fprintf(e.stdout, "Approve for %s (%s):\n", sel.Table.Name, sel.Table.Key())
	for _, p := range fresh {
		fmt.Fprintf(e.stdout, "  %s\n", termtext.Escape(describeGrant(p.Grant)))
		if p.Why != "" {
			fmt.Fprintf(e.stdout, "    (%s)\n", p.Why)
		}
		// What the member makes the harness do by itself, before the
		// question: no dispatcher stands between it and the harness.
		for i := range acts {
			if plan.IsMemberKind(p.Grant.Kind) && store.MemberKey(acts[i].Ref) == p.Grant.Kind+":"+p.Grant.Item {
				powers, listed, err := powersOf(sel.Table, &acts[i])
				if err != nil {
					return fail(e, cmd, err)
				}
				writePowers(e.stdout, "    ", sel.Table.Key(), p.Grant.Kind, powers, listed, noPowers(sel.Table, p.Grant.Kind))
			}
		}
	}
	stops := stoppedHooks(fresh)
	warnStops(e, stops)
	if !yes && !confirm(e, cmd, fmt.Sprintf("Approve these %d grants?", len(fresh)), "approve", "nothing approved", fmt.Sprintf("'dalo plugin review %s --provider %s'", sel.Identity, sel.Table.Name)) {
		return exitFail
	}
	if err := s.Approve(fresh); err != nil {
		return fail(e, cmd, err)
	}
	for _, p := range fresh {
		fmt.Fprintf(e.stdout, "approved %s %s: grant %s\n", p.Grant.Kind, p.Grant.Item, p.Grant.ID)
	}
	stillChanged(e, s, sel)
	if len(stops) > 0 {
		fmt.Fprintf(e.stdout, "installed hooks of %s on %s stopped running: run 'dalo plugin install %s --provider %s' to run them again with these grants\n", sel.Identity, sel.Table.Name, sel.Identity, sel.Table.Name)
	}
	return exitOK
}

// stillChanged names, as review and install do, the one command that
// renews what of the package still does not match its grants: approving
// one changed tool leaves another's hooks failing.
func stillChanged(e *env, s *store.Store, sel *store.Selection) {
	if cmd := s.ReapproveCommand(sel); cmd != "" {
		fmt.Fprintf(e.stdout, "grants of %s on %s still differ from the package: approve them again with '%s'\n", sel.Identity, sel.Table.Name, cmd)
	}
}

// confirm asks question on the terminal and says whether the user said
// yes; act says what yes does ("approve") and none what a no leaves
// ("nothing approved"). Without a terminal it refuses, naming review, the
// command that shows what the user would agree to, and --yes.
func confirm(e *env, cmd, question, act, none, review string) bool {
	if e.json {
		// The question would be read by a program, not a person.
		fmt.Fprintf(e.stderr, "dalo %s: refusing to %s without confirmation: --json asks nothing; review with %s and pass --yes\n", cmd, act, review)
		return false
	}
	if !isTerminal(e.stdin) {
		fmt.Fprintf(e.stderr, "dalo %s: refusing to %s without confirmation: standard input is not a terminal; review with %s and pass --yes\n", cmd, act, review)
		return false
	}
	fmt.Fprintf(e.stdout, "%s [y/N] ", question)
	line, err := bufio.NewReader(e.stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		if err != nil {
			// The answer ended without a newline (Ctrl-D): end the
			// question's line.
			fmt.Fprintln(e.stdout)
		}
		fmt.Fprintln(e.stdout, none)
		return false
	}
	return true
}

// stoppedHooks lists, once each, the installed hooks that approving props
// stops until the next install.
func stoppedHooks(props []store.Proposal) []store.GrantUse {
	var out []store.GrantUse
	seen := map[string]bool{}
	for _, p := range props {
		for _, u := range p.Stops {
			if k := u.Where() + " " + u.Package + " " + u.Hook; !seen[k] {
				seen[k] = true
				out = append(out, u)
			}
		}
	}
	return out
}

// warnStops warns, before anything is asked, of each installed hook that
// stops running once the grants it runs with are replaced.
func warnStops(e *env, stops []store.GrantUse) {
	for _, u := range stops {
		fmt.Fprintf(e.stdout, "warning: installed hook %s of %s on %s runs with a grant this replaces: from then on it does not run (%s) until you run %s\n", u.Hook, u.Package, u.Where(), u.Failing(), u.Reinstall())
	}
}

// isTerminal says whether r is a terminal a person can answer on; a
// character device such as /dev/null is not.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlReadTermios)
	return err == nil
}

// describeGrant says in one line what a grant covers.
func describeGrant(g *plan.Grant) string {
	switch g.Kind {
	case plan.GrantTool:
		var b plan.ToolBinds
		json.Unmarshal(g.Binds, &b)
		var files []string
		for _, f := range slices.Sorted(maps.Keys(b.Files)) {
			files = append(files, fmt.Sprintf("%s sha256 %s", f, b.Files[f].SHA256[:12]))
		}
		return fmt.Sprintf("tool %s of %s: %s %s %s, env %s, capabilities %s; files: %s", g.Item, g.Package, b.Runtime, b.Entry, jsonText(b.Argv), listOr(b.Env, "none"), listOr(b.Capabilities, "none"), strings.Join(files, ", "))
	case plan.GrantHook:
		var b plan.HookBinds
		json.Unmarshal(g.Binds, &b)
		return fmt.Sprintf("hook %s of %s: %s/%s %s on %s, runs tool %s, %s", g.Item, g.Package, b.Subject, b.Phase, b.Effect, strings.Join(append([]string{b.NativeEvent}, b.AlsoEvents...), ", "), b.Tool, b.FailurePolicy)
	case plan.GrantSkill, plan.GrantAgent:
		var b plan.MemberBinds
		json.Unmarshal(g.Binds, &b)
		var files []string
		for _, f := range slices.Sorted(maps.Keys(b.Files)) {
			d := b.Files[f]
			x := ""
			if d.Executable {
				x = " executable"
			}
			if f == "" {
				f = b.Member + ".md"
			}
			files = append(files, fmt.Sprintf("%s sha256 %s %d bytes%s", f, d.SHA256[:12], d.Size, x))
		}
		return fmt.Sprintf("%s %s of %s (%s), written where the harness reads it; files: %s", g.Kind, g.Item, g.Package, b.Ref, strings.Join(files, ", "))
	}
	return g.Kind + " " + g.Item
}
