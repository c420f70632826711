//go:build unix

package live

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A kit is a generated author source holding one package, whose every hook
// runs a tool of its own with the same id. The probe, tools and matrix
// kits are kits; each writes its own handlers, and kit writes the rest.
type kit struct {
	name, description string
	hooks             []kitHook
	// skills are required skill members, by name: the text of each
	// one's SKILL.md.
	skills map[string]string
	// agents are required agent members, by name: the text of each
	// one's file.
	agents map[string]string
}

// A kitHook is one hook of a kit and its tool.
type kitHook struct {
	id, subject, phase, effect string
	policy, visibility         string // report and user when empty
	timeoutMS                  int    // 5000 when 0
	tools                      []string
	// inputs are the tool's inputs, each name=type=field: bound to that
	// event field. argv is the tool's argv; nil passes every input in
	// order.
	inputs []string
	argv   []string
	// env is the tool's env. A tool that may read LIVE_OUT writes there,
	// so it declares filesystem_write.
	env []string
	// runtime is executable when empty; entry is <id>.sh when empty, and
	// handler its content.
	runtime, entry, handler string
}

// files returns the kit's source: plugins/<name>/PLUGIN.toml and every
// hook's handler beside it.
func (k kit) files() map[string]string {
	dir := "plugins/" + k.name + "/"
	files := map[string]string{}
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version = 1\n\n[plugin]\nname = %q\ndescription = %q\nid = %q\n", k.name, k.description, "dalo."+k.name)
	if len(k.skills)+len(k.agents) > 0 {
		var members []string
		for _, name := range slices.Sorted(maps.Keys(k.skills)) {
			members = append(members, fmt.Sprintf("{ ref = %q, requirement = \"required\" }", "skill:"+name))
			files["skills/"+name+"/SKILL.md"] = k.skills[name]
		}
		for _, name := range slices.Sorted(maps.Keys(k.agents)) {
			members = append(members, fmt.Sprintf("{ ref = %q, requirement = \"required\" }", "agent:"+name))
			files["agents/"+name+".md"] = k.agents[name]
		}
		b.WriteString("members = [" + strings.Join(members, ", ") + "]\n")
	}
	for _, h := range k.hooks {
		entry, runtime, policy, visibility, timeout := h.entry, h.runtime, h.policy, h.visibility, h.timeoutMS
		if entry == "" {
			entry = h.id + ".sh"
		}
		if runtime == "" {
			runtime = "executable"
		}
		if policy == "" {
			policy = "report"
		}
		if visibility == "" {
			visibility = "user"
		}
		if timeout == 0 {
			timeout = 5000
		}
		files[dir+entry] = h.handler
		argv := h.argv
		if argv == nil {
			for _, in := range h.inputs {
				argv = append(argv, "${input."+strings.SplitN(in, "=", 2)[0]+"}")
			}
		}
		fmt.Fprintf(&b, "\n[[tool]]\nschema_version = 1\nid = %q\nentry = %q\nruntime = %q\nargv = %s\n"+
			"cwd = \"tool_root\"\navailability = \"required\"\nenv = %s\n",
			h.id, entry, runtime, tomlStrings(argv), tomlStrings(h.env))
		if slices.Contains(h.env, "LIVE_OUT") {
			b.WriteString("capabilities = [\"filesystem_write\"]\n")
		}
		var bindings []string
		for _, in := range h.inputs {
			f := strings.SplitN(in, "=", 3)
			fmt.Fprintf(&b, "\n[[tool.inputs]]\nname = %q\ntype = %q\n", f[0], f[1])
			bindings = append(bindings, fmt.Sprintf("{ input = %q, field = %q }", f[0], f[2]))
		}
		fmt.Fprintf(&b, "\n[[hook]]\nschema_version = 1\nid = %q\ntool = %q\nsubject = %q\nphase = %q\neffect = %q\n"+
			"requirement = \"required\"\ntimeout_ms = %d\nfailure_policy = %q\nretry = \"never\"\nerror_visibility = %q\n"+
			"blocking_scope = \"matched_event\"\n", h.id, h.id, h.subject, h.phase, h.effect, timeout, policy, visibility)
		if h.tools != nil {
			fmt.Fprintf(&b, "matcher = { tool_names = %s }\n", tomlStrings(h.tools))
		}
		if bindings != nil {
			b.WriteString("bindings = [" + strings.Join(bindings, ", ") + "]\n")
		}
	}
	files[dir+"PLUGIN.toml"] = b.String()
	return files
}

// tomlStrings is ss as a TOML array of basic strings.
func tomlStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// toolList is a comma-separated list of tool names as a matcher's list,
// nil for "".
func toolList(tools string) []string {
	if tools == "" {
		return nil
	}
	return strings.Split(tools, ",")
}
