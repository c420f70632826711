package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"dalo/internal/termtext"
	"dalo/providers"
)

const providersDoc = `Providers lists the harness versions dalo knows: one provider table per
exact version, each with recorded evidence. A version that is not listed is
unknown; dalo never infers that a nearby version behaves the same.

Beside the tables dalo ships, it lists the local tables of the store
($DALO_HOME/providers), which 'dalo providers verify NAME' wrote for a
version it proved on this machine, with the day it did: install, review,
approve and doctor use them as shipped ones for that exact version. A bare
NAME still means the newest shipped version, and validation never reads
them. A local table dalo cannot use is named on stderr with why; one of a
version this dalo ships is not used (remove it with 'dalo providers remove').

--json prints a JSON array of {name, version, key, harness, newest, install,
version_output, verified}: how to install exactly that version, what its
--version prints then, and, for a local table, {date, dalo, file}.

Examples:
  dalo providers
  dalo --json providers
`

const providersShowDoc = `Show prints one provider table: where the harness reads its configuration,
hooks, instructions, skills and agents; how hook timeouts are written; the
native tool names a matcher may use; the events on which the harness denies
the action when a hook command fails; and, for every admitted hook row,
effect, failure policy and error visibility, whether this version supports
it, with the native event and output dalo uses, or why not.

A bare NAME means its newest shipped version. A local table (see 'dalo help
providers') is shown with the day it was verified on this machine, which
--json gives as verified: {date, dalo}.

--json prints the whole table.

Examples:
  dalo providers show claude@2.1.233
  dalo providers show codex
  dalo --json providers show codex@0.147.0
`

func init() {
	register(&command{
		name:  "providers",
		usage: "[--json]",
		short: "list the known harness versions",
		doc:   providersDoc,
		run:   runProviders,
	})
	register(&command{
		name:  "providers show",
		usage: "[--json] NAME[@VERSION]",
		short: "print a harness version's capability table",
		doc:   providersShowDoc,
		run:   runProvidersShow,
	})
}

type providerEntry struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Key     string `json:"key"`
	Harness string `json:"harness"`
	Newest  bool   `json:"newest"`
	// Install installs exactly this version; VersionOutput is what its
	// --version prints then. .ci/harnesses reads both.
	Install       string `json:"install"`
	VersionOutput string `json:"version_output"`
	// Verified, for a local table, is when 'dalo providers verify' proved
	// the version on this machine, and the table's file.
	Verified *verifiedEntry `json:"verified,omitempty"`
}

type verifiedEntry struct {
	Date string `json:"date"`
	Dalo string `json:"dalo"`
	File string `json:"file"`
}

func runProviders(e *env, fs *pflag.FlagSet) int {
	const cmd = "providers"
	if fs.NArg() != 0 {
		return usageError(e, cmd, "unexpected argument %q (did you mean 'dalo providers show %s'?)", fs.Arg(0), fs.Arg(0))
	}
	ts, ok := storeTables(e, cmd)
	if !ok {
		return exitFail
	}
	entries := []providerEntry{}
	for _, t := range ts.All() {
		newest, _ := ts.Newest(t.Name)
		p := providerEntry{Name: t.Name, Version: t.Version, Key: t.Key(), Harness: t.Harness, Newest: newest == t,
			Install: t.Install, VersionOutput: t.VersionOutput.Text}
		if t.Verified != nil {
			p.Verified = &verifiedEntry{t.Verified.Date, t.Verified.Dalo, t.File}
		}
		entries = append(entries, p)
	}
	if e.json {
		return writeJSON(e, entries)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tHARNESS\tNEWEST")
	for _, p := range entries {
		newest := ""
		if p.Newest {
			newest = "yes"
		}
		if p.Verified != nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\tverified on this machine on %s\n", p.Key, p.Harness, newest, p.Verified.Date)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Key, p.Harness, newest)
	}
	tw.Flush()
	return exitOK
}

// storeTables is the store's provider tables (the shipped ones and the
// local ones verified on this machine) for cmd, which names on stderr each
// local table it cannot use, and why.
// Without a store to locate, they are the shipped tables.
func storeTables(e *env, cmd string) (*providers.Tables, bool) {
	var ts *providers.Tables
	s, ok := openStore(&env{stderr: io.Discard}, cmd)
	var err error
	if ok {
		ts, err = s.Tables()
	} else {
		ts, err = providers.Load()
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "dalo %s: %v\n", cmd, err)
		return nil, false
	}
	for _, b := range ts.Broken() {
		fmt.Fprintf(e.stderr, "dalo %s: warning: local table %s is not used: %s\n", cmd, b.Key, termtext.Escape(b.Error()))
	}
	for _, t := range ts.Shadowed() {
		fmt.Fprintf(e.stderr, "dalo %s: note: this dalo ships a table for %s, used instead of %s; remove that with 'dalo providers remove %s'\n", cmd, t.Key(), termtext.Escape(t.File), t.Key())
	}
	return ts, true
}

