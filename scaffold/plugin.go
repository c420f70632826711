package scaffold

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"dalo/engine"
	"dalo/internal/termtext"
	"dalo/plan"
	"dalo/providers"
	"dalo/tomledit"
)

// A PluginSpec says what a new package holds.
type PluginSpec struct {
	Name        string
	Skill       bool       // a skill member named Name
	Instruction bool       // an instruction member named Name
	Agent       bool       // an agent member named Name
	Tools       []string   // tools of their own, run by no hook yet
	Hooks       []HookSpec // each with a tool of its own
}

// A HookSpec is the row and effect of a new hook: SUBJECT/PHASE:EFFECT.
type HookSpec struct {
	Subject, Phase, Effect string
}

// ParseHook parses SUBJECT/PHASE:EFFECT. It checks the form only: whether
// the rules admit the combination is for validation to say.
func ParseHook(s string) (HookSpec, error) {
	row, effect, ok := strings.Cut(s, ":")
	subject, phase, ok2 := strings.Cut(row, "/")
	if !ok || !ok2 || subject == "" || phase == "" || effect == "" {
		return HookSpec{}, fmt.Errorf("%q is not SUBJECT/PHASE:EFFECT (such as tool_call/before:gate)", s)
	}
	return HookSpec{subject, phase, effect}, nil
}

// String is the spec as --hook takes it: SUBJECT/PHASE:EFFECT.
func (h HookSpec) String() string { return h.Subject + "/" + h.Phase + ":" + h.Effect }

var nonID = regexp.MustCompile(`[^A-Za-z0-9]+`)

// ID is the id of the hook and of its tool: subject, phase and effect in
// one hyphenated word (tool-call-before-gate).
func (h HookSpec) ID() string {
	return strings.Trim(nonID.ReplaceAllString(h.Subject+"-"+h.Phase+"-"+h.Effect, "-"), "-")
}

// NewPlugin returns the files of a new package: its manifest, commented
// field by field, a POSIX sh script per tool that answers a valid result
// for the effect of the hook that runs it, and the members asked for, each
// where the rules' layout puts it. The caller validates the result before
// committing it: what the rules refuse (a hook whose effect its row does
// not admit, a name that is no package name) is for validation to say.
func NewPlugin(r *engine.Rules, tables *providers.Tables, spec PluginSpec) (*Tree, error) {
	ids := map[string]string{}
	for _, id := range spec.Tools {
		if other, dup := ids[id]; dup {
			return nil, fmt.Errorf("tool %s is asked for twice (%s)", id, other)
		}
		ids[id] = "--tool " + id
	}
	for _, h := range spec.Hooks {
		if other, dup := ids[h.ID()]; dup {
			return nil, fmt.Errorf("--hook %s: its tool and hook id %s is already taken (%s)", h, h.ID(), other)
		}
		ids[h.ID()] = "--hook " + h.String()
	}
	t := &Tree{}
	pkgDir := r.Layout.Dir("plugin", spec.Name)
	var m strings.Builder
	writeHeader(&m, spec.Name)
	for _, kind := range []string{"skill", "instruction", "agent"} {
		if !map[string]bool{"skill": spec.Skill, "instruction": spec.Instruction, "agent": spec.Agent}[kind] {
			continue
		}
		ref := kind + ":" + spec.Name
		fmt.Fprintf(&m, "\n[[plugin.members]]\nref = %s\n", tomledit.Quote(ref))
		m.WriteString(memberComment[kind])
		m.WriteString("requirement = \"required\"\n")
		t.Add(r.Layout.Path(kind, spec.Name), memberFile(kind, spec.Name), false)
	}
	for _, id := range spec.Tools {
		writeTool(&m, id, "")
		t.Add(pkgDir+"/"+id+".sh", toolScript(id, nil), true)
	}
	for _, h := range spec.Hooks {
		writeTool(&m, h.ID(), h.String())
		writeHook(&m, tables, h)
		t.Add(pkgDir+"/"+h.ID()+".sh", toolScript(h.ID(), &h), true)
	}
	if len(spec.Hooks) == 0 {
		m.WriteString(hookExample)
	}
	t.files = append([]File{{Path: pkgDir + "/" + r.Layout.File("plugin"), Data: []byte(m.String())}}, t.files...)
	return t, nil
}

