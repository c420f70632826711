package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/spf13/pflag"

	defs "dalo/cue"
	"dalo/engine"
	"dalo/internal/termtext"
	"dalo/providers"
	"dalo/scaffold"
)

const pluginNewDoc = `Plugin new adds the package NAME to the source in --source (the current
directory by default): plugins/NAME/PLUGIN.toml, commented field by field,
and with it

  --skill, --instruction, --agent   a member named NAME: skills/NAME/SKILL.md,
                                    instructions/NAME.md, agents/NAME.md
  --hook SUBJECT/PHASE:EFFECT       a hook on that row of the draft's table,
                                    and the tool it runs: a POSIX sh script
                                    that answers a valid result for EFFECT
  --tool ID                         a tool ID.sh that no hook runs yet

Members and hooks are required; each hook's failure policy is report (the
manifest says which others the draft admits for its effect: a gate may fail
closed). Every file is validated before anything is written, and nothing is
written unless all of it validates; nothing existing is replaced.

A hook whose effect its row does not admit is refused with the admitted
effects, as 'dalo plugin validate' says it.

Exit status: 0 written; 1 NAME or a member already exists, or a write
failed (nothing is written); 2 bad usage: a NAME that is no package name, a
--hook the rules refuse, a --source that is missing or not a directory.

Examples:
  # A package with a skill and a hook that gates tool calls.
  dalo plugin new review --skill --hook tool_call/before:gate
  # Context before each prompt, in the source ./agents-src.
  dalo plugin new context --source agents-src --hook prompt/before:add_context
`

func init() {
	register(&command{
		name:  "plugin new",
		usage: "NAME [--source DIR] [--skill] [--instruction] [--agent] [--tool ID]... [--hook SUBJECT/PHASE:EFFECT]...",
		short: "add a new package to a source",
		doc:   pluginNewDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.String("source", ".", "the source directory")
			fs.Bool("skill", false, "add a skill member named NAME")
			fs.Bool("instruction", false, "add an instruction member named NAME")
			fs.Bool("agent", false, "add an agent member named NAME")
			fs.StringArray("tool", nil, "add a tool ID that no hook runs yet (repeatable)")
			fs.StringArray("hook", nil, "add a hook SUBJECT/PHASE:EFFECT and its tool (repeatable)")
		},
		run: runPluginNew,
	})
}

// itemField is the tool or hook index of a diagnostic's field path:
// hook[2].effect.
var itemField = regexp.MustCompile(`^(tool|hook)\[(\d+)\]`)

func runPluginNew(e *env, fs *pflag.FlagSet) int {
	const cmd = "plugin new"
	if fs.NArg() != 1 {
		return usageError(e, cmd, "want exactly one NAME, got %d arguments", fs.NArg())
	}
	name := fs.Arg(0)
	r, tables, err := rulesAndTables()
	if err != nil {
		return fail(e, cmd, err)
	}
	// The name becomes a directory before validation reads it: refuse a
	// bad one here, as validation would, before anything is written.
	if err := r.CheckField(defs.Plugin, "name", name); err != nil {
		return usageError(e, cmd, "%v", err)
	}
	src, _ := fs.GetString("source")
	if err := engine.CheckSourceDir(src); err != nil {
		return usageError(e, cmd, "--source: %v", err)
	}
	spec := scaffold.PluginSpec{Name: name}
	spec.Skill, _ = fs.GetBool("skill")
	spec.Instruction, _ = fs.GetBool("instruction")
	spec.Agent, _ = fs.GetBool("agent")
	spec.Tools, _ = fs.GetStringArray("tool")
	for _, id := range spec.Tools {
		if err := r.CheckField(defs.Tool, "id", id); err != nil {
			return usageError(e, cmd, "--tool: %v", err)
		}
	}
	hooks, _ := fs.GetStringArray("hook")
	for _, h := range hooks {
		hs, err := scaffold.ParseHook(h)
		if err != nil {
			return usageError(e, cmd, "--hook: %v", err)
		}
		spec.Hooks = append(spec.Hooks, hs)
	}
	tree, err := scaffold.NewPlugin(r, tables, spec)
	if err != nil {
		return usageError(e, cmd, "%v", err)
	}
	staged, rep, code := stageNew(e, cmd, tree, src)
	if staged == nil {
		return code
	}
	defer staged.Discard()
	if !rep.Valid {
		return refuseNew(e, rep, spec, hooks, r.Layout)
	}
	if code := commitNew(e, cmd, staged, src); code != exitOK {
		return code
	}
	fmt.Fprintf(e.stdout, "created package %s in %s:\n", name, src)
	for _, f := range tree.Files() {
		fmt.Fprintf(e.stdout, "  %s\n", f.Path)
	}
	for _, n := range blockedNotes(rep) {
		fmt.Fprintln(e.stdout, n)
	}
	fmt.Fprintf(e.stdout, "it validates; check the source with 'dalo plugin validate %s'\n", termtext.ShellQuote(src))
	return exitOK
}