func runProvidersShow(e *env, fs *pflag.FlagSet) int {
	const cmd = "providers show"
	if fs.NArg() != 1 {
		return usageError(e, cmd, "want exactly one NAME[@VERSION], got %d arguments", fs.NArg())
	}
	ts, ok := storeTables(e, cmd)
	if !ok {
		return exitFail
	}
	t, err := ts.Resolve(fs.Arg(0))
	if err != nil {
		if name, version, ok := strings.Cut(fs.Arg(0), "@"); ok && ts.BrokenFor(name, version) != nil {
			return exitFail // named on stderr above
		}
		return usageError(e, cmd, "%v", err)
	}
	if e.json {
		return writeJSON(e, t)
	}
	printTable(e.stdout, t)
	return exitOK
}

// rowOrder is the order a user meets the rows in a session; rows a later
// draft adds follow, sorted.
var rowOrder = []string{"session/start", "prompt/before", "tool_call/before", "tool_call/after", "tool_call/failure", "workflow/stop", "session/end"}

func sortedRows(t *providers.Table) []string {
	var rows []string
	for s, phases := range t.Rows {
		for p := range phases {
			rows = append(rows, s+"/"+p)
		}
	}
	rank := func(r string) int {
		for i, o := range rowOrder {
			if o == r {
				return i
			}
		}
		return len(rowOrder)
	}
	sort.Slice(rows, func(i, j int) bool {
		if a, b := rank(rows[i]), rank(rows[j]); a != b {
			return a < b
		}
		return rows[i] < rows[j]
	})
	return rows
}

