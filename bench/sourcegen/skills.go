package sourcegen

import (
	"fmt"
	"strings"

	"dalo/plan"
)

// WriteSkills creates dir as a source of n packages of a third shape, one
// that neither Write nor WriteOwn has: many small skills of each
// package's own, each with long front matter (every field the Agent
// Skills specification defines, a long description and a metadata map),
// an agent, and no tools or hooks. It profiles the member checks alone:
// front matter, the skill directories' walk and the references.
func WriteSkills(dir string, n int) error {
	return writeEach(dir, n, (*writer).skillsPkg)
}

func (w *writer) skillsPkg(i int) {
	name := fmt.Sprintf("sk-%04d", i)
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version = 1\n\n[plugin]\nname = %q\n", name)
	fmt.Fprintf(&b, "description = \"Package %d of many small skills.\"\nid = \"skills.%s\"\nversion = \"2.%d.0\"\n", i, name, i%7)
	for s := range 6 {
		skill := fmt.Sprintf("%s-s%d", name, s)
		var fm strings.Builder
		fmt.Fprintf(&fm, "---\nname: %s\n", skill)
		fmt.Fprintf(&fm, "description: >-\n  Use when reviewing area %d of package %d. %s\n", s, i, strings.Repeat("It checks one more thing the team cares about. ", 10))
		fm.WriteString("license: Apache-2.0\ncompatibility: Needs a POSIX shell and git 2.30 or later.\n")
		fm.WriteString("allowed-tools: Bash(git diff:*) Read Grep\nmetadata:\n")
		for k := range 8 {
			fmt.Fprintf(&fm, "  key-%d: \"value %d of %s\"\n", k, k, skill)
		}
		fm.WriteString("---\n")
		w.file("skills/"+skill+"/SKILL.md", fm.String()+"# "+skill+"\n\nShort guidance.\n", false)
		w.file("skills/"+skill+"/reference/notes.md", "Notes.\n", false)
		fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"skill:%s\"\nrequirement = %q\n", skill, []string{plan.RequirementRequired, plan.RequirementOptional}[s%2])
	}
	agent := name + "-reviewer"
	w.file("agents/"+agent+".md", fmt.Sprintf("---\nname: %s\ndescription: Reviews package %d in isolation.\n---\nReview.\n", agent, i), false)
	fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"agent:%s\"\nrequirement = \"optional\"\n", agent)
	w.file("plugins/"+name+"/PLUGIN.toml", b.String(), false)
}