// rulesAndTables loads what writing into a source asks: the rules and
// the provider tables.
func rulesAndTables() (*engine.Rules, *providers.Tables, error) {
	r, err := engine.LoadRules()
	if err != nil {
		return nil, nil, err
	}
	ts, err := providers.Load()
	return r, ts, err
}

// stageNew stages tree in the source src and validates the staged files
// as a source of their own. It reports a tree that would replace an item
// of src, or any other failure, and returns the exit code with a nil
// Staged.
func stageNew(e *env, cmd string, tree *scaffold.Tree, src string) (*scaffold.Staged, *engine.Report, int) {
	staged, err := tree.Stage(src)
	if err != nil {
		return nil, nil, newFailed(e, cmd, src, err)
	}
	rep, err := engine.Validate(staged.Dir(), engine.Options{})
	if err != nil {
		staged.Discard()
		return nil, nil, fail(e, cmd, err)
	}
	return staged, rep, exitOK
}

// commitNew puts the staged files in place in src.
func commitNew(e *env, cmd string, staged *scaffold.Staged, src string) int {
	if err := staged.Commit(); err != nil {
		return newFailed(e, cmd, src, err)
	}
	return exitOK
}

func newFailed(e *env, cmd, src string, err error) int {
	var exists *scaffold.ExistsError
	if errors.As(err, &exists) {
		fmt.Fprintf(e.stderr, "dalo %s: in %s, %s; nothing was written\n", cmd, src, exists)
		return exitFail
	}
	return fail(e, cmd, err)
}

// blockedNotes says which required hooks of a validated source a known
// harness version cannot run, which blocks their package there.
func blockedNotes(rep *engine.Report) []string {
	var notes []string
	for _, k := range rep.Capabilities.Providers {
		for _, c := range rep.Capabilities.Of(k) {
			if c.BlocksActivation {
				notes = append(notes, fmt.Sprintf("note: hook %s blocks activation on %s: %s", c.Hook, k, c.Reason))
			}
		}
	}
	return notes
}

// refuseNew reports why the new package does not validate. What the user
// asked for (a --hook on a row that does not admit its effect, a NAME that
// is no package name) is bad usage, said as validate says it; anything else
// would be a fault of the templates.
func refuseNew(e *env, rep *engine.Report, spec scaffold.PluginSpec, hooks []string, layout engine.Layout) int {
	// A member's file is named for NAME, whose rules for a member (a
	// skill's name is shorter than a package's) its check says.
	members := map[string]string{}
	for kind, asked := range map[string]bool{"skill": spec.Skill, "instruction": spec.Instruction, "agent": spec.Agent} {
		if asked {
			members[layout.Path(kind, spec.Name)] = "--" + kind
		}
	}
	usage := false
	for _, d := range rep.Diagnostics {
		if d.Severity != engine.Error {
			continue
		}
		switch m := itemField.FindStringSubmatch(d.Field); {
		case m != nil:
			// Tools are written in the order of --tool, then one per
			// --hook; hooks in the order of --hook.
			i, _ := strconv.Atoi(m[2])
			flag := ""
			switch {
			case m[1] == "tool" && i < len(spec.Tools):
				flag = "--tool " + spec.Tools[i]
			case m[1] == "tool" && i-len(spec.Tools) < len(hooks):
				flag = "--hook " + hooks[i-len(spec.Tools)]
			case m[1] == "hook" && i < len(hooks):
				flag = "--hook " + hooks[i]
			}
			if flag != "" {
				fmt.Fprintf(e.stderr, "dalo plugin new: %s: %s\n", flag, d.Message)
				usage = true
				continue
			}
		case d.Field == "plugin.name":
			fmt.Fprintf(e.stderr, "dalo plugin new: %s: %s\n", strconv.Quote(spec.Name), d.Message)
			usage = true
			continue
		case members[d.File] != "":
			fmt.Fprintf(e.stderr, "dalo plugin new: %s %s: %s\n", members[d.File], strconv.Quote(spec.Name), d.Message)
			usage = true
			continue
		}
		fmt.Fprintf(e.stderr, "dalo plugin new: internal error: the new package does not validate: %s\n", d)
	}
	fmt.Fprintln(e.stderr, "nothing was written")
	if usage {
		return exitUsage
	}
	return exitFail
}
