//go:build unix

package live

import "dalo/internal/scenario"

// A kit is a generated author source holding one package, whose every hook
// runs a tool of its own with the same id: the live tests' spelling of
// scenario.Kit, which writes it.
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

// A kitHook is one hook of a kit and its tool (scenario.KitHook).
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
	sk := scenario.Kit{Name: k.name, Description: k.description, Skills: k.skills, Agents: k.agents}
	for _, h := range k.hooks {
		sk.Hooks = append(sk.Hooks, scenario.KitHook{ID: h.id, Subject: h.subject, Phase: h.phase, Effect: h.effect,
			Policy: h.policy, Visibility: h.visibility, TimeoutMS: h.timeoutMS, Tools: h.tools, Inputs: h.inputs,
			Argv: h.argv, Env: h.env, Runtime: h.runtime, Entry: h.entry, Handler: h.handler})
	}
	return sk.Files()
}

// toolList is a comma-separated list of tool names as a matcher's list,
// nil for "".
var toolList = scenario.ToolList