// Comment wraps text into TOML or sh comment lines of at most 78 columns,
// with what TOML does not admit in a comment (control characters) escaped.
func Comment(text string) string {
	var b strings.Builder
	line := "#"
	for _, w := range strings.Fields(text) {
		w = termtext.Escape(w)
		if len(line)+1+len(w) > 78 && line != "#" {
			b.WriteString(line + "\n")
			line = "#"
		}
		line += " " + w
	}
	return b.String() + line + "\n"
}

// SchemaFile is the name of the JSON Schema of PLUGIN.toml at the root of
// a source, where the #:schema line of a new manifest points.
const SchemaFile = "plugin-v1.schema.json"

func writeHeader(m *strings.Builder, name string) {
	fmt.Fprintf(m, `#:schema ../../%s
# The manifest of package %s (Portable Agent Packages, PLUGIN.toml schema 1).
# The line above points editors that read it (Taplo, Even Better TOML) at the
# JSON Schema at the root of the source: 'dalo schema --write <source>' puts
# it there. Check the whole source with 'dalo plugin validate <source>'.

# The version of this manifest's format; 1 is the only one defined.
schema_version = 1

[plugin]
# The package's name: lowercase letters and digits in words joined by single
# hyphens, the same as its directory's name.
name = %s
# What the package is for, in a sentence a reviewer reads before trusting it.
description = %s
# Optional: an identity unique in the source (lowercase segments joined by
# dots or hyphens, at most %d characters), for references from elsewhere.
# id = "example.%s"
# Optional and informational only: it never selects a release.
version = "0.1.0"
`, SchemaFile, name, tomledit.Quote(name), tomledit.Quote("The "+name+" package: replace this with what it does."), plan.DraftLimits.IDChars, name)
}

var memberComment = map[string]string{
	"skill": `# A skill (Agent Skills format) at skills/<selector>/SKILL.md in this source.
# required: the package cannot be activated without it; optional: left out,
# visibly, where it is missing or invalid.
`,
	"instruction": `# Standing instructions at instructions/<selector>.md in this source. Install
# never writes them: the user chooses where they apply with 'dalo instruction
# enable', and install refuses a required one until then. recommended (for
# instructions only) leaves them to the user.
`,
	"agent": `# A subagent at agents/<selector>.md in this source (Markdown with YAML front
# matter). An agent member may name an inline fallback skill for harnesses
# without subagents: fallback = { kind = "inline", skill = "skill:..." }.
`,
}

func writeTool(m *strings.Builder, id, hook string) {
	runBy := "No hook runs it yet: a [[hook]] names it in its tool field."
	if hook != "" {
		runBy = "The hook " + hook + " below runs it."
	}
	fmt.Fprintf(m, `
%s[[tool]]
# The version of the tool descriptor; 1 is the only one defined.
schema_version = 1
# Unique among this package's tools.
id = %s
# The program: a regular file in this directory, executable for runtime
# "executable". Other files it needs go in files = [...].
entry = %s
# %s.
runtime = %s
# Its arguments: literal strings, or "${input.NAME}" as a whole argument to
# pass a declared input ([[tool.inputs]]) that a hook binds to an event field.
argv = []
# It runs in a read-only copy of this directory; tool_root is the only value.
cwd = "tool_root"
# required or optional.
availability = "required"
# Optional: the environment variables passed through (no other reaches it),
# and what it does, for the reviewer: filesystem_read, filesystem_write,
# subprocess, network.
# env = ["PATH"]
# capabilities = []
`, Comment("A local tool: a program dalo runs only after the user approved these exact bytes and this invocation. "+runBy), tomledit.Quote(id), tomledit.Quote(id+".sh"), runtimeChoices(plan.Runtimes), tomledit.Quote(plan.RuntimeExecutable))
}

