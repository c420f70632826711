package providers

import (
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

func TestEmbeddedTablesLoad(t *testing.T) {
	ts, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(ts.Keys(), " "), "claude@2.1.233 claude@2.1.332 codex@0.147.0 codex@0.171.0 copilot@1.0.102 gemini@0.61.0 qwen@0.24.4"; got != want {
		t.Fatalf("keys = %s, want %s", got, want)
	}
	for _, tc := range []struct {
		name, version, nativeEvent string
		subject, phase             string
	}{
		{"claude", "2.1.233", "PostToolUseFailure", "tool_call", "failure"},
		{"claude", "2.1.233", "SessionEnd", "session", "end"},
		{"codex", "0.147.0", "UserPromptSubmit", "prompt", "before"},
		{"codex", "0.147.0", "", "tool_call", "failure"},
		{"claude", "2.1.332", "PostToolUseFailure", "tool_call", "failure"},
		{"codex", "0.171.0", "", "tool_call", "failure"},
		{"gemini", "0.61.0", "BeforeAgent", "prompt", "before"},
		{"gemini", "0.61.0", "AfterAgent", "workflow", "stop"},
		{"gemini", "0.61.0", "", "tool_call", "failure"},
	} {
		tb, ok := ts.Lookup(tc.name, tc.version)
		if !ok {
			t.Fatalf("%s@%s not found", tc.name, tc.version)
		}
		ev, ok := tb.NativeEvent(tc.subject, tc.phase)
		if ev != tc.nativeEvent || ok != (tc.nativeEvent != "") {
			t.Errorf("%s %s/%s: native event %q %t, want %q", tb.Key(), tc.subject, tc.phase, ev, ok, tc.nativeEvent)
		}
		if ok {
			s, p, _ := tb.RowOf(ev)
			if s != tc.subject || p != tc.phase {
				t.Errorf("%s RowOf(%s) = %s/%s", tb.Key(), ev, s, p)
			}
		}
	}
}

// Lookup is exact: a version nobody added is unknown, however close.
func TestLookupIsExact(t *testing.T) {
	ts := mustLoad(t)
	for _, tc := range []struct{ arg, want, err string }{
		{"claude", "claude@2.1.332", ""},
		{"claude@2.1.233", "claude@2.1.233", ""},
		{"codex", "codex@0.171.0", ""},
		{"codex@0.147.0", "codex@0.147.0", ""},
		{"claude@2.1.234", "", "unknown provider claude@2.1.234; known: claude@2.1.233, claude@2.1.332, codex@0.147.0, codex@0.171.0, copilot@1.0.102, gemini@0.61.0, qwen@0.24.4"},
		{"claude@2.1", "", "unknown provider claude@2.1;"},
		{"gemini", "gemini@0.61.0", ""},
		{"gemini@0.60.0", "", "unknown provider gemini@0.60.0;"},
		{"opencode", "", "unknown provider opencode;"},
	} {
		tb, err := ts.Resolve(tc.arg)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Resolve(%s) = %v, want error %q", tc.arg, err, tc.err)
			}
		case err != nil:
			t.Errorf("Resolve(%s): %v", tc.arg, err)
		case tb.Key() != tc.want:
			t.Errorf("Resolve(%s) = %s, want %s", tc.arg, tb.Key(), tc.want)
		}
	}
}

