package sourcegen

import (
	"fmt"
	"strings"
)

// WriteCommands creates dir as a source of n packages written the way
// Claude Code's documentation writes a plugin's commands: six skills a
// package, each a folder whose SKILL.md carries, beside its name and
// description, Claude Code's own keys (argument-hint, model,
// disable-model-invocation, user-invocable, context, agent, and for every
// other skill a hooks map of three events), allowed-tools as a block list
// of nineteen tool patterns and a metadata map of ten keys, over a short
// body; and two subagents with block lists of twenty-two tools, two of
// the package's skills to preload, hooks and MCP servers. The keys the
// Agent Skills specification does not define each draw a warning (W087),
// four to seven a skill, 31 a package. It weighs many member files of
// long front matter, and the findings the draft's unknown keys draw,
// against the floor's one short manifest.
func WriteCommands(dir string, n int) error {
	return writeEach(dir, n, (*writer).commandsPkg)
}

var (
	commandTools = []string{
		"Read", "Grep", "Glob", "Edit", "Write",
		"Bash(git status:*)", "Bash(git diff:*)", "Bash(git log:*)", "Bash(git add:*)", "Bash(git commit:*)",
		"Bash(npm test:*)", "Bash(npm run lint:*)", "Bash(go test:*)", "Bash(go vet:*)", "Bash(make:*)",
		"mcp__github__get_issue", "mcp__github__add_comment", "mcp__github__create_pull_request",
		"WebFetch", "TodoWrite", "NotebookEdit", "mcp__linear__search", "mcp__sentry__list_issues",
	}
	commandMetadata = []string{"author", "version", "category", "owner", "homepage", "reviewed", "ticket", "stability", "tier", "region"}
)

func (w *writer) commandsPkg(i int) {
	name := fmt.Sprintf("cmd-%04d", i)
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version = 1\n\n[plugin]\nname = %q\n", name)
	fmt.Fprintf(&b, "description = \"Release commands of team %d, as Claude Code writes them.\"\nid = \"commands.%s\"\nversion = \"2.%d.0\"\n", i, name, i%9)
	skills := make([]string, 6)
	for s := range skills {
		skills[s] = fmt.Sprintf("%s-run-%d", name, s)
		w.file("skills/"+skills[s]+"/SKILL.md", commandSkill(i, s, skills[s]), false)
		fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"skill:%s\"\nrequirement = \"required\"\n", skills[s])
	}
	for a := range 2 {
		agent := fmt.Sprintf("%s-helper-%d", name, a)
		w.file("agents/"+agent+".md", commandAgent(i, a, agent, skills[2*a:2*a+2]), false)
		fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"agent:%s\"\nrequirement = \"optional\"\n", agent)
		fmt.Fprintf(&b, "fallback = { kind = \"inline\", skill = \"skill:%s\" }\n", skills[a])
	}
	w.file("plugins/"+name+"/PLUGIN.toml", b.String(), false)
}

// commandSkill is the SKILL.md of skill s of package i.
func commandSkill(i, s int, skill string) string {
	var fm strings.Builder
	fmt.Fprintf(&fm, "---\nname: %s\n", skill)
	fmt.Fprintf(&fm, "description: Run release step %d of team %d. Use when the user types /%s or asks to check the current branch before a release.\n", s, i, skill)
	fmt.Fprintf(&fm, "argument-hint: \"[branch] [--fast|--full] [issue-%d]\"\n", i)
	// A skill's model is one of the three (inherit is a subagent's); the
	// two the agents preload (the first four) are ones the model may
	// invoke, as a preloaded skill must be.
	fmt.Fprintf(&fm, "model: %s\n", crewModels[(i+s)%3])
	fmt.Fprintf(&fm, "disable-model-invocation: %t\nuser-invocable: true\n", s >= 4)
	if s%3 == 0 {
		fm.WriteString("context: fork\nagent: general-purpose\n")
	}
	fm.WriteString("allowed-tools:\n")
	for k := range 19 {
		fmt.Fprintf(&fm, "  - %s\n", commandTools[(i+s+k)%len(commandTools)])
	}
	fm.WriteString("metadata:\n")
	for k, key := range commandMetadata {
		fmt.Fprintf(&fm, "  %s: \"%s of step %d.%d\"\n", key, key, s, k)
	}
	if s%2 == 1 {
		fmt.Fprintf(&fm, "hooks:\n  PreToolUse:\n    - matcher: \"Bash\"\n      hooks:\n        - type: command\n          command: \"${CLAUDE_PLUGIN_ROOT}/scripts/guard-%d.sh\"\n          timeout: 30\n", s)
		fm.WriteString("  PostToolUse:\n    - matcher: \"Edit|Write\"\n      hooks:\n        - type: command\n          command: \"./scripts/format.sh\"\n")
		fm.WriteString("  Stop:\n    - hooks:\n        - type: prompt\n          prompt: \"Check that every step ran; answer with a JSON verdict.\"\n")
	}
	fmt.Fprintf(&fm, "---\n# /%s\n\nRun `git status`, then the checks of step %d on $ARGUMENTS.\n", skill, s)
	return fm.String()
}

// commandAgent is the file of agent a of package i, which preloads the
// skills named.
func commandAgent(i, a int, agent string, skills []string) string {
	var fm strings.Builder
	fmt.Fprintf(&fm, "---\nname: %s\ndescription: Helper %d of team %d, for the commands' forked context.\ntools:\n", agent, a, i)
	for k := range 22 {
		fmt.Fprintf(&fm, "  - %s\n", commandTools[(i+a+k)%len(commandTools)])
	}
	fmt.Fprintf(&fm, "model: %s\npermissionMode: acceptEdits\nmaxTurns: %d\nskills:\n", crewModels[(i+a)%len(crewModels)], 10+i%20)
	for _, s := range skills {
		fmt.Fprintf(&fm, "  - %s\n", s)
	}
	fm.WriteString("hooks:\n  PreToolUse:\n    - matcher: \"Bash\"\n      hooks:\n        - type: command\n          command: \"./scripts/check.sh\"\n")
	fm.WriteString("mcpServers:\n  - github\n  - tracker:\n      command: \"./servers/tracker\"\n      args: [\"--read-only\", \"--team\"]\n---\n")
	fmt.Fprintf(&fm, "You help with the release steps of team %d.\n\n%s", i, prose(2*i+a, 600))
	return fm.String()
}
