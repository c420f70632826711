package sourcegen

import (
	"fmt"
	"strings"
)

// WriteCrew creates dir as a source of n packages of subagents written
// the way Claude Code's are: twelve agents a package, each description a
// double-quoted YAML string of escaped line breaks and quotes around
// examples (about 700 bytes), a list of tools, a model, a color and, for
// every third, a permission mode, over some 3 KB of instructions; and a
// skill of the package's own that half of them fall back to. It weighs
// reading and checking the front matter of many agents against the
// floor's one short manifest.
func WriteCrew(dir string, n int) error {
	return writeEach(dir, n, (*writer).crewPkg)
}

var (
	crewModels = []string{"sonnet", "opus", "haiku", "inherit"}
	crewColors = []string{"red", "blue", "green", "purple", "orange"}
	crewTools  = []string{"Read", "Grep", "Glob", "Bash", "Edit", "Write", "WebFetch", "WebSearch"}
)

func (w *writer) crewPkg(i int) {
	name := fmt.Sprintf("crew-%04d", i)
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version = 1\n\n[plugin]\nname = %q\n", name)
	fmt.Fprintf(&b, "description = \"Review crew %d: a dozen subagents.\"\nid = \"crews.%s\"\nversion = \"1.%d.0\"\n", i, name, i%7)
	skill := name + "-guide"
	w.file("skills/"+skill+"/SKILL.md", fmt.Sprintf("---\nname: %s\ndescription: How crew %d reviews, for when no subagent can run.\n---\n%s", skill, i, prose(i, 800)), false)
	fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"skill:%s\"\nrequirement = \"required\"\n", skill)
	for a := range 12 {
		agent := fmt.Sprintf("%s-reviewer-%d", name, a)
		var fm strings.Builder
		fmt.Fprintf(&fm, "---\nname: %s\n", agent)
		fmt.Fprintf(&fm, `description: "Use this agent when package %d needs its area %d reviewed. Examples:\n\n`, i, a)
		for e := range 3 {
			fmt.Fprintf(&fm, `<example>\nContext: The user changed module %d of area %d.\nuser: \"Please check module %d\"\nassistant: \"I'll use the %s agent to check it.\"\n<commentary>\nSince code was written, use the agent.\n</commentary>\n</example>`, e, a, e, agent)
			if e < 2 {
				fm.WriteString(`\n\n`)
			}
		}
		fm.WriteString("\"\n")
		tools := make([]string, 0, 4)
		for k := range 4 {
			tools = append(tools, crewTools[(i+a+2*k)%len(crewTools)])
		}
		fmt.Fprintf(&fm, "tools: %s\nmodel: %s\ncolor: %s\n", strings.Join(tools, ", "), crewModels[(i+a)%len(crewModels)], crewColors[(i+a)%len(crewColors)])
		if a%3 == 0 {
			fm.WriteString("permissionMode: acceptEdits\n")
		}
		fm.WriteString("---\nYou are a specialised reviewer.\n\n")
		w.file("agents/"+agent+".md", fm.String()+prose(12*i+a, 3000), false)
		fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"agent:%s\"\nrequirement = \"optional\"\n", agent)
		if a%2 == 0 {
			fmt.Fprintf(&b, "fallback = { kind = \"inline\", skill = \"skill:%s\" }\n", skill)
		}
	}
	w.file("plugins/"+name+"/PLUGIN.toml", b.String(), false)
}