func TestNewestOrdersVersionsNumerically(t *testing.T) {
	src, err := fs.ReadFile(embedded, "codex/0.147.0.cue")
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{
		"codex/0.147.0.cue": {Data: src},
		"codex/0.99.0.cue":  {Data: []byte(strings.Replace(string(src), `version: "0.147.0"`, `version: "0.99.0"`, 1))},
	}
	ts, err := LoadFS(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := ts.Newest("codex"); n.Version != "0.147.0" {
		t.Errorf("newest codex = %s, want 0.147.0", n.Version)
	}
}

// Nearest is where proving an untabled version starts: the neighbour that
// shares more of the version, never the version itself.
func TestNearest(t *testing.T) {
	ts := mustLoad(t)
	for _, tc := range []struct{ name, version, want string }{
		{"claude", "2.1.331", "claude@2.1.332"}, // a release before the newest
		{"claude", "2.1.240", "claude@2.1.233"},
		{"claude", "2.1.400", "claude@2.1.332"}, // newer than every table
		{"claude", "2.1.100", "claude@2.1.233"}, // older than every table
		{"claude", "2.1.332", "claude@2.1.233"}, // its own table excepted
		{"codex", "0.169.0", "codex@0.171.0"},
		{"codex", "0.150.0", "codex@0.147.0"},
		{"codex", "0.159.0", "codex@0.147.0"}, // as far from both: the older
		{"gemini", "0.60.0", "gemini@0.61.0"},
		{"gemini", "1.0.0", "gemini@0.61.0"},
		{"opencode", "1.0.0", ""},
	} {
		got, ok := ts.Nearest(tc.name, tc.version)
		key := ""
		if ok {
			key = got.Key()
		}
		if key != tc.want {
			t.Errorf("Nearest(%s, %s) = %q, want %q", tc.name, tc.version, key, tc.want)
		}
	}
}

// A broken table fails loading with an error naming its file and saying
// what is wrong.
func TestBrokenTableFails(t *testing.T) {
	src := readEmbedded(t, "claude/2.1.233.cue")
	for _, tc := range []struct {
		name, file, old, new string
		want                 []string
	}{
		{"unknown field", "claude/2.1.233.cue", `harness: "Claude Code"`, "harness: \"Claude Code\"\nbogus: 1",
			[]string{"claude/2.1.233.cue", "bogus: field not allowed"}},
		{"effect missing", "claude/2.1.233.cue", "\t\t\t\treplace_output: {\n", "\t\t\t\t_gone: {\n",
			[]string{"claude/2.1.233.cue", "rows.tool_call.after.effects.replace_output", "required"}},
		{"result kind missing", "claude/2.1.233.cue", "outputs: {continue_workflow: _continue & {#tests: [_live.session]}, abstain: _nothing & {#tests: [_live.session]}}", "outputs: {continue_workflow: _continue & {#tests: [_live.session]}}",
			[]string{"claude/2.1.233.cue", "outputs.abstain", "required"}},
		{"unknown native event", "claude/2.1.233.cue", `native_event: "Stop"`, `native_event: "Stopp"`,
			[]string{"claude/2.1.233.cue", "rows.workflow.stop.event: undefined field: Stopp"}},
		{"unsupported without reason", "claude/2.1.233.cue", `reason: "Claude Code sends nothing`, `note: "Claude Code sends nothing`,
			[]string{"claude/2.1.233.cue", "rows.session.end.failures.report.model_and_user"}},
		{"evidence without a kind", "claude/2.1.233.cue", `evidence: ["run: providers/testdata/README.md finding 25", _live.session]`, `evidence: ["finding 25"]`,
			[]string{"claude/2.1.233.cue", "version_output.evidence.0", "out of bound"}},
		{"test evidence without a test name", "claude/2.1.233.cue", `session:      "test: internal/live TestSession/claude"`, `session:      "test: internal/live session"`,
			[]string{"claude/2.1.233.cue", "version_output.evidence.1", "out of bound"}},
		{"clamp on an unknown event", "claude/2.1.233.cue", "clamps: {}", `clamps: Foo: {max_ms: 1, evidence: ["doc: x"]}`,
			[]string{"claude/2.1.233.cue", "clamps.Foo: field not allowed"}},
		{"unknown portable field", "claude/2.1.233.cue", `tool: {"tool.call_id": "tool_use_id"`, `tool: {"tool.call": "tool_use_id"`,
			[]string{"claude/2.1.233.cue", "payload.fields", "tool.call"}},
		{"unknown channel", "claude/2.1.233.cue", `channels: {continue: _continue & {#tests: [_live.session]}, user: _user & {#tests: [_live.stop]}}`, `channels: {resume: _continue, user: _user}`,
			[]string{"claude/2.1.233.cue", "events.Stop.channels.resume: field not allowed"}},
		{"no user channel", "claude/2.1.233.cue", `channels: {continue: _continue & {#tests: [_live.session]}, user: _user & {#tests: [_live.stop]}}`, `channels: {continue: _continue}`,
			[]string{"claude/2.1.233.cue", "events.Stop.channels.user", "required"}},
		{"user_only on a channel other than deny", "claude/2.1.233.cue", `replace_output: _replace & {#tests: [_live.tools]}, user:`, `replace_output: _replace & {#tests: [_live.tools], user_only: evidence: [_live.tools]}, user:`,
			[]string{"claude/2.1.233.cue", "events.PostToolUse.channels.replace_output.user_only: field not allowed"}},
		{"entry without a command", "claude/2.1.233.cue", `command: "$command", timeout: "$timeout"`, `timeout: "$timeout"`,
			[]string{"claude/2.1.233.cue", "config.hooks.entry", "$command 0 times"}},
		{"entry with the timeout twice", "claude/2.1.233.cue", `command: "$command", timeout: "$timeout"`, `command: "$command", timeout: "$timeout", t: "$timeout"`,
			[]string{"claude/2.1.233.cue", "config.hooks.entry", "$timeout 2 times"}},
		{"entry matcher without a value", "claude/2.1.233.cue", "\t\t\tmatcher: \"*\"\n", "",
			[]string{"claude/2.1.233.cue", "config.hooks.entry", "gives no matcher"}},
		{"entry not an object", "claude/2.1.233.cue", "template: {\n\t\t\t\tmatcher: \"$matcher\"\n\t\t\t\thooks: [{type: \"command\", command: \"$command\", timeout: \"$timeout\"}]\n\t\t\t}", `template: ["$command", "$timeout"]`,
			[]string{"claude/2.1.233.cue", "config.hooks.entry"}},
		{"tool pattern not a regular expression", "claude/2.1.233.cue", `regexp: "^mcp__[^_].*__.+$"`, `regexp: "^mcp__[^_.*__.+$"`,
			[]string{"claude/2.1.233.cue", "tool_patterns.mcp__<server>__<tool>", "missing closing ]"}},
		{"agent file without its name", "claude/2.1.233.cue", `layout: "<name>.md"`, `layout: "agent.md"`,
			[]string{"claude/2.1.233.cue", "config.agents.location.layout"}},
		{"agent file in a subdirectory", "claude/2.1.233.cue", `layout: "<name>.md"`, `layout: "<name>/AGENT.md"`,
			[]string{"claude/2.1.233.cue", "config.agents.location.layout"}},
		{"agents without a layout", "claude/2.1.233.cue", "\t\t\tlayout: \"<name>.md\"\n", "",
			[]string{"claude/2.1.233.cue", "config.agents.location.layout", "required"}},
		{"project agents without a layout", "claude/2.1.233.cue", "path:   \".claude/agents\"\n\t\t\tlayout: \"<name>.md\"\n", "path:   \".claude/agents\"\n",
			[]string{"claude/2.1.233.cue", "config.project.agents.layout", "required"}},
		{"syntax error", "claude/2.1.233.cue", `name:    "claude"`, `name:    "claude`,
			[]string{"claude/2.1.233.cue"}},
		{"path and name disagree", "claude/2.1.234.cue", "", "",
			[]string{"claude/2.1.234.cue says claude@2.1.233; its path says claude@2.1.234"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := strings.Replace(src, tc.old, tc.new, 1)
			if tc.old != "" && s == src {
				t.Fatalf("mutation %q did not apply", tc.old)
			}
			_, err := LoadFS(fstest.MapFS{tc.file: {Data: []byte(s)}})
			if err == nil {
				t.Fatal("broken table loaded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// Every evidence reference to a recording or a finding points at something
// that exists: a claim cannot cite evidence nobody recorded.
func TestEvidenceExists(t *testing.T) {
	ts, err := LoadFS(embedded) // the CUE values, which Load does not keep
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("testdata/README.md")
	if err != nil {
		t.Fatal(err)
	}
	finding := regexp.MustCompile(`^run: providers/testdata/README\.md finding (\d+)$`)
	for _, tb := range ts.All() {
		var refs []string
		collectEvidence(tb.value.LookupPath(cueRoot), &refs)
		if len(refs) < 50 {
			t.Fatalf("%s: only %d evidence references found; the walk is broken", tb.Key(), len(refs))
		}
		for _, ev := range refs {
			switch {
			case strings.HasPrefix(ev, "recording: "):
				p := strings.TrimPrefix(strings.TrimPrefix(ev, "recording: "), "providers/")
				if !strings.Contains(p, "/"+tb.Name+"/"+tb.Version+"/") {
					t.Errorf("%s cites another version's recording: %s", tb.Key(), ev)
				}
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s: %v", tb.Key(), err)
				}
			case strings.HasPrefix(ev, "run: "):
				m := finding.FindStringSubmatch(ev)
				if m == nil {
					t.Errorf("%s: run evidence %q is not 'run: providers/testdata/README.md finding N'", tb.Key(), ev)
					continue
				}
				n, _ := strconv.Atoi(m[1])
				if !regexp.MustCompile(`(?m)^` + strconv.Itoa(n) + `\. `).Match(readme) {
					t.Errorf("%s: %s: no such finding in testdata/README.md", tb.Key(), ev)
				}
			}
		}
	}
}

// Every native output renders with the placeholders of draft 0.1, and the
// limits the draft names are where a dispatcher will look for them.
func TestOutputs(t *testing.T) {
	ts := mustLoad(t)
	vals := map[string]any{}
	for _, p := range Placeholders {
		vals[p] = p[1:]
	}
	vals["$input"] = map[string]any{"command": "echo reviewed"}
	for _, tb := range ts.All() {
		for s, phases := range tb.Rows {
			for p, r := range phases {
				for e, ef := range r.Effects {
					for k, o := range ef.Outputs {
						if _, _, _, err := o.Render(vals); err != nil {
							t.Errorf("%s %s/%s %s %s: %v", tb.Key(), s, p, e, k, err)
						}
					}
				}
				for pol, vs := range r.Failures {
					for vis := range vs {
						if o, ok := tb.FailureOutput(s, p, pol, vis); ok {
							if _, _, _, err := o.Render(vals); err != nil {
								t.Errorf("%s %s/%s %s %s: %v", tb.Key(), s, p, pol, vis, err)
							}
						}
					}
				}
			}
		}
	}

	claude, _ := ts.Lookup("claude", "2.1.233")
	codex, _ := ts.Lookup("codex", "0.147.0")
	render := func(tb *Table, s, p, e, k string) string {
		t.Helper()
		o, ok := tb.Output(s, p, e, k)
		if !ok {
			return "unsupported"
		}
		out, _, _, err := o.Render(vals)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	for _, tc := range []struct {
		tb               *Table
		s, p, e, k, want string
	}{
		{claude, "tool_call", "before", "rewrite_input", "rewrite_input", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"echo reviewed"}}}`},
		{codex, "tool_call", "before", "rewrite_input", "rewrite_input", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"echo reviewed"}}}`},
		{claude, "tool_call", "before", "gate", "allow", ``},
		{codex, "tool_call", "before", "gate", "allow", ``},
		{claude, "tool_call", "after", "replace_output", "replace_output", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"output"}}`},
		{codex, "tool_call", "after", "replace_output", "replace_output", `unsupported`},
		{claude, "tool_call", "failure", "add_context", "add_context", `{"hookSpecificOutput":{"additionalContext":"context","hookEventName":"PostToolUseFailure"}}`},
		{codex, "tool_call", "failure", "add_context", "add_context", `unsupported`},
		{codex, "workflow", "stop", "continue_workflow", "continue_workflow", `{"decision":"block","reason":"reason"}`},
	} {
		if got := render(tc.tb, tc.s, tc.p, tc.e, tc.k); got != tc.want {
			t.Errorf("%s %s/%s %s %s:\n got %s\nwant %s", tc.tb.Key(), tc.s, tc.p, tc.e, tc.k, got, tc.want)
		}
	}
	// A user-only failure after SessionEnd exits nonzero: the event
	// ignores ordinary output.
	o, ok := codex.FailureOutput("session", "end", "report", "user")
	if _, stderr, exit, _ := o.Render(vals); !ok || exit == 0 || stderr != "diagnostic" {
		t.Errorf("codex SessionEnd user failure: exit %d stderr %q", exit, stderr)
	}
	if _, ok := claude.FailureOutput("session", "end", "report", "model_and_user"); ok {
		t.Error("claude SessionEnd model_and_user failure is supported")
	}
	if ms, ok := codex.TimeoutClampMS("SessionEnd"); !ok || ms != 3000 {
		t.Errorf("codex SessionEnd clamp = %d %t, want 3000", ms, ok)
	}
	if _, ok := claude.TimeoutClampMS("SessionEnd"); ok {
		t.Error("claude clamps SessionEnd")
	}
	if got := claude.NativeTimeout(1500); got != 2 {
		t.Errorf("claude NativeTimeout(1500) = %d, want 2 (seconds, rounded up)", got)
	}
	for _, tc := range []struct {
		tb    *Table
		tool  string
		known bool
	}{
		{claude, "Bash", true}, {claude, "Edit", true}, {claude, "apply_patch", false},
		{claude, "mcp__github__create_issue", true},
		{codex, "Bash", true}, {codex, "apply_patch", true}, {codex, "Edit", false},
	} {
		if got := tc.tb.KnowsTool(tc.tool); got != tc.known {
			t.Errorf("%s KnowsTool(%s) = %t", tc.tb.Key(), tc.tool, got)
		}
	}
	// Validation asks this of every hook on every table: a pattern is
	// compiled once, when its table is loaded, not at each question.
	if n := testing.AllocsPerRun(100, func() { claude.KnowsTool("mcp__github__create_issue") }); n != 0 {
		t.Errorf("KnowsTool of a pattern-matched name allocates %v times", n)
	}
}

// TestToolPatternsNotBacktracked: every tool pattern of the embedded
// tables is matched by a shiftand.Matcher, not by regexp's backtracker,
// and says of each name what its regular expression says.
func TestToolPatternsNotBacktracked(t *testing.T) {
	ts := mustLoad(t)
	names := []string{"mcp__github__create_issue", "mcp__gate-0000_3__tool_14", "mcp_github_create", "mcp___x__y",
		"mcp__x__", "mcp__é__ü", "mcp__a\n__b", "Bash", "mcp__", "mcp__\xff__\xfe"}
	before := patternsBacktracked.Load()
	patterns := 0
	for _, tb := range ts.All() {
		for _, p := range tb.patterns {
			patterns++
			for _, n := range names {
				if got, want := p.matches(n), p.re.MatchString(n); got != want {
					t.Errorf("%s: %s on %q: %t, its regular expression says %t", tb.Key(), p.re, n, got, want)
				}
			}
		}
	}
	if patterns == 0 {
		t.Fatal("no table has a tool pattern")
	}
	if n := patternsBacktracked.Load() - before; n != 0 {
		t.Errorf("%d names of %d patterns asked of regexp, want none", n, patterns)
	}
}

func TestLocations(t *testing.T) {
	ts := mustLoad(t)
	claude, _ := ts.Lookup("claude", "2.1.233")
	codex, _ := ts.Lookup("codex", "0.147.0")
	copilot, _ := ts.Lookup("copilot", "1.0.102")
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		tb     *Table
		getenv func(string) string
		skills string
		agents string
		hooks  string
	}{
		{claude, env("HOME", "/h"), "/h/.claude/skills", "/h/.claude/agents/a.md", "/h/.claude/settings.json"},
		{claude, env("HOME", "/h", "CLAUDE_CONFIG_DIR", "/c"), "/c/skills", "/c/agents/a.md", "/c/settings.json"},
		{codex, env("HOME", "/h"), "/h/.agents/skills /h/.codex/skills", "", "/h/.codex/hooks.json"},
		{codex, env("HOME", "/h", "CODEX_HOME", "/x"), "/h/.agents/skills /x/skills", "", "/x/hooks.json"},
		{copilot, env("HOME", "/h", "COPILOT_HOME", "/p"), "/p/skills", "/p/agents/a.agent.md", "/p/settings.json"},
	} {
		dirs, err := tc.tb.SkillDirs(tc.getenv)
		if err != nil || strings.Join(dirs, " ") != tc.skills {
			t.Errorf("%s skills = %v %v, want %s", tc.tb.Key(), dirs, err, tc.skills)
		}
		agents, ok, err := tc.tb.AgentFile("a", tc.getenv)
		if err != nil || agents != tc.agents || ok != (tc.agents != "") {
			t.Errorf("%s agents = %q %t %v, want %q", tc.tb.Key(), agents, ok, err, tc.agents)
		}
		hooks, err := tc.tb.Path(tc.tb.Config.Hooks.Location, tc.getenv)
		if err != nil || hooks != tc.hooks {
			t.Errorf("%s hooks = %q %v, want %s", tc.tb.Key(), hooks, err, tc.hooks)
		}
	}
	if _, err := claude.ConfigHome(env()); err == nil {
		t.Error("ConfigHome without HOME or CLAUDE_CONFIG_DIR succeeded")
	}
}

func mustLoad(t *testing.T) *Tables {
	t.Helper()
	ts, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func readEmbedded(t testing.TB, name string) string {
	t.Helper()
	b, err := fs.ReadFile(embedded, name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMatcherToolNames pins which names a matcher may use on each
// harness to what the harness documents and recordings show, written here
// rather than read from the table that states them: Claude Code names an
// MCP tool mcp__<server>__<tool> ("MCP tools follow the pattern
// mcp__<server>__<tool>", hooks reference), where a server name is not
// empty and does not start with '_'.
func TestMatcherToolNames(t *testing.T) {
	ts := mustLoad(t)
	for _, tc := range []struct {
		table string
		known []string
		not   []string
	}{
		{"claude@2.1.233",
			[]string{"Bash", "Edit", "Write", "Read", "mcp__memory__create_entities", "mcp__github__search_repositories", "mcp__my-server__do_it"},
			[]string{"bash", "apply_patch", "mcp__", "mcp__memory", "mcp__memory__", "mcp____tool", "mcp___x__y", "Mcp__memory__x", "xmcp__memory__x", ""}},
		{"codex@0.147.0",
			[]string{"Bash", "apply_patch"},
			[]string{"Edit", "mcp__memory__create_entities", ""}},
		// Codex 0.171.0 names an MCP server's tool to hooks as Claude
		// Code does (providers/testdata/README.md finding 50).
		{"codex@0.171.0",
			[]string{"Bash", "apply_patch", "mcp__memory__create_entities", "mcp__cmsrv__probe"},
			[]string{"Edit", "mcp__", "mcp__memory", "mcp____tool", ""}},
		{"claude@2.1.332",
			[]string{"Bash", "Edit", "Write", "Read", "mcp__memory__create_entities"},
			[]string{"bash", "apply_patch", "mcp__", "mcp____tool", ""}},
	} {
		name, version, _ := strings.Cut(tc.table, "@")
		tb, ok := ts.Lookup(name, version)
		if !ok {
			t.Fatalf("no table %s", tc.table)
		}
		for _, n := range tc.known {
			if !tb.KnowsTool(n) {
				t.Errorf("%s: a matcher may name %q, but the table does not know it", tc.table, n)
			}
		}
		for _, n := range tc.not {
			if tb.KnowsTool(n) {
				t.Errorf("%s: the table knows %q, which is no native tool name there", tc.table, n)
			}
		}
	}
}

// A native event a table lists as unmapped is one no row uses: a table
// cannot both map an event and say no row reaches it.
func TestUnmappedEventsAreUnused(t *testing.T) {
	ts := mustLoad(t)
	n := 0
	for _, tb := range ts.All() {
		for e, u := range tb.Unmapped.Events {
			n++
			if _, used := tb.Events[e]; used {
				t.Errorf("%s: %s is both in events and in unmapped.events", tb.Key(), e)
			}
			if strings.TrimSpace(u.Reason) == "" {
				t.Errorf("%s: unmapped.events.%s has no reason", tb.Key(), e)
			}
		}
	}
	if n == 0 {
		t.Error("no table lists an unmapped event; the walk is broken")
	}
}

// InProject takes the project's files and skills, but a harness's review
// of each hook (Codex's trusted_hash) is the table's, whatever folder
// trust the project scope states: GitHub Copilot CLI runs a trusted
// folder's hooks without a hook review, so install must not ask for one.
func TestInProjectKeepsHookTrust(t *testing.T) {
	ts, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range ts.All() {
		p := tb.Config.Project
		if p == nil || p.Status != Supported {
			continue
		}
		in, err := tb.InProject(t.TempDir())
		if err != nil {
			t.Fatalf("%s: %v", tb.Key(), err)
		}
		if in.Config.Trust.Required != tb.Config.Trust.Required || in.Config.Trust.How != tb.Config.Trust.How {
			t.Errorf("%s in a project: hook trust %+v, want the table's %+v", tb.Key(), in.Config.Trust, tb.Config.Trust)
		}
		if in.Config.Hooks.Path != p.Hooks.Path || in.Config.Hooks.Root != "project" {
			t.Errorf("%s in a project: hooks file %s, want %s", tb.Key(), in.Config.Hooks.Path, p.Hooks.Path)
		}
	}
}

// TestProjectOthers: a file of another harness's project scope that a
// table says its harness runs too names a harness dalo has a table for,
// and that harness's project hooks file, where doctor looks for dalo's
// entries.
func TestProjectOthers(t *testing.T) {
	ts, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tb := range ts.All() {
		if tb.Config.Project == nil {
			continue
		}
		for _, po := range tb.Config.Project.Others {
			n++
			o, ok := ts.Newest(po.Harness)
			switch {
			case !ok || po.Harness == tb.Name:
				t.Errorf("%s: project.others names %q, not another harness with a table", tb.Key(), po.Harness)
			case o.Config.Project == nil || o.Config.Project.Status != Supported || o.Config.Project.Hooks.Path != po.Location.Path:
				t.Errorf("%s: project.others names %s of %s, which is not where dalo writes %s's project entries", tb.Key(), po.Location.Path, po.Harness, o.Key())
			}
		}
	}
	if n == 0 {
		t.Error("no table states another harness's project file it runs: GitHub Copilot CLI's runs Claude Code's")
	}
}
