package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"dalo/internal/termtext"
	"dalo/store"
)

const pluginUpdateDoc = `Plugin update moves a package installed on a harness to what its source
holds now: the commit a git source is pinned to ('dalo source update' moves
the pin), or a directory as it is. It asks again only for what changed.

It shows what differs from what is installed, old and new side by side:
manifest fields, tool files by digest, hooks, members and the bytes of
skills and agents. Then, grant by grant on the provider: a grant whose
tool bytes or contract (or the tool a hook runs) changed is asked for
again; a tool or hook the installed package did not have is asked for as
approve would; a grant the package asks for unchanged is carried over; the
grant of a tool or hook the package no longer has is revoked, and install
takes the hook away. A member added upstream is installed; a required one
that is not in force (an instruction not enabled, a package not installed)
blocks the update, as it blocks install.

It asks for confirmation on a terminal; without a terminal it refuses
unless --yes is given, which approves exactly the grants shown, nothing
else. Then it stages and installs in one step, through the same install as
'dalo plugin install' (the table of the harness version installed, the
same dispatcher, --trust for Codex's trust in dalo's entries): at every
moment the previous install or the new one is in force, never neither, and
a run killed part way is finished or undone by the next dalo command that
writes. Nothing is written when it refuses.

--dry-run shows the same, and what install would write, and writes nothing.

Exit status: 0 updated, or already current; 1 refused, invalid, not
installed, or gone from its source; 2 bad usage.

Examples:
  dalo plugin update company:design-review --provider claude --dry-run
  dalo plugin update company:design-review --provider claude
  dalo plugin update company:design-review --provider codex --trust --yes
`

func init() {
	register(&command{
		name: "plugin update", usage: "SOURCE:NAME --provider P [--dry-run] [--yes] [--trust]",
		short: "update an installed package, asking again only for what changed", doc: pluginUpdateDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.String("provider", "", "the harness the package is installed on (NAME or NAME@VERSION)")
			fs.Bool("dry-run", false, "show the update and what install would write, and write nothing")
			fs.Bool("yes", false, "approve the grants shown without asking")
			fs.Bool("trust", false, "record the harness's trust for dalo's own entries ("+expandDoc("{{trust harnesses}}")+")")
		},
		run: runPluginUpdate,
	})
}

func runPluginUpdate(e *env, fs *pflag.FlagSet) int {
	const cmd = "plugin update"
	if !packageArg(e, cmd, fs) {
		return exitUsage
	}
	provider, _ := fs.GetString("provider")
	dry, _ := fs.GetBool("dry-run")
	yes, _ := fs.GetBool("yes")
	trust, _ := fs.GetBool("trust")
	if provider == "" {
		return usageError(e, cmd, "--provider is required")
	}
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	disp, err := dispatcher()
	if err != nil {
		return fail(e, cmd, err)
	}
	tg, code := findInstallTarget(e, s, cmd, provider, trust)
	if tg == nil {
		return code
	}
	pkg := fs.Arg(0)
	sel, err := s.Select(pkg, tg.t.Key())
	if errors.Is(err, store.ErrNoPackage) {
		fmt.Fprintf(e.stderr, "dalo %s: %v\n%s stays installed as it is, and keeps running what you approved; 'dalo plugin remove %s --provider %s' takes it away\n", cmd, err, termtext.Escape(pkg), termtext.Escape(pkg), tg.t.Name)
		return exitFail
	}
	if err != nil {
		return fail(e, cmd, err)
	}
	u, err := s.PlanUpdate(sel)
	if err != nil {
		return fail(e, cmd, err)
	}
	off, err := s.NotInForce(tg.t.Name, sel.Identity.String())
	if err != nil {
		return fail(e, cmd, err)
	}
	if u.Current() && len(off) == 0 {
		fmt.Fprintf(e.stdout, "%s on %s is current%s: nothing to update\n", sel.Identity, tg.t.Name, atCommit(u.To))
		return exitOK
	}
	printUpdate(e.stdout, u, tg.t.Key(), s.FileDiffs(u))
	for _, o := range off {
		fmt.Fprintf(e.stdout, "  not in force now, installed again: %s\n", termtext.Escape(o))
	}

	// What install would do, before anything is asked: a member or
	// dependency that blocks it refuses the update here.
	opt := tg.opt
	opt.DryRun = true
	plan, err := s.Update(u, disp, opt)
	if err != nil {
		return installFailed(e, cmd, err)
	}
	tg.notes(plan, disp)
	asks := u.Asks()
	if dry {
		fmt.Fprintf(e.stdout, "would install %s on %s\n", sel.Identity, plan.Provider)
		printInstall(e.stdout, plan, true)
		printDiffs(e.stdout, plan)
		return exitOK
	}
	if len(asks) > 0 && !yes && !confirm(e, cmd, fmt.Sprintf("Approve these %d grants and update?", len(asks)), "approve", "nothing approved", fmt.Sprintf("'dalo plugin update %s --provider %s --dry-run'", sel.Identity, tg.t.Name)) {
		return exitFail
	}
	res, err := s.Update(u, disp, tg.opt)
	if err != nil {
		return installFailed(e, cmd, err)
	}
	for _, g := range u.Grants {
		switch {
		case g.New != nil:
			fmt.Fprintf(e.stdout, "approved %s %s: grant %s\n", g.Kind, termtext.Escape(g.Item), termtext.Escape(g.New.ID))
		case g.State == store.GrantGone:
			fmt.Fprintf(e.stdout, "revoked %s %s: grant %s\n", g.Kind, termtext.Escape(g.Item), termtext.Escape(g.Old.ID))
		}
	}
	fmt.Fprintf(e.stdout, "updated %s on %s%s\n", sel.Identity, res.Provider, atCommit(u.To))
	tg.notes(res, disp)
	printInstall(e.stdout, res, false)
	return exitOK
}

