package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"dalo/plan"
)

// A Kit is a generated author source holding one package, whose every hook
// runs a tool of its own with the same id. The probe and matrix kits are
// kits, and so are the live suite's own; each writes its own handlers, and
// Kit writes the rest.
type Kit struct {
	Name, Description string
	Hooks             []KitHook
	// Skills are required skill members, by name: the text of each
	// one's SKILL.md.
	Skills map[string]string
	// Agents are required agent members, by name: the text of each
	// one's file.
	Agents map[string]string
}

// A KitHook is one hook of a kit and its tool.
type KitHook struct {
	ID, Subject, Phase, Effect string
	Policy, Visibility         string // report and user when empty
	TimeoutMS                  int    // 5000 when 0
	Tools                      []string
	// Inputs are the tool's inputs, each name=type=field: bound to that
	// event field. Argv is the tool's argv; nil passes every input in
	// order.
	Inputs []string
	Argv   []string
	// Env is the tool's env. A tool that may read LIVE_OUT writes there,
	// so it declares filesystem_write.
	Env []string
	// Runtime is executable when empty; Entry is <id>.sh when empty, and
	// Handler its content.
	Runtime, Entry, Handler string
}

// Files returns the kit's source: plugins/<name>/PLUGIN.toml and every
// hook's handler beside it.
func (k Kit) Files() map[string]string {
	dir := "plugins/" + k.Name + "/"
	files := map[string]string{}
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version = 1\n\n[plugin]\nname = %q\ndescription = %q\nid = %q\n", k.Name, k.Description, "dalo."+k.Name)
	if len(k.Skills)+len(k.Agents) > 0 {
		var members []string
		for _, name := range slices.Sorted(maps.Keys(k.Skills)) {
			members = append(members, fmt.Sprintf("{ ref = %q, requirement = \"required\" }", "skill:"+name))
			files["skills/"+name+"/SKILL.md"] = k.Skills[name]
		}
		for _, name := range slices.Sorted(maps.Keys(k.Agents)) {
			members = append(members, fmt.Sprintf("{ ref = %q, requirement = \"required\" }", "agent:"+name))
			files["agents/"+name+".md"] = k.Agents[name]
		}
		b.WriteString("members = [" + strings.Join(members, ", ") + "]\n")
	}
	for _, h := range k.Hooks {
		h.source(&b, files, dir)
	}
	files[dir+"PLUGIN.toml"] = b.String()
	return files
}

// source writes h's tool and hook to b, and its handler to files.
func (h KitHook) source(b *strings.Builder, files map[string]string, dir string) {
	entry, runtime, policy, visibility, timeout := h.Entry, h.Runtime, h.Policy, h.Visibility, h.TimeoutMS
	if entry == "" {
		entry = h.ID + ".sh"
	}
	if runtime == "" {
		runtime = plan.RuntimeExecutable
	}
	if policy == "" {
		policy = plan.PolicyReport
	}
	if visibility == "" {
		visibility = plan.VisibilityUser
	}
	if timeout == 0 {
		timeout = 5000
	}
	files[dir+entry] = h.Handler
	argv := h.Argv
	if argv == nil {
		for _, in := range h.Inputs {
			argv = append(argv, "${input."+strings.SplitN(in, "=", 2)[0]+"}")
		}
	}
	fmt.Fprintf(b, "\n[[tool]]\nschema_version = 1\nid = %q\nentry = %q\nruntime = %q\nargv = %s\n"+
		"cwd = \"tool_root\"\navailability = \"required\"\nenv = %s\n",
		h.ID, entry, runtime, tomlStrings(argv), tomlStrings(h.Env))
	if slices.Contains(h.Env, "LIVE_OUT") {
		b.WriteString("capabilities = [\"filesystem_write\"]\n")
	}
	var bindings []string
	for _, in := range h.Inputs {
		f := strings.SplitN(in, "=", 3)
		fmt.Fprintf(b, "\n[[tool.inputs]]\nname = %q\ntype = %q\n", f[0], f[1])
		bindings = append(bindings, fmt.Sprintf("{ input = %q, field = %q }", f[0], f[2]))
	}
	fmt.Fprintf(b, "\n[[hook]]\nschema_version = 1\nid = %q\ntool = %q\nsubject = %q\nphase = %q\neffect = %q\n"+
		"requirement = \"required\"\ntimeout_ms = %d\nfailure_policy = %q\nretry = \"never\"\nerror_visibility = %q\n"+
		"blocking_scope = \"matched_event\"\n", h.ID, h.ID, h.Subject, h.Phase, h.Effect, timeout, policy, visibility)
	if h.Tools != nil {
		fmt.Fprintf(b, "matcher = { tool_names = %s }\n", tomlStrings(h.Tools))
	}
	if bindings != nil {
		b.WriteString("bindings = [" + strings.Join(bindings, ", ") + "]\n")
	}
}

// tomlStrings is ss as a TOML array of basic strings.
func tomlStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// ToolList is a comma-separated list of tool names as a matcher's list,
// nil for "".
func ToolList(tools string) []string {
	if tools == "" {
		return nil
	}
	return strings.Split(tools, ",")
}
