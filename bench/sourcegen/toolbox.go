package sourcegen

import (
	"fmt"
	"strings"

	"dalo/plan"
)

// WriteToolbox creates dir as a source of n packages of a fourth shape,
// unlike the others: few members (one agent of its own) and many small
// tools and hooks in a long manifest (six tools, twelve hooks, one on
// each hook row, about 8 KB), written the other ways TOML allows
// (comments, literal strings, dotted keys, members and inputs as inline
// arrays of inline tables), each tool with a folder of helper files three levels
// deep. It profiles the manifest's decoding, the hook and binding rules and
// the walks of many small folders.
func WriteToolbox(dir string, n int) error {
	return writeEach(dir, n, (*writer).toolboxPkg)
}

func (w *writer) toolboxPkg(i int) {
	name := fmt.Sprintf("tb-%04d", i)
	var b strings.Builder
	fmt.Fprintf(&b, "# Package %d: a toolbox of small tools.\nschema_version = 1\n\n", i)
	fmt.Fprintf(&b, "[plugin]\nname = '%s'\ndescription = 'Toolbox %d: checks run around each tool call.'\n", name, i)
	fmt.Fprintf(&b, "id = \"toolbox.%s\" # stable across renames\nversion = \"3.%d.%d\"\n", name, i%5, i%11)
	agent := name + "-runner"
	w.file("agents/"+agent+".md", fmt.Sprintf("---\nname: %s\ndescription: Runs the toolbox of package %d.\n---\nRun each check.\n", agent, i), false)
	fmt.Fprintf(&b, "members = [{ ref = \"agent:%s\", requirement = \"optional\" }]\n", agent)
	const tools = 6
	for t := range tools {
		rt := runtimes[(i+t)%len(runtimes)]
		dirName := fmt.Sprintf("t%d", t)
		fmt.Fprintf(&b, "\n[[tool]]\nschema_version = 1\nid = 'check-%d'\n", t)
		fmt.Fprintf(&b, "entry = %q\n", dirName+"/"+rt.entry)
		var files []string
		for d, rel := range []string{"/lib/common/helper-0.txt", "/lib/common/deep/helper-1.txt"} {
			files = append(files, fmt.Sprintf("%q", dirName+rel))
			w.file("plugins/"+name+"/"+dirName+rel, strings.Repeat("helper line\n", 5+d), false)
		}
		fmt.Fprintf(&b, "files = [\n  %s,\n]\nruntime = %q\n", strings.Join(files, ",\n  "), rt.name)
		fmt.Fprintf(&b, "argv = [\"${input.project_dir}\", \"${input.text}\", \"--check\", \"%d\"]\ncwd = \"tool_root\"\n", t)
		fmt.Fprintf(&b, "availability = %q\ncapabilities = %s\n", []string{plan.RequirementRequired, plan.RequirementOptional}[t%2], capabilitySets[(i+t)%len(capabilitySets)])
		b.WriteString("inputs = [\n  { name = \"project_dir\", type = \"path\" },\n  { name = \"text\", type = \"string\", required = false },\n  { name = \"flag\", type = \"boolean\", required = false },\n]\n")
		w.file("plugins/"+name+"/"+dirName+"/"+rt.entry, rt.body, rt.exec)
	}
	for h, r := range rows {
		fmt.Fprintf(&b, "\n[[hook]]\nschema_version = 1\nid = \"hook-%d\"\ntool = 'check-%d'\n", h, (i+h)%tools)
		fmt.Fprintf(&b, "subject = %q\nphase = %q\neffect = %q\n", r.subject, r.phase, r.effect)
		fmt.Fprintf(&b, "requirement = \"required\"\ntimeout_ms = %d\nfailure_policy = %q\n", 500*(h+1), r.policy)
		b.WriteString("retry = \"never\"\nerror_visibility = \"user\"\nblocking_scope = \"matched_event\"\n")
		if r.matcher != "" {
			// { tool_names = [...] } as a dotted key
			fmt.Fprintf(&b, "matcher.%s\n", strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(r.matcher, "{"), "}")))
		}
		fmt.Fprintf(&b, "bindings = [{ input = \"project_dir\", field = \"session.cwd\" }")
		if r.text != "" {
			fmt.Fprintf(&b, ", { input = \"text\", field = %q }", r.text)
		}
		if r.flag != "" {
			fmt.Fprintf(&b, ", { input = \"flag\", field = %q }", r.flag)
		}
		b.WriteString("]\n")
	}
	w.file("plugins/"+name+"/PLUGIN.toml", b.String(), false)
}
