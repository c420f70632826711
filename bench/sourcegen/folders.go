package sourcegen

import (
	"fmt"
	"strings"
)

// WriteFolders creates dir as a source of n packages of skills laid out
// as Codex's published skills are: three skills a package, each a folder
// with its SKILL.md (a long description and a metadata map), an
// agents/openai.yaml of interface settings, a script under scripts/, a
// reference under references/ and an icon under assets/; no tools or
// hooks. Each skill is a folder of four folders and five files, which
// the draft's bounds on traversal make a validator list and state: this
// shape weighs the walk of member folders (bench/walkfloor) against the
// floor's one short manifest.
func WriteFolders(dir string, n int) error {
	return writeEach(dir, n, (*writer).foldersPkg)
}

func (w *writer) foldersPkg(i int) {
	name := fmt.Sprintf("fold-%04d", i)
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version = 1\n\n[plugin]\nname = %q\n", name)
	fmt.Fprintf(&b, "description = \"Skills of team %d, as folders.\"\nid = \"folders.%s\"\nversion = \"0.%d.2\"\n", i, name, i%11)
	for s := range 3 {
		skill := fmt.Sprintf("%s-s%d", name, s)
		var fm strings.Builder
		fmt.Fprintf(&fm, "---\nname: %s\n", skill)
		fmt.Fprintf(&fm, "description: Inspect the failing checks of change %d in area %d, pull their logs, summarize what failed and propose a plan before fixing it. Use when a user asks to debug failing CI and wants a plan and code changes; report checks run elsewhere by their links only.\n", i, s)
		fmt.Fprintf(&fm, "metadata:\n  short-description: Debug failing CI %d\n---\n", s)
		w.file("skills/"+skill+"/SKILL.md", fm.String()+"# "+skill+"\n\n"+prose(3*i+s, 2500), false)
		w.file("skills/"+skill+"/agents/openai.yaml", fmt.Sprintf("interface:\n  display_name: \"Fix CI %d\"\n  short_description: \"Debug failing CI\"\n  icon_small: \"./assets/icon.svg\"\n  default_prompt: \"Use $%s to fix the failing checks.\"\n", s, skill), false)
		w.file("skills/"+skill+"/scripts/inspect_checks.py", "#!/usr/bin/env python3\nprint('checks')\n", true)
		w.file("skills/"+skill+"/references/cli.md", "# CLI\n\n"+prose(i+s, 1500), false)
		w.file("skills/"+skill+"/assets/icon.svg", "<svg xmlns='http://www.w3.org/2000/svg'/>\n", false)
		fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"skill:%s\"\nrequirement = \"required\"\n", skill)
	}
	w.file("plugins/"+name+"/PLUGIN.toml", b.String(), false)
}
