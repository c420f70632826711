package sourcegen

import (
	"fmt"
	"strings"

	"dalo/plan"
)

// WriteGates creates dir as a source of n packages of many tool-call
// gates: two tools of twelve inputs each, and forty hooks, each on a
// tool_call row, with a matcher of twenty to forty native tool names of
// every harness and MCP tools of the package's own (one hook in eight
// also names a tool no harness has), and eight to twelve bindings of the
// event's fields (about 70 KB of manifest). It weighs the decoding of
// long manifests and what the provider tables make of each hook's
// matcher and bindings.
func WriteGates(dir string, n int) error {
	return writeEach(dir, n, (*writer).gatesPkg)
}

// gateRows are the tool_call rows a gate may be on.
var gateRows = []row{
	{subject: plan.SubjectToolCall, phase: plan.PhaseBefore, effect: plan.EffectGate, policy: plan.PolicyFailClosed},
	{subject: plan.SubjectToolCall, phase: plan.PhaseBefore, effect: plan.EffectRewriteInput, policy: plan.PolicyFailClosed},
	{subject: plan.SubjectToolCall, phase: plan.PhaseAfter, effect: plan.EffectAddContext, policy: plan.PolicyFailOpen},
	{subject: plan.SubjectToolCall, phase: plan.PhaseAfter, effect: plan.EffectReplaceOutput, policy: plan.PolicyReport},
	{subject: plan.SubjectToolCall, phase: plan.PhaseFailure, effect: plan.EffectObserve, policy: plan.PolicyReport},
	{subject: plan.SubjectToolCall, phase: plan.PhaseBefore, effect: plan.EffectObserve, policy: plan.PolicyReport},
}

// gateTools are native tool names of the harnesses dalo has tables for,
// and gateFields the fields of a tool call a gate binds, with the type of
// the input each fills.
var (
	gateTools = []string{
		"Bash", "Edit", "Write", "Read", "Grep", "Glob", "NotebookEdit", "WebFetch", "WebSearch",
		"run_shell_command", "write_file", "replace", "read_file", "glob", "web_fetch", "apply_patch",
	}
	gateFields = []struct{ field, typ string }{
		{"session.id", "string"}, {"session.cwd", "path"}, {"transcript.path", "path"}, {"actor.kind", "string"},
		{"actor.id", "string"}, {"tool.call_id", "string"}, {"tool.name", "string"}, {"session.permission_mode", "string"},
	}
)

func (w *writer) gatesPkg(i int) {
	name := fmt.Sprintf("gate-%04d", i)
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version = 1\n\n[plugin]\nname = %q\n", name)
	fmt.Fprintf(&b, "description = \"Policy gates %d for many native tools.\"\nid = \"gates.%s\"\nversion = \"2.%d.%d\"\n", i, name, i%5, i%13)
	const inputs = 12
	for t := range 2 {
		rt := runtimes[(i+t)%len(runtimes)]
		dirName := fmt.Sprintf("g%d", t)
		fmt.Fprintf(&b, "\n[[tool]]\nschema_version = 1\nid = \"gate-%d\"\nentry = %q\nruntime = %q\n", t, dirName+"/"+rt.entry, rt.name)
		b.WriteString("argv = [\"${input.project_dir}\", \"${input.in_0}\"]\ncwd = \"tool_root\"\navailability = \"required\"\n")
		fmt.Fprintf(&b, "capabilities = %s\n", capabilitySets[(i+t)%len(capabilitySets)])
		b.WriteString("\n[[tool.inputs]]\nname = \"project_dir\"\ntype = \"path\"\n")
		for k := range inputs {
			fmt.Fprintf(&b, "\n[[tool.inputs]]\nname = \"in_%d\"\ntype = %q\nrequired = false\n", k, gateFields[k%len(gateFields)].typ)
		}
		w.file("plugins/"+name+"/"+dirName+"/"+rt.entry, rt.body, rt.exec)
	}
	for h := range 40 {
		r := gateRows[(i+h)%len(gateRows)]
		fmt.Fprintf(&b, "\n[[hook]]\nschema_version = 1\nid = \"gate-hook-%d\"\ntool = \"gate-%d\"\n", h, h%2)
		fmt.Fprintf(&b, "subject = %q\nphase = %q\neffect = %q\n", r.subject, r.phase, r.effect)
		if h%3 == 0 {
			b.WriteString("requirement = \"optional\"\nfallback = \"omit\"\n")
		} else {
			b.WriteString("requirement = \"required\"\n")
		}
		fmt.Fprintf(&b, "timeout_ms = %d\nfailure_policy = %q\nretry = \"never\"\n", 100+997*h, r.policy)
		b.WriteString("error_visibility = \"user\"\nblocking_scope = \"matched_event\"\n")
		var names []string
		for k := range 8 + (i+h)%8 {
			names = append(names, fmt.Sprintf("%q", gateTools[(i+h+3*k)%len(gateTools)]))
		}
		for k := range 12 + (i*7+h)%16 {
			names = append(names, fmt.Sprintf("\"mcp__%s_%d__tool_%d\"", name, h, k))
		}
		if h%8 == 5 {
			names = append(names, "\"TodoWrite\"")
		}
		fmt.Fprintf(&b, "matcher = { tool_names = [%s] }\n", strings.Join(names, ", "))
		b.WriteString("bindings = [\n  { input = \"project_dir\", field = \"session.cwd\" },\n")
		for k := range 8 + (i+h)%5 {
			fmt.Fprintf(&b, "  { input = \"in_%d\", field = %q },\n", k, gateFields[k%len(gateFields)].field)
		}
		b.WriteString("]\n")
	}
	w.file("plugins/"+name+"/PLUGIN.toml", b.String(), false)
}