// runtimeChoices lists the runtimes a tool may declare (#Runtimes), for
// the comment above a new tool's runtime: "executable (the entry runs
// itself), node or python".
func runtimeChoices(runtimes map[string]plan.Runtime) string {
	var names []string
	for _, rt := range slices.Sorted(maps.Keys(runtimes)) {
		if runtimes[rt].Interpreter == "" {
			rt += " (the entry runs itself)"
		}
		names = append(names, rt)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// timeoutRange is the range of a hook's timeout_ms (#Limits), for the
// comment above it: "from 100 to 120000".
func timeoutRange(lim plan.Limits) string {
	return fmt.Sprintf("from %d to %d", lim.TimeoutMinMS, lim.TimeoutMaxMS)
}

// defaultTimeoutMS is the timeout of a new hook, unless a harness cuts
// hooks of its event shorter.
const defaultTimeoutMS = 5000

// timeout returns the timeout of a new hook on (subject, phase): the
// default, or the shortest clamp a known harness version puts on the
// row's native event, with the comment that says so.
func timeout(tables *providers.Tables, subject, phase string) (int, string) {
	ms, why := defaultTimeoutMS, ""
	for _, t := range tables.All() {
		ev, ok := t.NativeEvent(subject, phase)
		if !ok {
			continue
		}
		if c, ok := t.TimeoutClampMS(ev); ok && c < ms {
			ms, why = c, fmt.Sprintf("%s cuts %s hooks to %d ms", t.Key(), ev, c)
		}
	}
	return ms, why
}

func writeHook(m *strings.Builder, tables *providers.Tables, h HookSpec) {
	ms, why := timeout(tables, h.Subject, h.Phase)
	timeoutComment := Comment("How long the tool may run, in milliseconds, " + timeoutRange(plan.DraftLimits) + ".")
	if why != "" {
		timeoutComment = Comment("How long the tool may run, in milliseconds, " + timeoutRange(plan.DraftLimits) + "; " + why + ".")
	}
	fmt.Fprintf(m, `
%s[[hook]]
# The version of the hook descriptor; 1 is the only one defined.
schema_version = 1
# Unique among this package's hooks.
id = %s
# The id of the tool of this package it runs.
tool = %s
# The event: subject and phase name a row of the draft's combination table;
# the effect must be one the row admits.
subject = %s
phase = %s
effect = %s
# required: a harness that cannot honour the hook blocks the package there;
# optional needs fallback = "omit" and is then left out, visibly.
requirement = "required"
%stimeout_ms = %d
`, Comment("A hook: at "+h.Subject+"/"+h.Phase+", dalo runs its tool and applies the result as effect "+h.Effect+"."), tomledit.Quote(h.ID()), tomledit.Quote(h.ID()), tomledit.Quote(h.Subject), tomledit.Quote(h.Phase), tomledit.Quote(h.Effect), timeoutComment, ms)
	m.WriteString(policyComment(h.Effect))
	fmt.Fprintf(m, `failure_policy = %s
# never is the only value.
retry = "never"
# Who reads a failure's diagnostic: %s, or %s.
error_visibility = %s
# matched_event is the only value.
blocking_scope = "matched_event"
`, tomledit.Quote(plan.PolicyReport), plan.VisibilityUser, plan.VisibilityModelAndUser, tomledit.Quote(plan.VisibilityUser))
	if plan.Matchers[h.Subject][h.Phase] {
		m.WriteString(`# Optional, tool calls only: the native tool names it runs for, each
# harness's own (Claude Code's and Codex's shell is Bash, Gemini CLI's
# run_shell_command); without it, every call.
# matcher = { tool_names = ["Bash", "run_shell_command"] }
`)
	}
	m.WriteString(`# Optional: event fields bound to tool inputs, such as the session's directory.
# bindings = [{ input = "project_dir", field = "session.cwd" }]
`)
}

// policyComment says what failure_policy = "report" does and which other
// policies the rules admit for effect; for the effects that admit
// fail_closed (a gate among them), what a failure does under it.
func policyComment(effect string) string {
	const report = "# What a failure of the tool does (a crash, a timeout, a result the effect\n# does not admit): report leaves the action unchanged and tells the user.\n"
	others := slices.DeleteFunc(slices.Clone(plan.FailurePolicies[effect]), func(p string) bool { return p == plan.PolicyReport })
	if len(others) == 0 {
		return report + "# It is the only policy the draft admits for " + effect + ".\n"
	}
	s := report + "# The draft also admits for " + effect + ": " + strings.Join(others, ", ") + "."
	switch plan.FailClosed[effect] {
	case plan.FailDeny:
		s += "\n# fail_closed makes the hook fail closed: a failure denies the action."
	case plan.FailContinue:
		s += "\n# fail_closed makes a failure ask for another workflow pass."
	}
	return s + "\n"
}

const hookExample = `
# Hooks run a tool of this package on an event of the harness; for example:
# [[hook]]
# schema_version = 1
# id = "guard"
# tool = "guard"
# subject = "tool_call"
# phase = "before"
# effect = "gate"
# requirement = "required"
# timeout_ms = 5000
# failure_policy = "report"
# retry = "never"
# error_visibility = "user"
# blocking_scope = "matched_event"
# 'dalo plugin new NAME --hook tool_call/before:gate' writes one with its tool.
`

func memberFile(kind, name string) []byte {
	switch kind {
	case "skill":
		return fmt.Appendf(nil, `---
name: %s
description: Replace this with what the %s skill does and when to use it.
---

# %s

The skill's instructions, in Markdown: what to do, step by step, and the
files beside this SKILL.md it may read.
`, name, name, name)
	case "agent":
		return fmt.Appendf(nil, `---
name: %s
description: Replace this with what the %s agent does and when to delegate to it.
---

The agent's system prompt, in Markdown.
`, name, name)
	default:
		return fmt.Appendf(nil, `# %s

Standing instructions, in Markdown. 'dalo instruction enable' writes them,
in a block it owns, into a CLAUDE.md or AGENTS.md the user chooses.
`, name)
	}
}

// answers is the result each effect's new script answers with: one that
// changes nothing a user would not expect from a template. A gate allows
// (which grants nothing the harness withheld); an effect that would
// rewrite, replace or continue abstains until its author writes the rule.
var answers = map[string]string{
	plan.EffectObserve:    `{"kind":"observe"}`,
	plan.EffectAddContext: `{"kind":"add_context","context":"Context from %s: replace this with what the model should know."}`,
	plan.EffectGate:       `{"kind":"allow"}`,
}

// examples show the result kinds a script may answer, from the draft.
var examples = map[string]string{
	plan.KindObserve:          `{"kind":"observe"}`,
	plan.KindAbstain:          `{"kind":"abstain"}`,
	plan.KindAddContext:       `{"kind":"add_context","context":"Review contrast."}`,
	plan.KindAllow:            `{"kind":"allow"}`,
	plan.KindDeny:             `{"kind":"deny","reason":"Policy failed."}`,
	plan.KindRewriteInput:     `{"kind":"rewrite_input","input":{"command":"echo reviewed"}}`,
	plan.KindReplaceOutput:    `{"kind":"replace_output","output":{"result":"reviewed"}}`,
	plan.KindContinueWorkflow: `{"kind":"continue_workflow","reason":"Run the remaining checks."}`,
}

// Answer is the result the script of a new tool prints: a result of a kind
// the rules admit for the effect (plan.ResultKinds, generated from
// #ResultKinds), abstain when there is no hook or no better answer.
func Answer(id string, h *HookSpec) string {
	if h == nil {
		return `{"kind":"abstain"}`
	}
	a, ok := answers[h.Effect]
	if !ok {
		return `{"kind":"abstain"}`
	}
	if strings.Contains(a, "%s") {
		a = fmt.Sprintf(a, id)
	}
	return a
}

func toolScript(id string, h *HookSpec) []byte {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	if h == nil {
		b.WriteString(Comment("Tool " + id + ". No hook runs it yet; a hook that does gives it the harness's native event JSON on stdin and the arguments of argv, and it must print one JSON result for the hook's effect. Abstain is admitted for every effect."))
	} else {
		b.WriteString(Comment("Tool " + id + ", run by the hook " + h.String() + ". dalo starts it in a read-only copy of its package directory with the harness's native event JSON on stdin, the arguments of argv and only the environment names its tool declares. It prints one JSON result on stdout; for effect " + h.Effect + ", one of:"))
		kinds := plan.ResultKinds[h.Effect]
		if kinds == nil {
			kinds = []string{plan.KindAbstain}
		}
		for _, k := range kinds {
			if ex, ok := examples[k]; ok {
				fmt.Fprintf(&b, "#   %s\n", ex)
			}
		}
		b.WriteString("# Its stderr reaches the user only when it fails, never the model.\n")
	}
	fmt.Fprintf(&b, "printf '%%s\\n' '%s'\n", Answer(id, h))
	return []byte(b.String())
}
