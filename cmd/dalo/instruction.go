package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"dalo/engine"
	"dalo/instruction"
	"dalo/internal/termtext"
	"dalo/internal/unidiff"
	"dalo/plan"
	"dalo/providers"
	"dalo/store"
)

const instructionEnableDoc = `Enable writes one standing instruction of a package into the file you
choose, as a block between two dalo marker lines. It shows where the
instruction will apply and the block before it writes anything.

SOURCE:NAME is a package of a registered source (dalo source add).
instruction:SELECTOR must be one of its members, of any requirement: a
recommended instruction is inactive until enabled here by name. An
instruction of another source is written instruction:SOURCE:SELECTOR, as in
the manifest, and resolves through the registry.

--target is required; there is no default:
{{instruction files}}
  PATH     an explicit project file (a path with a '/' or a name ending in .md)

Text outside dalo's blocks is kept byte for byte. Enabling again changes
nothing; if the instruction changed in its source, an untouched block is
updated in place. A block you edited is a conflict: --force takes it over.
--dry-run prints the exact diff and writes nothing.

Exit status: 0 enabled (or already); 1 failed, nothing written; 2 bad usage.

Examples:
  dalo instruction enable company:design-review instruction:design-context --target claude
  dalo instruction enable company:design-review instruction:design-context --target ./AGENTS.md --dry-run
`

const instructionDisableDoc = `Disable removes the block dalo wrote for an instruction from the target
file, and the blank line that separated it, and nothing else: with no other
change, the file is again exactly what it was before enable (a file dalo
created is removed). It shows the target and the block first.

A block you edited is a conflict: --force removes it anyway. The source
need not be registered any more: the markers identify the block. A
required instruction stays in a harness's user-wide file while a package
installed on that harness requires it: disable refuses, naming the
package to remove first.

Exit status: 0 disabled; 1 failed or not enabled, nothing written; 2 bad usage.

Examples:
  dalo instruction disable company:design-review instruction:design-context --target claude
  dalo instruction disable company:design-review instruction:design-context --target ./AGENTS.md --dry-run
`

const instructionListDoc = `List shows the instructions dalo enabled, from its records in
$DALO_HOME/instructions.json, each checked against its file: enabled,
edited (the block changed since dalo wrote it), missing (file or block
gone) or unreadable.

Examples:
  dalo instruction list
  dalo --json instruction list
`

func init() {
	// The global targets are the providers' (each table's instructions).
	targets := "{{provider choices}}|PATH"
	editFlags := func(fs *pflag.FlagSet) {
		fs.String("target", "", strings.Join(store.Providers(), ", ")+" or the PATH of a project file (required)")
		fs.Bool("dry-run", false, "print the diff, write nothing")
		fs.Bool("force", false, "take over or remove a block that was edited")
	}
	register(&command{
		name:  "instruction enable",
		usage: "SOURCE:NAME instruction:SELECTOR --target " + targets + " [--dry-run] [--force]",
		short: "write a package's instruction into an instruction file",
		doc:   instructionEnableDoc,
		flags: editFlags,
		run:   runInstructionEnable,
	})
	register(&command{
		name:  "instruction disable",
		usage: "SOURCE:NAME instruction:SELECTOR --target " + targets + " [--dry-run] [--force]",
		short: "remove an instruction dalo wrote",
		doc:   instructionDisableDoc,
		flags: editFlags,
		run:   runInstructionDisable,
	})
	register(&command{
		name:  "instruction list",
		usage: "[--json]",
		short: "list the instructions dalo enabled",
		doc:   instructionListDoc,
		run:   runInstructionList,
	})
}

// instructionArgs are the parsed arguments of enable and disable.
type instructionArgs struct {
	name   string // the command
	pkg    string // SOURCE:NAME
	source string // the package's source
	ref    engine.Ref
	id     instruction.ID
	target store.Target
	opt    store.EditOptions
}

func parseInstructionArgs(e *env, name string, fs *pflag.FlagSet) (*instructionArgs, int) {
	if fs.NArg() != 2 {
		return nil, usageError(e, name, "want SOURCE:NAME and instruction:SELECTOR, got %d arguments", fs.NArg())
	}
	a := &instructionArgs{name: name, pkg: fs.Arg(0)}
	src, _, err := store.ParsePackageRef(a.pkg)
	if err != nil {
		return nil, usageError(e, name, "%v", err)
	}
	a.source = src
	a.ref = engine.ParseRef(fs.Arg(1))
	if a.ref.Kind != "instruction" || a.ref.Selector == "" || strings.ContainsAny(fs.Arg(1), "#/\\") {
		return nil, usageError(e, name, "%q: want instruction:SELECTOR or instruction:SOURCE:SELECTOR", fs.Arg(1))
	}
	a.id = instruction.ID{Source: a.ref.Source, Selector: a.ref.Selector}
	if a.id.Source == "" {
		a.id.Source = src
	}
	spec, _ := fs.GetString("target")
	if a.target, err = store.ResolveTarget(spec); err != nil {
		return nil, usageError(e, name, "%v", err)
	}
	a.opt.DryRun, _ = fs.GetBool("dry-run")
	a.opt.Force, _ = fs.GetBool("force")
	return a, exitOK
}

func instructionStore() (*store.Store, error) {
	home, err := plan.Home()
	if err != nil {
		return nil, err
	}
	return store.Open(home)
}

