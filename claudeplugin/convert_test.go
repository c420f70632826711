package claudeplugin

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dalo/engine"
	"dalo/providers"
	"dalo/scaffold"
)

func options(t testing.TB) Options {
	t.Helper()
	r, err := engine.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	opt, err := NewOptions(r, ts)
	if err != nil {
		t.Fatal(err)
	}
	return opt
}

// writePlugin writes files (path → content) under a new directory.
func writePlugin(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "plugin")
	for p, data := range files {
		name := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(data, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(name, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// convert converts the plugin, stages the result in a new source and
// validates it there.
func convert(t *testing.T, dir string) (*scaffold.Tree, *Report, *engine.Report) {
	t.Helper()
	tree, rep, err := Convert(dir, options(t))
	if err != nil {
		t.Fatal(err)
	}
	staged, err := tree.Stage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer staged.Discard()
	v, err := engine.Validate(staged.Dir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tree, rep, v
}

func file(tree *scaffold.Tree, p string) (string, bool) {
	f, ok := treeFile(tree, p)
	return string(f.Data), ok
}

func treeFile(tree *scaffold.Tree, p string) (scaffold.File, bool) {
	for _, f := range tree.Files() {
		if f.Path == p {
			return f, true
		}
	}
	return scaffold.File{}, false
}

func notImported(rep *Report, what string) string {
	for _, it := range rep.NotImported {
		if it.What == what {
			return it.Why
		}
	}
	return ""
}

func hook(rep *Report, id string) *Hook {
	for i := range rep.Hooks {
		if rep.Hooks[i].ID == id {
			return &rep.Hooks[i]
		}
	}
	return nil
}

const hooksJSON = `{
  "description": "Hooks of a plugin that uses every form",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash|Write", "hooks": [
        {"type": "command", "command": "sh ${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh", "timeout": 5},
        {"type": "prompt", "prompt": "Is $ARGUMENTS safe?"}
      ]},
      {"matcher": "mcp__github__.*", "hooks": [
        {"type": "command", "command": "sh $CLAUDE_PLUGIN_ROOT/hooks/guard.sh", "if": "Bash(git *)", "statusMessage": "Checking"}
      ]},
      {"matcher": "*", "hooks": [
        {"type": "command", "command": "sh ${CLAUDE_PLUGIN_ROOT}/../shared/guard.sh"}
      ]}
    ],
    "PostToolUse": [
      {"hooks": [
        {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/bin/fmt", "args": ["--root", "${CLAUDE_PLUGIN_ROOT}/conf it's", "${CLAUDE_PLUGIN_DATA}"], "timeout": 0.05},
        {"type": "command", "command": "review.sh", "async": true}
      ]}
    ],
    "SessionStart": [
      {"matcher": "startup", "hooks": [{"type": "command", "command": "cat ${CLAUDE_PLUGIN_ROOT}/skills/style/context.md"}]}
    ],
    "Notification": [
      {"hooks": [{"type": "command", "command": "notify-send hi"}]}
    ],
    "Stop": [
      {"hooks": [{"type": "agent", "prompt": "Are the tests green?"}]}
    ]
  }
}`

// TestConvert holds an import of a plugin with every form to what the
// package doc promises: what maps, and what is listed instead.
func TestConvert(t *testing.T) {
	dir := writePlugin(t, map[string]string{
		".claude-plugin/plugin.json":      `{"name": "Guard Kit", "version": "2.0.0", "description": "Guards.", "author": {"name": "A"}, "homepage": "https://example.com", "mcpServers": {"x": {"command": "x"}}, "outputStyles": "./styles", "frobnicate": 1}`,
		".claude-plugin/marketplace.json": `{}`,
		"hooks/hooks.json":                hooksJSON,
		"hooks/guard.sh":                  "exit 0\n",
		"hooks/lib/common.sh":             "true\n",
		"bin/fmt":                         "#!/bin/sh\n",
		"skills/style/SKILL.md":           "---\nname: house-style\ndescription: The house style.\n---\nUse it.\n",
		"skills/style/context.md":         "Context.\n",
		"skills/notes/README.md":          "not a skill\n",
		"agents/reviewer.md":              "---\nname: reviewer\ndescription: Reviews.\n---\nReview.\n",
		"agents/notes.txt":                "not an agent\n",
		"commands/check.md":               "Check.\n",
		"styles/terse.md":                 "Terse.\n",
		".mcp.json":                       `{}`,
		".gitignore":                      "x\n",
		"README.md":                       "Guard Kit\n",
		"LICENSE":                         "MIT\n",
	})
	tree, rep, v := convert(t, dir)

	if rep.Plugin != "Guard Kit" || rep.Package != "guard-kit" {
		t.Errorf("plugin %q, package %q", rep.Plugin, rep.Package)
	}
	if !v.Valid {
		for _, d := range v.Diagnostics {
			t.Error(d)
		}
		t.Fatal("the import does not validate")
	}
	wantMembers := []Member{{"skill:house-style", "required", "skills/style"}, {"agent:reviewer", "optional", "agents/reviewer.md"}}
	if !slices.Equal(rep.Members, wantMembers) {
		t.Errorf("members %v, want %v", rep.Members, wantMembers)
	}
	if _, ok := file(tree, "skills/house-style/context.md"); !ok {
		t.Error("the skill's other files were not copied")
	}

	checkConvertHooks(t, rep)
	checkConvertNotImported(t, rep)
	checkConvertPackage(t, tree)
}

// checkConvertHooks: TestConvert's hooks, ids by event, rows and effects
// from the table, and the notes on what of each was not kept.
func checkConvertHooks(t *testing.T, rep *Report) {
	t.Helper()
	var ids []string
	for _, h := range rep.Hooks {
		ids = append(ids, h.ID+" "+h.Subject+"/"+h.Phase+" "+h.Effect)
	}
	wantIDs := []string{"pre-tool-use tool_call/before gate", "pre-tool-use-2 tool_call/before gate", "post-tool-use tool_call/after add_context", "session-start session/start add_context"}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("hooks\n%v, want\n%v", ids, wantIDs)
	}
	for _, h := range rep.Hooks {
		if h.Requirement != "required" || h.FailurePolicy != "report" {
			t.Errorf("%s: %s, %s", h.ID, h.Requirement, h.FailurePolicy)
		}
	}
	pre := hook(rep, "pre-tool-use")
	if !slices.Equal(pre.ToolNames, []string{"Bash", "Write"}) || pre.Filter != "" || pre.TimeoutMS != 5000 {
		t.Errorf("pre-tool-use: %+v", pre)
	}
	pre2 := hook(rep, "pre-tool-use-2")
	if pre2.Filter != "mcp__github__.*" || len(pre2.ToolNames) != 0 || pre2.TimeoutMS != 120000 {
		t.Errorf("pre-tool-use-2: %+v", pre2)
	}
	for _, n := range []string{`its condition if "Bash(git *)" is not applied`, "statusMessage is not shown", "Claude Code's default, 10 minutes,"} {
		if !slices.ContainsFunc(pre2.Notes, func(s string) bool { return strings.Contains(s, n) }) {
			t.Errorf("pre-tool-use-2 notes %q lack %q", pre2.Notes, n)
		}
	}
	post := hook(rep, "post-tool-use")
	if post.TimeoutMS != 100 || !slices.ContainsFunc(post.Notes, func(s string) bool { return strings.Contains(s, "CLAUDE_PLUGIN_DATA, which dalo does not set") }) {
		t.Errorf("post-tool-use: %+v", post)
	}
	start := hook(rep, "session-start")
	if !slices.ContainsFunc(start.Notes, func(s string) bool { return strings.Contains(s, `its matcher "startup" is not applied`) }) {
		t.Errorf("session-start notes: %q", start.Notes)
	}
}

// checkConvertNotImported: what of TestConvert's plugin does not map is
// listed, with why.
func checkConvertNotImported(t *testing.T, rep *Report) {
	t.Helper()
	for what, why := range map[string]string{
		"hooks/hooks.json PreToolUse[0].hooks[1]":     "a prompt hook",
		"hooks/hooks.json PreToolUse[2].hooks[0]":     "${CLAUDE_PLUGIN_ROOT}/../shared/guard.sh, outside the plugin",
		"hooks/hooks.json PostToolUse[0].hooks[1]":    "in the background (async)",
		"hooks/hooks.json Notification[0].hooks[0]":   "event Notification has no row in draft 0.1",
		"hooks/hooks.json Stop[0].hooks[0]":           "an agent hook",
		"hooks/hooks.json description":                "no portable form",
		".claude-plugin/plugin.json author, homepage": "metadata",
		".claude-plugin/plugin.json frobnicate":       "no form",
		".claude-plugin/marketplace.json":             "marketplace",
		"commands/check.md":                           "slash commands",
		".mcp.json":                                   "MCP servers",
		"styles/terse.md":                             "output styles",
		".gitignore":                                  "a hidden file",
		"agents/notes.txt":                            "not an agent",
	} {
		if got := notImported(rep, what); !strings.Contains(got, why) {
			t.Errorf("%s: not imported %q, want %q", what, got, why)
		}
	}
}

// checkConvertPackage: TestConvert's package holds the adapter, a command
// file per hook, the plugin's other files as the tools' closure, and its
// documents and licence.
func checkConvertPackage(t *testing.T, tree *scaffold.Tree) {
	t.Helper()
	pkg := "plugins/guard-kit/"
	for _, p := range []string{AdapterFile, "claude-hooks/pre-tool-use.sh", "hooks/guard.sh", "hooks/lib/common.sh", "bin/fmt", "skills/style/context.md", "skills/notes/README.md", "README.md", "LICENSE"} {
		if _, ok := file(tree, pkg+p); !ok {
			t.Errorf("%s%s not written", pkg, p)
		}
	}
	if f, _ := treeFile(tree, pkg+"bin/fmt"); !f.Exec {
		t.Error("bin/fmt lost its executable bit")
	}
	if f, _ := treeFile(tree, pkg+"hooks/guard.sh"); f.Exec {
		t.Error("hooks/guard.sh became executable")
	}
	if _, ok := file(tree, pkg+"hooks/hooks.json"); ok {
		t.Error("hooks.json copied into the package")
	}
	cmd, _ := file(tree, pkg+"claude-hooks/pre-tool-use.sh")
	if cmd != "# hooks/hooks.json PreToolUse[0].hooks[0]\nsh ${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh\n" {
		t.Errorf("command file:\n%s", cmd)
	}
	exec, _ := file(tree, pkg+"claude-hooks/post-tool-use.sh")
	if want := `exec ''"$CLAUDE_PLUGIN_ROOT"'/bin/fmt' --root ''"$CLAUDE_PLUGIN_ROOT"'/conf it'\''s' '${CLAUDE_PLUGIN_DATA}'` + "\n"; !strings.HasSuffix(exec, want) {
		t.Errorf("exec form:\n%s\nwant suffix\n%s", exec, want)
	}
	man, _ := file(tree, pkg+"PLUGIN.toml")
	for _, want := range []string{
		`argv = ["PreToolUse", "gate", "claude-hooks/pre-tool-use.sh", "${input.cwd}"]`,
		`"${input.tool_name}",` + "\n  \"mcp__github__.*\",",
		`matcher = { tool_names = ["Bash", "Write"] }`,
		`bindings = [{ input = "cwd", field = "session.cwd" }, { input = "tool_name", field = "tool.name" }]`,
		`version = "2.0.0"`,
	} {
		if !strings.Contains(man, want) {
			t.Errorf("manifest lacks %s\n%s", want, man)
		}
	}
	if strings.Contains(man, `"README.md"`) || strings.Contains(man, `"LICENSE"`) {
		t.Error("a tool's files name the documents")
	}
}

// TestConvertWithoutHooks: with no hook, only the documents are copied
// into the package and the rest is listed; without plugin.json the
// directory names the package.
func TestConvertWithoutHooks(t *testing.T) {
	dir := writePlugin(t, map[string]string{
		"skills/a/SKILL.md": "---\nname: a\ndescription: A.\n---\n",
		"LICENSE.txt":       "Apache\n",
		"scripts/run.py":    "pass\n",
	})
	tree, rep, v := convert(t, dir)
	if !v.Valid || rep.Package != "plugin" {
		t.Fatalf("valid %v, package %s", v.Valid, rep.Package)
	}
	if _, ok := file(tree, "plugins/plugin/LICENSE.txt"); !ok {
		t.Error("the licence was not copied")
	}
	if why := notImported(rep, "scripts/run.py"); why != "no imported hook runs it" {
		t.Errorf("scripts/run.py: %q", why)
	}
	if _, ok := file(tree, "plugins/plugin/"+AdapterFile); ok {
		t.Error("an adapter without hooks")
	}
	if !slices.ContainsFunc(rep.Notes, func(s string) bool { return strings.Contains(s, "no name") }) {
		t.Errorf("notes %q", rep.Notes)
	}
}

// TestConvertManifestPaths: plugin.json's own paths for skills, agents
// and hooks, and inline hooks.
func TestConvertManifestPaths(t *testing.T) {
	dir := writePlugin(t, map[string]string{
		".claude-plugin/plugin.json": `{"name": "paths", "skills": ["./extra/tool-skill"], "agents": "./people/lead.md",
			"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}`,
		"extra/tool-skill/SKILL.md": "---\nname: tool-skill\ndescription: T.\n---\n",
		"people/lead.md":            "---\nname: lead\ndescription: L.\n---\n",
		"agents/ignored.md":         "---\nname: ignored\ndescription: I.\n---\n",
	})
	_, rep, v := convert(t, dir)
	if !v.Valid {
		t.Fatal(v.Diagnostics)
	}
	want := []Member{{"skill:tool-skill", "required", "extra/tool-skill"}, {"agent:lead", "optional", "people/lead.md"}}
	if !slices.Equal(rep.Members, want) {
		t.Errorf("members %v, want %v", rep.Members, want)
	}
	if h := hook(rep, "user-prompt-submit"); h == nil || h.From != ".claude-plugin/plugin.json hooks UserPromptSubmit[0].hooks[0]" || h.Effect != "gate" {
		t.Errorf("inline hook: %+v", h)
	}
}

// TestConvertRefuses: what cannot be imported at all is an error, before
// anything is written.
func TestConvertRefuses(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"bad plugin.json": {".claude-plugin/plugin.json": `{"name": `},
		"bad hooks.json":  {"hooks/hooks.json": `[]`},
		"no name":         {".claude-plugin/plugin.json": `{"name": "--"}`},
		"a marketplace":   {".claude-plugin/marketplace.json": `{"plugins": []}`},
		"no component":    {"README.md": "Not a plugin.\n", "src/main.go": "package main\n"},
		"plugins below":   {"a/.claude-plugin/plugin.json": `{"name": "a"}`, "b/skills/x/SKILL.md": "---\nname: x\ndescription: X.\n---\n"},
	} {
		if _, _, err := Convert(writePlugin(t, files), options(t)); err == nil {
			t.Errorf("%s: converted", name)
		}
	}
}

// TestConvertJSONErrors: a plugin.json or hooks.json that is no JSON is
// named at its line and column; one with a byte order mark says so.
func TestConvertJSONErrors(t *testing.T) {
	for _, c := range []struct{ file, data, want string }{
		{"hooks/hooks.json", "{\n  \"hooks\": {\n    \"Stop\": [\n  }\n}\n", "hooks/hooks.json:4:3: invalid character '}' looking for beginning of value"},
		{".claude-plugin/plugin.json", `{"name": "x"`, ".claude-plugin/plugin.json:1:12: unexpected end of JSON input"},
		{".claude-plugin/plugin.json", "\uFEFF{}", ".claude-plugin/plugin.json:1:1: the file starts with a UTF-8 byte order mark"},
		{"hooks/hooks.json", `[]`, "hooks/hooks.json: not a JSON object"},
	} {
		_, _, err := Convert(writePlugin(t, map[string]string{c.file: c.data}), options(t))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s %q: got %v, want %s", c.file, c.data, err, c.want)
		}
	}
}

// TestConvertNotPlugin: a directory holding no plugin is refused, naming
// the plugins its subdirectories hold; one without plugin.json but with a
// component Claude Code finds by default is a plugin.
func TestConvertNotPlugin(t *testing.T) {
	dir := writePlugin(t, map[string]string{"guard/.claude-plugin/plugin.json": `{"name": "guard"}`, "lint/.claude-plugin/plugin.json": `{"name": "lint"}`})
	_, _, err := Convert(dir, options(t))
	if err == nil || !strings.Contains(err.Error(), "is not a Claude Code plugin") || !strings.HasSuffix(err.Error(), "import one of the plugins in it: guard, lint") {
		t.Errorf("a directory of plugins: %v", err)
	}
	for _, f := range []string{"commands/check.md", ".mcp.json", "hooks/hooks.json", "agents/notes.txt"} {
		data := "x\n"
		if strings.HasSuffix(f, ".json") {
			data = `{}`
		}
		if _, _, err := Convert(writePlugin(t, map[string]string{f: data}), options(t)); err != nil {
			t.Errorf("a plugin of only %s: %v", f, err)
		}
	}
}

// TestConvertSymlink: a symlink in the plugin is listed, never followed.
func TestConvertSymlink(t *testing.T) {
	dir := writePlugin(t, map[string]string{"skills/a/SKILL.md": "---\nname: a\ndescription: A.\n---\n"})
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "skills/a/passwd")); err != nil {
		t.Fatal(err)
	}
	tree, rep, _ := convert(t, dir)
	if why := notImported(rep, "skills/a/passwd"); !strings.Contains(why, "a symlink") {
		t.Errorf("symlink: %q", why)
	}
	if _, ok := file(tree, "skills/a/passwd"); ok {
		t.Error("a symlink was followed")
	}
}
