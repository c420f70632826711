// Package sourcegen writes synthetic author sources for benchmarks: many
// valid packages that differ from each other the way real ones do (hook
// rows, effects, failure policies, runtimes, inputs, capabilities), so that
// a measurement does not ride on one manifest repeated, and one package with
// a manifest close to the 1 MiB limit.
package sourcegen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"dalo/plan"
)

// A row is one admitted hook shape: its subject, phase, effect and failure
// policy, the matcher it may carry, and the event fields it binds beyond the
// path input every tool of the generated packages takes.
type row struct {
	subject, phase, effect, policy string
	matcher                        string // inline table or ""
	text                           string // string field bound to input "text", or ""
	flag                           string // boolean field bound to input "flag", or ""
}

var rows = []row{
	{plan.SubjectSession, plan.PhaseStart, plan.EffectAddContext, plan.PolicyReport, "", "session.id", ""},
	{plan.SubjectSession, plan.PhaseStart, plan.EffectObserve, plan.PolicyReport, "", "", ""},
	{plan.SubjectSession, plan.PhaseEnd, plan.EffectObserve, plan.PolicyReport, "", "session.end_reason", ""},
	{plan.SubjectPrompt, plan.PhaseBefore, plan.EffectGate, plan.PolicyFailClosed, "", "prompt.text", ""},
	{plan.SubjectPrompt, plan.PhaseBefore, plan.EffectAddContext, plan.PolicyFailOpen, "", "session.permission_mode", ""},
	{plan.SubjectToolCall, plan.PhaseBefore, plan.EffectRewriteInput, plan.PolicyFailClosed, `{ tool_names = ["Bash"] }`, "tool.name", ""},
	{plan.SubjectToolCall, plan.PhaseBefore, plan.EffectGate, plan.PolicyReport, `{ tool_names = ["Bash", "Edit", "Write"] }`, "tool.call_id", ""},
	{plan.SubjectToolCall, plan.PhaseAfter, plan.EffectReplaceOutput, plan.PolicyReport, `{ tool_names = ["Bash"] }`, "tool.name", ""},
	{plan.SubjectToolCall, plan.PhaseAfter, plan.EffectAddContext, plan.PolicyFailOpen, `{ tool_names = [] }`, "", ""},
	{plan.SubjectToolCall, plan.PhaseFailure, plan.EffectAddContext, plan.PolicyReport, "", "tool.name", ""},
	{plan.SubjectWorkflow, plan.PhaseStop, plan.EffectContinueWorkflow, plan.PolicyFailClosed, "", "workflow.last_message", "workflow.already_continued"},
	{plan.SubjectWorkflow, plan.PhaseStop, plan.EffectObserve, plan.PolicyReport, "", "actor.kind", ""},
}

type runtime struct {
	name, entry, file, body string
	exec                    bool
}

var runtimes = []runtime{
	{plan.RuntimeNode, "index.mjs", "lib/util.mjs", "import './lib/util.mjs';\nprocess.stdout.write('{\"kind\":\"abstain\"}');\n", false},
	{plan.RuntimePython, "main.py", "lib/util.py", "import json\nprint(json.dumps({'kind': 'abstain'}))\n", false},
	{plan.RuntimeExecutable, "bin/run.sh", "lib/common.sh", "#!/bin/sh\necho '{\"kind\":\"abstain\"}'\n", true},
}

var capabilitySets = []string{
	`["filesystem_read"]`,
	`["filesystem_read", "subprocess"]`,
	`[]`,
	`["network"]`,
	`["filesystem_read", "filesystem_write"]`,
}

// Shared member assets: packages draw from these pools.
const (
	skills       = 50
	instructions = 20
	agents       = 10
)