func printTable(w io.Writer, t *providers.Table) {
	fmt.Fprintf(w, "%s: %s\n", t.Key(), t.Harness)
	if v := t.Verified; v != nil {
		fmt.Fprintf(w, "verified on this machine on %s by dalo %s (%s): each claim that held cites the scenario that showed it\n", v.Date, termtext.Escape(v.Dalo), termtext.Escape(t.File))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	c := t.Config
	fmt.Fprintf(tw, "install\t%s\n", t.Install)
	home := "$" + c.Home.Env
	if c.Home.Within != "" {
		home += "/" + c.Home.Within
	}
	fmt.Fprintf(tw, "config home\t%s (default ~/%s)\n", home, c.Home.Default)
	fmt.Fprintf(tw, "hooks\t%s\n", t.Display(c.Hooks.Location))
	fmt.Fprintf(tw, "instructions\t%s\n", t.Display(c.Instructions))
	for _, l := range c.Skills {
		fmt.Fprintf(tw, "skills\t%s\n", t.Display(l))
	}
	if c.Agents.Location != nil {
		fmt.Fprintf(tw, "agents\t%s\n", t.Display(*c.Agents.Location))
	} else {
		fmt.Fprintf(tw, "agents\tunsupported: %s\n", c.Agents.Reason)
	}
	trust := "not required: " + c.Trust.How
	if c.Trust.Required {
		trust = "required: " + c.Trust.How
	}
	fmt.Fprintf(tw, "trust\t%s\n", trust)
	timeout := fmt.Sprintf("%s, native field %s", t.Timeout.Unit, t.TimeoutField())
	for _, ev := range slices.Sorted(maps.Keys(t.Timeout.Clamps)) {
		timeout += fmt.Sprintf("; %s cut to %d ms", ev, t.Timeout.Clamps[ev].MaxMS)
	}
	fmt.Fprintf(tw, "timeouts\t%s\n", timeout)
	fmt.Fprintf(tw, "matcher tools\t%s\n", strings.Join(t.ToolNames(), ", "))
	// What a hook command that fails does, where the harness then denies
	// (events.<E>.failed_command); elsewhere the action goes on.
	for _, ev := range slices.Sorted(maps.Keys(t.Events)) {
		if t.FailedCommandDenies(ev) {
			fmt.Fprintf(tw, "failed hook\t%s: %s denies the action when a hook command fails; dalo's entry lets it go on unless a required fail_closed hook is installed there\n", ev, t.Harness)
		}
	}
	tw.Flush()

	rows := sortedRows(t)
	fmt.Fprintln(w, "\nEffects:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  ROW\tEFFECT\tSTATUS\tNATIVE")
	for _, name := range rows {
		s, p, _ := strings.Cut(name, "/")
		r := t.Rows[s][p]
		if r.Status != providers.Supported {
			fmt.Fprintf(tw, "  %s\t*\t%s\t%s\n", name, r.Status, r.Reason)
			continue
		}
		for _, en := range slices.Sorted(maps.Keys(r.Effects)) {
			ef := r.Effects[en]
			if ef.Status != providers.Supported {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", name, en, ef.Status, ef.Reason)
				continue
			}
			var outs []string
			for _, k := range slices.Sorted(maps.Keys(ef.Outputs)) {
				outs = append(outs, k+" → "+summarize(ef.Outputs[k]))
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s: %s\n", name, en, ef.Status, r.NativeEvent, strings.Join(outs, "; "))
		}
	}
	tw.Flush()

	fmt.Fprintln(w, "\nFailures:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  ROW\tPOLICY\tVISIBILITY\tSTATUS\tNATIVE")
	for _, name := range rows {
		s, p, _ := strings.Cut(name, "/")
		r := t.Rows[s][p]
		if r.Status != providers.Supported {
			fmt.Fprintf(tw, "  %s\t*\t*\t%s\t%s\n", name, r.Status, r.Reason)
			continue
		}
		for _, pol := range slices.Sorted(maps.Keys(r.Failures)) {
			for _, vis := range slices.Sorted(maps.Keys(r.Failures[pol])) {
				d := r.Failures[pol][vis]
				what := d.Reason
				if d.Status == providers.Supported && d.Output != nil {
					what = summarize(*d.Output)
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", name, pol, vis, d.Status, what)
			}
		}
	}
	tw.Flush()

	// What the harness offers hooks that no row reaches, and why.
	if len(t.Unmapped.Events)+len(t.Unmapped.Outputs) > 0 {
		fmt.Fprintln(w, "\nNo row reaches:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, list := range []struct {
			kind  string
			items map[string]providers.UnmappedClaim
		}{{"event", t.Unmapped.Events}, {"output", t.Unmapped.Outputs}} {
			for _, n := range slices.Sorted(maps.Keys(list.items)) {
				fmt.Fprintf(tw, "  %s %s\t%s\n", list.kind, n, list.items[n].Reason)
			}
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nEvidence for each claim: dalo --json providers show %s\n", t.Key())
}

// summarize writes a native output as its fields: hookSpecificOutput.additionalContext=$context.
func summarize(o providers.NativeOutput) string {
	var parts []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k == "hookEventName" {
				continue // always the event itself
			}
			switch v := m[k].(type) {
			case map[string]any:
				walk(prefix+k+".", v)
			case string:
				if strings.HasPrefix(v, "$") {
					parts = append(parts, prefix+k+"="+v)
				} else {
					parts = append(parts, fmt.Sprintf("%s%s=%q", prefix, k, v))
				}
			default:
				parts = append(parts, fmt.Sprintf("%s%s=%v", prefix, k, v))
			}
		}
	}
	walk("", o.Stdout)
	if o.Stderr != "" {
		parts = append(parts, "stderr="+o.Stderr)
	}
	if o.Exit != 0 {
		parts = append(parts, fmt.Sprintf("exit %d", o.Exit))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " ")
}
