package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"dalo/store"
	"dalo/store/plan"
)

const pluginInstallDoc = `Plugin install activates a package on a harness. It copies the exact
approved tool bytes into a content-addressed, read-only directory of the
store, writes the package's skills and agents where the harness reads them
(an agent becomes its inline fallback skill where the harness has no
subagents), rewrites the provider's dispatch plan, and adds one dispatcher
entry per native event in use to the harness configuration (Claude:
$CLAUDE_CONFIG_DIR/settings.json, Codex: $CODEX_HOME/hooks.json), editing
only its own entries: every other byte of the file is kept.

It refuses, writing nothing, when tool bytes differ from their grant (it
lists the files that changed), or when a required member or hook is
missing, blocked, unapproved or unsupported on the provider; optional ones
are omitted and listed. Instruction members are never written by install.
A skill or agent of the same name that is not dalo's, or one dalo wrote
that you changed since, is a conflict, never overwritten. 'dalo plugin
review --provider P' shows the same decision for every member. --dry-run prints the diff of the configuration and writes
nothing.

Exit status: 0 installed; 1 refused or failed; 2 bad usage.

Examples:
  dalo plugin install company:design-review --provider claude --dry-run
  dalo plugin install company:design-review --provider codex
`

func init() {
	register(&command{
		name: "plugin install", usage: "SOURCE:NAME --provider claude|codex [--dry-run]",
		short: "install an approved package on a harness", doc: pluginInstallDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.String("provider", "", "the harness to install on (NAME or NAME@VERSION)")
			fs.Bool("dry-run", false, "print what would change and write nothing")
		},
		run: runPluginInstall,
	})
}

func runPluginInstall(e *env, fs *pflag.FlagSet) int {
	const cmd = "plugin install"
	if !packageArg(e, cmd, fs) {
		return exitUsage
	}
	provider, _ := fs.GetString("provider")
	dry, _ := fs.GetBool("dry-run")
	if provider == "" {
		return usageError(e, cmd, "--provider is required")
	}
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	disp, fast, err := dispatcher()
	if err != nil {
		return fail(e, cmd, err)
	}
	sel, err := s.Select(fs.Arg(0), provider)
	if err != nil {
		return fail(e, cmd, err)
	}
	res, err := s.Install(sel, disp, dry)
	if err != nil {
		var be *store.BlockedError
		if errors.As(err, &be) {
			fmt.Fprintf(e.stderr, "dalo %s: %v\nnothing was written\n", cmd, err)
			return exitFail
		}
		return fail(e, cmd, err)
	}
	verb := "installed"
	if dry {
		verb = "would install"
	}
	fmt.Fprintf(e.stdout, "%s %s on %s\n", verb, sel.Identity, res.Provider)
	if !fast && len(res.Hooks) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("no %s of this dalo's build beside it: the harness entries call 'dalo hook dispatch', which adds more than twice dalo-hook's overhead to every tool call (build both together: go install ./cmd/...)", plan.HookBinary))
	}
	printInstall(e.stdout, res, dry)
	if dry {
		if res.Diff == "" {
			fmt.Fprintf(e.stdout, "%s would not change\n", res.Config)
		} else {
			fmt.Fprint(e.stdout, res.Diff)
		}
		fmt.Fprintln(e.stdout, "dry run: nothing was written")
	}
	return exitOK
}

func printInstall(w io.Writer, res *store.InstallResult, dry bool) {
	for _, h := range res.Hooks {
		fmt.Fprintf(w, "  hook %s\n", h)
	}
	for _, d := range res.Staged {
		fmt.Fprintf(w, "  staged %s\n", d)
	}
	for _, d := range res.Skills {
		fmt.Fprintf(w, "  skill %s\n", d)
	}
	for _, d := range res.Agents {
		fmt.Fprintf(w, "  agent %s\n", d)
	}
	for _, d := range res.Fallbacks {
		fmt.Fprintf(w, "  fallback: %s\n", d)
	}
	for _, d := range res.Omitted {
		fmt.Fprintf(w, "  omitted: %s\n", d)
	}
	for _, d := range res.Notes {
		fmt.Fprintf(w, "  note: %s\n", d)
	}
	if !dry {
		if res.Diff != "" {
			fmt.Fprintf(w, "  updated %s\n", res.Config)
		} else {
			fmt.Fprintf(w, "  %s unchanged\n", res.Config)
		}
	}
}

// dispatcher is the command the harness entries start dispatch with, for
// the running dalo (see store.Dispatcher), and whether it is dalo-hook.
func dispatcher() (cmd string, fast bool, err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", false, fmt.Errorf("locating the dalo executable: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return "", false, fmt.Errorf("locating the dalo executable: %w", err)
	}
	cmd, fast = store.Dispatcher(exe)
	return cmd, fast, nil
}