func atCommit(c string) string {
	if c == "" {
		return ""
	}
	return " at commit " + short(c)
}

// printUpdate shows u: what differs from what is installed, side by side,
// the diff of each changed text file, then what becomes of each grant.
func printUpdate(w io.Writer, u *store.Update, table string, files []store.FileDiff) {
	from := "the source as it is now"
	if u.To != "" {
		from = "commit " + short(u.From) + " -> " + short(u.To)
		if u.From == "" {
			from = "commit " + short(u.To)
		}
	}
	fmt.Fprintf(w, "update %s on %s: %s\n", u.Sel.Identity, table, from)
	switch {
	case !u.Compared:
		fmt.Fprintln(w, "  (installed before dalo recorded what it installed: only grants are compared)")
	case len(u.Differences) > 0:
		fmt.Fprintln(w, "  what changed (installed | now):")
		writeDifferences(w, "    ", u.Differences, nil)
	}
	writeFileDiffs(w, "  ", files)
	writeGrantChanges(w, "  ", u.Grants, true)
	for _, sk := range u.Skipped {
		fmt.Fprintf(w, "  skipped: %s\n", termtext.Escape(sk))
	}
}

// writeFileDiffs prints the unified diff of each changed text file, each
// line escaped, or why a file's is not shown.
func writeFileDiffs(w io.Writer, indent string, diffs []store.FileDiff) {
	if len(diffs) == 0 {
		return
	}
	fmt.Fprintf(w, "%sfiles changed:\n", indent)
	for _, d := range diffs {
		if d.Note != "" {
			name := d.Item
			if d.File != "" {
				name += ": " + d.File
			}
			fmt.Fprintf(w, "%s  %s (%s)\n", indent, termtext.Escape(name), d.Note)
			continue
		}
		for _, l := range strings.SplitAfter(d.Diff, "\n") {
			if l != "" {
				fmt.Fprintf(w, "%s  %s\n", indent, termtext.Escape(strings.TrimSuffix(l, "\n")))
			}
		}
	}
}

// writeGrantChanges says what becomes of each grant; unchanged ones only
// with all.
func writeGrantChanges(w io.Writer, indent string, gs []store.GrantChange, all bool) {
	var lines []string
	for _, g := range gs {
		what := g.Kind + " " + termtext.Escape(g.Item)
		why := ""
		if g.Why != "" {
			why = " (" + termtext.Escape(g.Why) + ")"
		}
		switch g.State {
		case store.GrantUnchanged:
			if all {
				lines = append(lines, "carried over:  "+what)
			}
		case store.GrantChanged:
			lines = append(lines, "approve again: "+what+why)
		case store.GrantNew:
			lines = append(lines, "approve:       "+termtext.Escape(describeGrant(g.New))+why)
		case store.GrantGone:
			lines = append(lines, "revoke:        "+what+" (the package no longer has it)")
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "%sgrants:\n", indent)
	for _, l := range lines {
		fmt.Fprintf(w, "%s  %s\n", indent, l)
	}
}