// Write creates dir as a source of n packages, each with three members,
// two tools and three hooks, and every skill, instruction and agent they
// name. bigBytes > 0 adds a package "big" whose manifest is about that size.
func Write(dir string, n, bigBytes int) error {
	w := &writer{dir: dir}
	for i := range skills {
		w.file(fmt.Sprintf("skills/skill-%d/SKILL.md", i), fmt.Sprintf("---\nname: skill-%d\ndescription: Guidance number %d for reviewing work.\n---\nReview carefully.\n", i, i), false)
	}
	for i := range instructions {
		w.file(fmt.Sprintf("instructions/guide-%d.md", i), fmt.Sprintf("# Guide %d\n\nPrefer small changes.\n", i), false)
	}
	for i := range agents {
		w.file(fmt.Sprintf("agents/agent-%d.md", i), fmt.Sprintf("---\nname: agent-%d\ndescription: Reviews in isolation.\n---\nReview.\n", i), false)
	}
	for i := range n {
		w.pkg(i, n)
	}
	if bigBytes > 0 {
		w.big(bigBytes)
	}
	return w.err
}

type writer struct {
	dir string
	err error
	// restyle, when set, rewrites each file before it is written
	// (WriteStyled).
	restyle func(rel, data string) string
}

func (w *writer) file(rel, data string, exec bool) {
	if w.err != nil {
		return
	}
	if w.restyle != nil {
		data = w.restyle(rel, data)
	}
	p := filepath.Join(w.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.err = err
		return
	}
	mode := os.FileMode(0o644)
	if exec {
		mode = 0o755
	}
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		w.err = err
		return
	}
	if exec {
		w.err = os.Chmod(p, mode) // WriteFile's mode is subject to umask
	}
}

func (w *writer) pkg(i, n int) {
	name := fmt.Sprintf("pkg-%04d", i)
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version = 1\n\n[plugin]\nname = %q\n", name)
	fmt.Fprintf(&b, "description = \"Synthetic package %d: %s.\"\n", i, []string{"review guidance", "release checks", "style enforcement", "test reminders"}[i%4])
	if i%3 != 0 {
		fmt.Fprintf(&b, "id = \"bench.%s\"\n", name)
	}
	if i%2 == 0 {
		fmt.Fprintf(&b, "version = \"0.%d.%d\"\n", i%7, i%13)
	}
	skill := fmt.Sprintf("skill:skill-%d", i%skills)
	fmt.Fprintf(&b, "\n[[plugin.members]]\nref = %q\nrequirement = \"required\"\n", skill)
	fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"instruction:guide-%d\"\nrequirement = %q\n", i%instructions, []string{plan.RequirementRecommended, plan.RequirementOptional, plan.RequirementRequired}[i%3])
	if i%2 == 0 {
		fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"agent:agent-%d\"\nrequirement = \"optional\"\nfallback = { kind = \"inline\", skill = %q }\n", i%agents, skill)
	} else {
		fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"skill:skill-%d\"\nrequirement = \"optional\"\n", (i+1)%skills)
	}
	if i > 0 && i%5 == 0 {
		// Requirements only point backwards: no cycles.
		fmt.Fprintf(&b, "\n[[plugin.requires]]\nref = \"plugin:pkg-%04d\"\nrequirement = %q\n", i-1-(i%3), []string{plan.RequirementOptional, plan.RequirementRequired}[i%2])
	}
	for t := range 2 {
		rt := runtimes[(i+t)%len(runtimes)]
		id := fmt.Sprintf("tool-%d", t)
		w.tool(&b, name, id, rt, i+t, "")
	}
	for h := range 3 {
		r := rows[(i*3+h)%len(rows)]
		w.hook(&b, fmt.Sprintf("hook-%d", h), fmt.Sprintf("tool-%d", h%2), r, i+h)
	}
	w.file("plugins/"+name+"/PLUGIN.toml", b.String(), false)
}

