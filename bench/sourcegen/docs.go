package sourcegen

import (
	"fmt"
	"strings"

	"dalo/plan"
)

// WriteDocs creates dir as a source of n packages whose members are
// files read whole or by their heads, not folders: four instructions of
// about 10 KB and three agents with a body of about 3 KB each, under a
// manifest of a few lines and no tools or hooks. An instruction is read
// to its end (it must be text), so this shape weighs what the walks of
// skill folders leave out: reading member files against the floor's one
// small manifest.
func WriteDocs(dir string, n int) error {
	return writeEach(dir, n, (*writer).docsPkg)
}

func (w *writer) docsPkg(i int) {
	name := fmt.Sprintf("doc-%04d", i)
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version = 1\n\n[plugin]\nname = %q\n", name)
	fmt.Fprintf(&b, "description = \"Package %d of guidance and agents.\"\nid = \"docs.%s\"\nversion = \"3.%d.1\"\n", i, name, i%9)
	for k := range 4 {
		in := fmt.Sprintf("%s-guide-%d", name, k)
		w.file("instructions/"+in+".md", "# Guidance\n\n"+prose(4*i+k, 10000), false)
		fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"instruction:%s\"\nrequirement = %q\n", in, []string{plan.RequirementRecommended, plan.RequirementOptional}[k%2])
	}
	for k := range 3 {
		agent := fmt.Sprintf("%s-agent-%d", name, k)
		w.file("agents/"+agent+".md", fmt.Sprintf("---\nname: %s\ndescription: Agent %d of package %d, for careful reviews of its area.\nmodel: inherit\n---\n%s", agent, k, i, prose(i+k, 3000)), false)
		fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"agent:%s\"\nrequirement = \"optional\"\n", agent)
	}
	w.file("plugins/"+name+"/PLUGIN.toml", b.String(), false)
}
