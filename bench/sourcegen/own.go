package sourcegen

import (
	"fmt"
	"strings"

	"dalo/plan"
)

// WriteOwn creates dir as a source of n packages of another shape than
// Write's, the one issue 27 measured: each package has members of its own
// (two skills, each with a script beside its SKILL.md, and an instruction,
// none shared with another package), two tools with larger files, and
// three hooks that bind several fields: about 36 KB of source a package.
// Write's packages share a pool of 80 members, so a validator that checks
// each member once looks cheaper there than on a source whose every
// package brings its own.
func WriteOwn(dir string, n int) error {
	return writeEach(dir, n, (*writer).ownPkg)
}

// writeEach creates dir as a source of n packages, package i written by
// pkg.
func writeEach(dir string, n int, pkg func(w *writer, i int)) error {
	w := &writer{dir: dir}
	for i := range n {
		pkg(w, i)
	}
	return w.err
}

// ownRows are the hook shapes of WriteOwn's packages: three a package,
// each binding two or three fields.
var ownRows = []row{
	{plan.SubjectToolCall, plan.PhaseBefore, plan.EffectGate, plan.PolicyFailClosed, `{ tool_names = ["Bash", "run_shell_command"] }`, "tool.name", ""},
	{plan.SubjectPrompt, plan.PhaseBefore, plan.EffectAddContext, plan.PolicyReport, "", "prompt.text", ""},
	{plan.SubjectWorkflow, plan.PhaseStop, plan.EffectContinueWorkflow, plan.PolicyFailClosed, "", "workflow.last_message", "workflow.already_continued"},
	{plan.SubjectToolCall, plan.PhaseAfter, plan.EffectAddContext, plan.PolicyFailOpen, `{ tool_names = ["Edit", "Write"] }`, "tool.call_id", ""},
	{plan.SubjectSession, plan.PhaseStart, plan.EffectAddContext, plan.PolicyReport, "", "session.id", ""},
}

// prose is n bytes of Markdown paragraphs, varied by seed.
func prose(seed, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%d. When reviewing change %d, check step %d of %d and note what it touches.\n", i+1, seed, i, seed%97)
		if i%8 == 7 {
			b.WriteString("\n## Section\n\n")
		}
	}
	return b.String()
}

func (w *writer) ownPkg(i int) {
	name := fmt.Sprintf("own-%04d", i)
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version = 1\n\n[plugin]\nname = %q\n", name)
	fmt.Fprintf(&b, "description = \"Package %d with members of its own.\"\nid = \"own.%s\"\nversion = \"1.%d.0\"\n", i, name, i%10)
	for s := range 2 {
		skill := fmt.Sprintf("%s-skill-%d", name, s)
		w.file("skills/"+skill+"/SKILL.md", fmt.Sprintf("---\nname: %s\ndescription: Guidance %d of package %d, for reviews of its area.\nallowed-tools: Bash(./check.sh:*)\n---\n# %s\n\n%s", skill, s, i, skill, prose(i+s, 9000)), false)
		w.file("skills/"+skill+"/check.sh", "#!/bin/sh\n"+strings.Repeat("# a line of the check script\n", 40)+"echo ok\n", true)
		fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"skill:%s\"\nrequirement = %q\n", skill, []string{plan.RequirementRequired, plan.RequirementOptional}[s])
	}
	instr := name + "-guide"
	w.file("instructions/"+instr+".md", "# Standing guidance\n\n"+prose(i, 4000), false)
	fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"instruction:%s\"\nrequirement = \"recommended\"\n", instr)
	for t := range 2 {
		rt := runtimes[(i+t)%len(runtimes)]
		fmt.Fprintf(&b, "\n[[tool]]\nschema_version = 1\nid = \"tool-%d\"\nentry = %q\nfiles = [%q]\nruntime = %q\n", t, rt.entry, rt.file, rt.name)
		fmt.Fprintf(&b, "argv = [\"${input.project_dir}\", \"${input.text}\", \"--mode\", %q]\ncwd = \"tool_root\"\navailability = \"required\"\n", []string{"fast", "full"}[t])
		b.WriteString("env = [\"HOME\"]\ncapabilities = [\"filesystem_read\"]\n")
		b.WriteString("\n[[tool.inputs]]\nname = \"project_dir\"\ntype = \"path\"\n")
		b.WriteString("\n[[tool.inputs]]\nname = \"text\"\ntype = \"string\"\nrequired = false\n")
		b.WriteString("\n[[tool.inputs]]\nname = \"flag\"\ntype = \"boolean\"\nrequired = false\n")
		w.file("plugins/"+name+"/"+rt.entry, rt.body+strings.Repeat("// handler code\n", 200), rt.exec)
		w.file("plugins/"+name+"/"+rt.file, strings.Repeat("# helper code\n", 150), false)
	}
	for h := range 3 {
		r := ownRows[(i+h)%len(ownRows)]
		fmt.Fprintf(&b, "\n[[hook]]\nschema_version = 1\nid = \"hook-%d\"\ntool = \"tool-%d\"\nsubject = %q\nphase = %q\neffect = %q\n", h, h%2, r.subject, r.phase, r.effect)
		fmt.Fprintf(&b, "requirement = \"required\"\ntimeout_ms = %d\nfailure_policy = %q\nretry = \"never\"\n", 1000*(h+1), r.policy)
		fmt.Fprintf(&b, "error_visibility = \"user\"\nblocking_scope = \"matched_event\"\n")
		if r.matcher != "" {
			fmt.Fprintf(&b, "matcher = %s\n", r.matcher)
		}
		b.WriteString("bindings = [\n  { input = \"project_dir\", field = \"session.cwd\" },\n")
		fmt.Fprintf(&b, "  { input = \"text\", field = %q },\n", r.text)
		if r.flag != "" {
			fmt.Fprintf(&b, "  { input = \"flag\", field = %q },\n", r.flag)
		}
		b.WriteString("]\n")
	}
	w.file("plugins/"+name+"/PLUGIN.toml", b.String(), false)
}