// tool writes a [[tool]] and its files. Every tool takes a required path
// input and optional string and boolean inputs, so that every row's
// bindings fit it.
func (w *writer) tool(b *strings.Builder, pkg, id string, rt runtime, k int, pad string) {
	fmt.Fprintf(b, "\n[[tool]]\nschema_version = 1\nid = %q\nentry = %q\nfiles = [%q]\nruntime = %q\n", id, rt.entry, rt.file, rt.name)
	if k%2 == 0 && rt.name != plan.RuntimeExecutable {
		fmt.Fprintf(b, "runtime_version = \">=%d\"\n", 18+k%4)
	}
	argv := `["${input.project_dir}", "--mode", "` + []string{"fast", "full", "diff"}[k%3] + `"`
	if pad != "" {
		argv += `, "--note", "` + pad + `"`
	}
	argv += "]"
	fmt.Fprintf(b, "argv = %s\ncwd = \"tool_root\"\navailability = %q\n", argv, []string{plan.RequirementRequired, plan.RequirementOptional}[k%2])
	if k%3 == 0 {
		b.WriteString("env = [\"HOME\", \"PATH\"]\n")
	}
	fmt.Fprintf(b, "capabilities = %s\n", capabilitySets[k%len(capabilitySets)])
	if k%4 != 3 {
		b.WriteString("platforms = [\"linux\", \"macos\"]\n")
	}
	b.WriteString("\n[[tool.inputs]]\nname = \"project_dir\"\ntype = \"path\"\n")
	b.WriteString("\n[[tool.inputs]]\nname = \"text\"\ntype = \"string\"\nrequired = false\n")
	b.WriteString("\n[[tool.inputs]]\nname = \"flag\"\ntype = \"boolean\"\nrequired = false\n")
	if pkg != "" {
		w.file("plugins/"+pkg+"/"+rt.entry, rt.body, rt.exec)
		w.file("plugins/"+pkg+"/"+rt.file, "# helper\n", false)
	}
}

func (w *writer) hook(b *strings.Builder, id, tool string, r row, k int) {
	fmt.Fprintf(b, "\n[[hook]]\nschema_version = 1\nid = %q\ntool = %q\nsubject = %q\nphase = %q\neffect = %q\n", id, tool, r.subject, r.phase, r.effect)
	if k%3 == 0 {
		b.WriteString("requirement = \"optional\"\nfallback = \"omit\"\n")
	} else {
		b.WriteString("requirement = \"required\"\n")
	}
	fmt.Fprintf(b, "timeout_ms = %d\nfailure_policy = %q\nretry = \"never\"\n", []int{100, 5000, 30000, 120000, 2500}[k%5], r.policy)
	fmt.Fprintf(b, "error_visibility = %q\nblocking_scope = \"matched_event\"\n", []string{plan.VisibilityUser, plan.VisibilityModelAndUser}[k%2])
	if r.matcher != "" {
		fmt.Fprintf(b, "matcher = %s\n", r.matcher)
	}
	b.WriteString("bindings = [\n  { input = \"project_dir\", field = \"session.cwd\" },\n")
	if r.text != "" {
		fmt.Fprintf(b, "  { input = \"text\", field = %q },\n", r.text)
	}
	if r.flag != "" {
		fmt.Fprintf(b, "  { input = \"flag\", field = %q },\n", r.flag)
	}
	b.WriteString("]\n")
}

// big writes package "big": as many tools and hooks as the array limit
// admits, with argv padded so that the manifest is about size bytes.
func (w *writer) big(size int) {
	const pairs = 1000
	render := func(pad int) string {
		var b strings.Builder
		b.WriteString("schema_version = 1\n\n[plugin]\nname = \"big\"\ndescription = \"A package whose manifest is near the 1 MiB limit.\"\n")
		b.WriteString("\n[[plugin.members]]\nref = \"skill:skill-0\"\nrequirement = \"required\"\n")
		note := strings.Repeat("n", pad)
		for i := range pairs {
			w.tool(&b, "", fmt.Sprintf("tool-%d", i), runtimes[i%len(runtimes)], i, note)
			w.hook(&b, fmt.Sprintf("hook-%d", i), fmt.Sprintf("tool-%d", i), rows[i%len(rows)], i)
		}
		return b.String()
	}
	base := len(render(1))
	pad := 1
	if size > base {
		pad = 1 + (size-base)/pairs
	}
	w.file("plugins/big/PLUGIN.toml", render(pad), false)
	for _, rt := range runtimes {
		w.file("plugins/big/"+rt.entry, rt.body, rt.exec)
		w.file("plugins/big/"+rt.file, "# helper\n", false)
	}
}
