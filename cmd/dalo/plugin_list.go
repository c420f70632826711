package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"dalo/engine"
	"dalo/internal/termtext"
	"dalo/store"
)

const pluginListDoc = `Plugin list prints every package of every registered source, whether it
is valid (its own contract), blocked (valid, but a required reference does
not resolve to a valid member or package) or invalid, and where it is
installed, then each source that holds no package. It writes nothing.

Examples:
  dalo plugin list
  dalo --json plugin list
`

func init() {
	register(&command{name: "plugin list", usage: "[--json]", short: "list the packages of registered sources", doc: pluginListDoc, run: runPluginList})
}

type listedPackage struct {
	Package     string   `json:"package"`
	ID          string   `json:"id,omitempty"`
	Description string   `json:"description,omitempty"`
	Valid       bool     `json:"valid"`                // its own contract
	BlockedBy   []string `json:"blocked_by,omitempty"` // required references that do not resolve
	Installed   []string `json:"installed"`
}

func runPluginList(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() != 0 {
		return usageError(e, "plugin list", "takes no arguments")
	}
	s, ok := openStore(e, "plugin list")
	if !ok {
		return exitFail
	}
	srcs, err := s.Sources()
	if err != nil {
		return fail(e, "plugin list", err)
	}
	reg, err := s.Registry()
	if err != nil {
		return fail(e, "plugin list", err)
	}
	installed := map[string][]string{}
	names, err := s.InstalledProviders()
	if err != nil {
		return fail(e, "plugin list", err)
	}
	for _, p := range names {
		in, err := s.Installed(p)
		if err != nil {
			return fail(e, "plugin list", err)
		}
		for _, ip := range in.Packages {
			installed[ip.Package] = append(installed[ip.Package], p)
		}
	}
	out := []listedPackage{}
	var empty []string // a note each on the sources with no package
	code := exitOK
	for _, src := range srcs {
		loaded, err := engine.Load(src.Path, engine.Options{SourceID: src.ID, Registry: reg})
		if err != nil {
			fmt.Fprintf(e.stderr, "dalo plugin list: source %s: %v\n", src.ID, err)
			code = exitFail
			continue
		}
		if len(loaded.Names) == 0 {
			where := src.Path
			if src.Git != nil {
				where = src.Git.URL + " at commit " + src.Git.Commit
			}
			empty = append(empty, fmt.Sprintf("source %s (%s): %s", src.ID, termtext.Escape(where), store.PackagesOf(loaded)))
		}
		for i, p := range loaded.Packages {
			lp := listedPackage{Package: src.ID + ":" + p.Name, Valid: loaded.Report.Packages[i].Valid, Installed: installed[src.ID+":"+p.Name]}
			if p.Manifest != nil {
				lp.ID, lp.Description = p.Manifest.Plugin.ID, p.Manifest.Plugin.Description
			}
			for _, r := range loaded.Report.Blocked(p.Name) {
				lp.BlockedBy = append(lp.BlockedBy, r.Ref)
			}
			if lp.Installed == nil {
				lp.Installed = []string{}
			}
			out = append(out, lp)
		}
	}
	if e.json {
		printJSON(e, out)
		return code
	}
	if len(srcs) == 0 {
		fmt.Fprintln(e.stdout, "no sources; add one with 'dalo source add ID PATH|URL'")
	}
	// One column each for the package, its state, its description and
	// where it is installed, aligned across rows.
	// tabwriter aligns only tab-terminated cells, so every row has all
	// four; the padding it leaves at the end of a row is trimmed.
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, lp := range out {
		state := "valid"
		switch {
		case !lp.Valid:
			state = "invalid"
		case lp.BlockedBy != nil:
			state = "blocked"
		}
		inst := ""
		if len(lp.Installed) > 0 {
			inst = "installed on " + strings.Join(lp.Installed, ", ")
		}
		// Escaped: a tab or a line break in a description would break
		// the columns, and the package chose it.
		fmt.Fprintln(tw, lp.Package+"\t"+state+"\t"+termtext.Escape(lp.Description)+"\t"+inst)
	}
	tw.Flush()
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			fmt.Fprintln(e.stdout, strings.TrimRight(line, " \n"))
		}
	}
	for _, n := range empty {
		fmt.Fprintln(e.stdout, n)
	}
	return code
}