func runInstructionEnable(e *env, fs *pflag.FlagSet) int {
	a, code := parseInstructionArgs(e, "instruction enable", fs)
	if a == nil {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(e.stderr, "dalo %s: %v\n", a.name, err)
		return exitFail
	}
	st, err := instructionStore()
	if err != nil {
		return fail(err)
	}
	sel, err := st.Select(a.pkg, "")
	if err != nil {
		return fail(err)
	}
	in, requirement, err := sel.PackageInstruction(a.id)
	if err != nil {
		return fail(err)
	}
	a.opt.Show = func(ed *instruction.Edit) error {
		if e.json {
			return nil
		}
		printTarget(e.stdout, a.target)
		fmt.Fprintf(e.stdout, "instruction: %s, %s member of %s\n", a.id, requirement, a.pkg)
		showEdit(e.stdout, a, ed)
		return nil
	}
	ed, err := st.EnableInstruction(a.target, in, a.opt)
	if err != nil {
		return fail(err)
	}
	return reportEdit(e, a, ed)
}

func runInstructionDisable(e *env, fs *pflag.FlagSet) int {
	a, code := parseInstructionArgs(e, "instruction disable", fs)
	if a == nil {
		return code
	}
	st, err := instructionStore()
	if err == nil {
		a.opt.Show = func(ed *instruction.Edit) error {
			if !e.json {
				printTarget(e.stdout, a.target)
				fmt.Fprintf(e.stdout, "instruction: %s of %s\n", a.id, a.pkg)
				showEdit(e.stdout, a, ed)
			}
			return nil
		}
		var ed *instruction.Edit
		if ed, err = st.DisableInstruction(a.target, a.id, a.opt); err == nil {
			return reportEdit(e, a, ed)
		}
	}
	fmt.Fprintf(e.stderr, "dalo %s: %v\n", a.name, err)
	return exitFail
}

// printTarget says where an instruction applies, before anything is written.
func printTarget(w io.Writer, t store.Target) {
	if t.Scope != store.ScopeGlobal {
		fmt.Fprintf(w, "target: %s (project file: only sessions that read this file)\n", t.File)
		return
	}
	harness := t.Name
	if ts, err := providers.Load(); err == nil {
		if pt, ok := ts.Newest(t.Name); ok {
			harness = pt.Harness
		}
	}
	fmt.Fprintf(w, "target: %s (%s, global: every %s session of this user)\n", t.File, t.Name, harness)
}

// showEdit prints the block, or with --dry-run the exact diff.
func showEdit(w io.Writer, a *instructionArgs, ed *instruction.Edit) {
	if ed.Action == store.ActionGone {
		return
	}
	if a.opt.DryRun {
		// Before is nil when the file does not exist: the diff is from /dev/null.
		if d := unidiff.Diff(a.target.File, ed.Before, ed.After); d != "" {
			fmt.Fprint(w, d)
		}
		return
	}
	if ed.Action != instruction.ActionUnchanged {
		w.Write(ed.Block)
		if len(ed.Block) > 0 && ed.Block[len(ed.Block)-1] != '\n' {
			fmt.Fprintln(w)
		}
	}
}

var instructionDone = map[string]string{
	instruction.ActionAdd:       "enabled: added the block to",
	instruction.ActionUpdate:    "enabled: updated the block in",
	instruction.ActionTakeOver:  "enabled: took over the edited block in",
	instruction.ActionUnchanged: "already enabled: nothing changed in",
	instruction.ActionRemove:    "disabled: removed the block from",
	store.ActionGone:            "disabled: the block was already gone; forgot the record of",
}

func reportEdit(e *env, a *instructionArgs, ed *instruction.Edit) int {
	if e.json {
		writeJSON(e, struct {
			store.Target
			instruction.ID
			Package string `json:"package"`
			Action  string `json:"action"`
			DryRun  bool   `json:"dry_run"`
			Diff    string `json:"diff"`
		}{a.target, a.id, a.pkg, ed.Action, a.opt.DryRun, unidiff.Diff(a.target.File, ed.Before, ed.After)})
		return exitOK
	}
	if a.opt.DryRun {
		fmt.Fprintf(e.stdout, "dry run: nothing written (%s)\n", ed.Action)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%s %s\n", instructionDone[ed.Action], a.target.File)
	return exitOK
}

func runInstructionList(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() != 0 {
		return usageError(e, "instruction list", "takes no arguments")
	}
	st, err := instructionStore()
	var states []store.InstructionState
	if err == nil {
		states, err = st.InstructionStates()
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "dalo instruction list: %v\n", err)
		return exitFail
	}
	if e.json {
		if states == nil {
			states = []store.InstructionState{}
		}
		return writeJSON(e, states)
	}
	if len(states) == 0 {
		fmt.Fprintln(e.stdout, "no instruction enabled")
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tINSTRUCTION\tPACKAGE\tSTATE\tFILE")
	for _, s := range states {
		fmt.Fprintf(tw, "%s\tinstruction:%s:%s\t%s\t%s\t%s\n", s.Name, s.Source, s.Selector, s.Package, s.State, termtext.Escape(s.File))
	}
	tw.Flush()
	for _, s := range states {
		if s.State == "unreadable" {
			fmt.Fprintf(e.stderr, "dalo instruction list: %s\n", termtext.Escape(s.Detail))
		}
	}
	return exitOK
}
