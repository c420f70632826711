//go:build unix

package live

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
	"dalo/internal/scenario"
)

// The Claude matrix: live tests that prove the claims of the Claude Code
// tables which rested on a recording or on documentation only. Each
// subtest of TestMatrixClaude installs a kit of its own, built from cmHook
// rows, and runs one session that serves several claims. Its fields,
// outputs_nothing and failures are scenarios (scenario.ClaudeMatrixFiles),
// which dalo providers verify runs too.

const (
	cmID          = scenario.ClaudeMatrixID
	cmPkg         = scenario.ClaudeMatrixPkg
	cmFinal       = scenario.ClaudeMatrixFinal
	cmStderr      = scenario.MatrixStderr
	cmWebDeny     = "CM-WEB-DENY-f27a"
	cmNotebookOut = "CM-NOTEBOOK-CELL-84c0"
)

// A cmHook is one hook of a matrix kit (scenario.MatrixHook), with a tool
// of the same id. fields are the event fields it binds, each to an input
// named after the field (dots as underscores), passed as its argv in that
// order; result is what the handler prints after recording its argv and
// stdin, or, when exit is set, the handler writes cmStderr to stderr and
// exits with that status.
type cmHook struct {
	id, subject, phase, effect, policy, visibility, tools string
	fields                                                []string
	result                                                string
	exit                                                  int
	// when, a shell case pattern, limits the result (or the crash) to a
	// payload it matches; on any other the handler abstains.
	when string
}

// cmFiles returns the author source of package cmPkg holding hooks.
func cmFiles(hooks []cmHook) map[string]string {
	return matrixFiles(cmPkg, "Probes of the Claude Code table's claims.", hooks)
}

// matrixFiles is scenario.MatrixFiles of hooks for the package name, with
// its description.
func matrixFiles(name, description string, hooks []cmHook) map[string]string {
	var mh []scenario.MatrixHook
	for _, h := range hooks {
		mh = append(mh, scenario.MatrixHook{ID: h.id, Subject: h.subject, Phase: h.phase, Effect: h.effect,
			Policy: h.policy, Visibility: h.visibility, Tools: h.tools, Fields: h.fields, Result: h.result, Exit: h.exit, When: h.when})
	}
	return scenario.MatrixFiles(name, description, mh)
}

// matrixWorld is w as the scenarios' World names its handlers' output.
func (w *world) matrixWorld() *scenario.World { return &scenario.World{Out: w.out} }

// cmRuns returns the argv of each run of hook id, in order, without empty
// values (scenario.World.MatrixRuns).
func (w *world) cmRuns(id string) [][]string { return w.matrixWorld().MatrixRuns(id) }

// cmPayloads returns the native payload of each run of hook id, in order.
func (w *world) cmPayloads(id string) []map[string]any {
	w.t.Helper()
	ps, bad := w.matrixWorld().MatrixPayloads(id)
	for _, b := range bad {
		w.t.Errorf("hook %s: stdin %s is not the native payload", id, b)
	}
	return ps
}

// cmEvents are the rows of the Claude table (scenario.ClaudeMatrixEvents).
var cmEvents = scenario.ClaudeMatrixEvents

// cmScript is the model's turn in the sessions that need no other tool
// (scenario.ClaudeMatrixScript).
var cmScript = scenario.ClaudeMatrixScript(nil)

// TestMatrixClaude runs Claude Code sessions that prove the table's
// payload fields, its outputs that print nothing, its failure deliveries
// and its native tool names.
func TestMatrixClaude(t *testing.T) {
	t.Parallel()
	harness(t, "claude")
	for _, c := range []struct{ name, scenario string }{
		{"fields", "claude-fields"},
		{"outputs_nothing", "claude-nothing"},
		{"failures", "claude-failures"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			play(t, "claude", c.scenario)
		})
	}
	t.Run("prompt_fail_closed", testMatrixClaudePromptClosed)
	t.Run("native_tools", testMatrixClaudeTools)
	t.Run("actor", testMatrixClaudeActor)
	t.Run("mcp_tool", testMatrixClaudeMCP)
}

// testMatrixClaudePromptClosed runs a session whose fail_closed prompt
// gate with error_visibility model_and_user crashes: the prompt is erased
// and the model is never asked; the user is shown the diagnostic as the
// block reason, a warning.
func testMatrixClaudePromptClosed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "claude", cmScript)
	w.StreamJSON = true
	w.installSource(cmID, cmPkg, cmFiles([]cmHook{{id: "prompt-closed", subject: "prompt", phase: "before", effect: "gate",
		policy: "fail_closed", visibility: "model_and_user", exit: 41}}))
	s, err := w.runExit("Run the matrix commands, cm-blocked-prompt.")
	t.Logf("claude exit: %v", err)
	for _, q := range w.server.Requests() {
		if q.Method == "POST" {
			w.failf(s, "blocked prompt: the model was asked (%s %s)", q.Method, q.Path)
			break
		}
	}
	if w.exists("cm-ran") {
		w.failf(s, "blocked prompt: the model's command ran")
	}
	diag := "dalo: hook " + cmID + ":" + cmPkg + "/prompt-closed failed (fail_closed): handler exited with status 41"
	m, ok := shown(w.userMessages(s), "UserPromptSubmit operation blocked by hook:", diag)
	if !ok || m.Level != "warning" {
		w.failf(s, "blocked prompt: the user was not shown %q as a warning (found %v: %+v)", diag, ok, w.userMessages(s))
	}
	t.Logf("user channel, blocked prompt: %q", m.Text)
}

// cmNotebook is a notebook of one code cell.
const cmNotebook = `{"cells": [{"cell_type": "code", "execution_count": null, "id": "cell-1", "metadata": {}, "outputs": [], "source": ["print(1)"]}],
 "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
`

// testMatrixClaudeTools runs a session whose model calls NotebookEdit,
// WebFetch and WebSearch, each gated by a fail_closed gate whose matcher
// names exactly that tool and which binds tool.name: each gate runs on
// its tool's call alone, given that name. The notebook edit is let through
// and changes the notebook; the web calls are denied, so nothing leaves
// the machine, and the model reads the reason as their result.
func testMatrixClaudeTools(t *testing.T) {
	t.Parallel()
	w := newWorldFor(t, "claude", func(w *world) fakemodel.Script {
		nb := filepath.Join(w.work, "cm.ipynb")
		return fakemodel.Script{
			{Tool: "Read", Input: map[string]any{"file_path": nb}},
			{Tool: "NotebookEdit", Input: map[string]any{"notebook_path": nb, "cell_id": "cell-1", "new_source": "print('" + cmNotebookOut + "')"}},
			{Tool: "WebFetch", Input: map[string]any{"url": "https://example.com/cm-matrix", "prompt": "Summarize the page."}},
			{Tool: "WebSearch", Input: map[string]any{"query": "cm matrix probe"}},
			fakemodel.Say(cmFinal),
		}
	})
	w.AllowedTools = "Read,NotebookEdit,WebFetch,WebSearch"
	w.writeFile(filepath.Join(w.work, "cm.ipynb"), cmNotebook)
	tools := []string{"NotebookEdit", "WebFetch", "WebSearch"}
	var hooks []cmHook
	for _, tool := range tools {
		result := `{"kind":"abstain"}`
		if tool != "NotebookEdit" {
			result = `{"kind":"deny","reason":"` + cmWebDeny + `"}`
		}
		hooks = append(hooks, cmHook{id: "gate-" + tool, subject: "tool_call", phase: "before", effect: "gate",
			policy: "fail_closed", visibility: "user", tools: tool, fields: []string{"tool.name"}, result: result})
	}
	w.installSource(cmID, cmPkg, cmFiles(hooks))
	s := w.run("Use the tools you are given.")

	for i, tool := range tools {
		runs, payloads := w.cmRuns("gate-"+tool), w.cmPayloads("gate-"+tool)
		if len(runs) != 1 || len(runs[0]) != 1 || runs[0][0] != tool || len(payloads) != 1 || payloads[0]["tool_name"] != tool {
			w.failf(s, "%s gate: runs (bound tool.name) %q, want one run given %q", tool, runs, tool)
			continue
		}
		if got := payloads[0]["tool_use_id"]; got != callID("claude", i+1) {
			w.failf(s, "%s gate: tool_use_id %v, want %s", tool, got, callID("claude", i+1))
		}
	}
	b, _ := os.ReadFile(filepath.Join(w.work, "cm.ipynb"))
	if !strings.Contains(string(b), cmNotebookOut) {
		w.failf(s, "NotebookEdit let through: the notebook is %q, want the new cell source", b)
	}
	for i, tool := range tools[1:] {
		if got := toolResult(w.server, callID("claude", i+2)); !strings.Contains(got, cmWebDeny) {
			w.failf(s, "%s denied: its result %q does not hold the reason %s", tool, got, cmWebDeny)
		}
	}
}

// testMatrixClaudeActor runs a session whose model starts a subagent (an
// agent file offering it Bash alone) in the foreground; the subagent runs
// a command that succeeds and one that fails, as the main agent does after
// it. Observers on the tool events bind actor.kind and actor.id: inside
// the subagent they are "subagent" and the payload's agent_id (the table's
// actor key), beside an agent_type naming the agent; in the main agent
// both are "main" and the payload has no agent_id. Observers on the other
// events, which fire in the main agent only, are given "main".
func testMatrixClaudeActor(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "claude", fakemodel.Script{
		// The main agent starts the subagent; the subagent, offered no
		// Agent tool, is answered an error for this step, then runs the
		// next two, as the main agent does once it returns.
		{Tool: "Agent", Input: map[string]any{"description": "Matrix probe", "prompt": "Run the probe commands.",
			"subagent_type": "cm-probe", "run_in_background": false}},
		fakemodel.Run("echo cm-out-$((6*7)); touch cm-ran"),
		fakemodel.Run("exit 7"),
		fakemodel.Say(cmFinal),
	})
	w.AllowedTools = "Bash,Agent"
	w.writeFile(filepath.Join(w.home, ".claude", "agents", "cm-probe.md"),
		"---\nname: cm-probe\ndescription: Runs the matrix probe commands.\ntools: Bash\n---\nRun the commands you are given.\n")
	var hooks []cmHook
	for _, e := range cmEvents {
		fields := []string{"actor.kind", "actor.id"}
		if e.Tools != "" {
			fields = append(fields, "tool.call_id")
		}
		hooks = append(hooks, cmHook{id: "actor-" + e.Event, subject: e.Subject, phase: e.Phase, effect: "observe",
			policy: "report", visibility: "user", fields: fields, result: `{"kind":"observe"}`})
	}
	w.installSource(cmID, cmPkg, cmFiles(hooks))
	s := w.run("Start the matrix probe agent.")

	// The calls each agent makes, by event, "<kind> <call id>".
	want := map[string][]string{
		"PreToolUse":         {"main toolu_fake_0", "main toolu_fake_1", "main toolu_fake_2", "subagent toolu_fake_1", "subagent toolu_fake_2"},
		"PostToolUse":        {"main toolu_fake_0", "main toolu_fake_1", "subagent toolu_fake_1"},
		"PostToolUseFailure": {"main toolu_fake_2", "subagent toolu_fake_2"},
	}
	agent := ""
	for _, e := range cmEvents {
		id := "actor-" + e.Event
		runs, payloads := w.cmRuns(id), w.cmPayloads(id)
		if len(runs) == 0 || len(runs) != len(payloads) {
			w.failf(s, "%s observer: %d runs, %d payloads; want at least one each, as many", e.Event, len(runs), len(payloads))
			continue
		}
		// The events other than the tool events fire in the main agent
		// only (the table gives them no actor key): once each.
		if e.Tools == "" && len(runs) != 1 {
			w.failf(s, "%s observer: %d runs, want 1: it fires in the main agent only", e.Event, len(runs))
		}
		var got []string
		for i, argv := range runs {
			if len(argv) < 2 {
				w.failf(s, "%s observer run %d: argv %q", e.Event, i, argv)
				continue
			}
			kind, aid := argv[0], argv[1]
			pid, has := payloads[i]["agent_id"].(string)
			switch {
			case kind == "main" && aid == "main" && !has:
			case kind == "subagent" && has && aid == pid && aid != "" && payloads[i]["agent_type"] == "cm-probe":
				if agent == "" {
					agent = aid
				}
				if aid != agent {
					w.failf(s, "%s: actor.id %q, want the one subagent's %q", e.Event, aid, agent)
				}
			default:
				w.failf(s, "%s run %d: actor.kind %q, actor.id %q with payload agent_id %q (present %v), agent_type %v",
					e.Event, i, kind, aid, pid, has, payloads[i]["agent_type"])
			}
			if e.Tools != "" && len(argv) == 3 {
				got = append(got, kind+" "+argv[2])
			}
		}
		if e.Tools != "" {
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(want[e.Event], ",") {
				w.failf(s, "%s runs (actor.kind, tool.call_id) = %q, want %q", e.Event, got, want[e.Event])
			}
		}
	}
	if agent == "" {
		w.failf(s, "no hook ran inside the subagent")
	}
	if got := toolResult(w.server, callID("claude", 0)); !strings.Contains(got, cmFinal) {
		w.failf(s, "the subagent's answer %q did not reach the main agent as the Agent result", got)
	}
}

// cmMCPServer is a Model Context Protocol server on stdio offering one
// tool, probe, which answers its text behind a marker.
const cmMCPServer = `import { createInterface } from "node:readline";
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  switch (m.method) {
  case "initialize":
    return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion,
      capabilities: { tools: {} }, serverInfo: { name: "cm", version: "1.0.0" } } });
  case "tools/list":
    return send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "probe", description: "Echoes its text.",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } }] } });
  case "tools/call":
    return send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "` + cmMCPOut + ` " + m.params.arguments.text }] } });
  default:
    return send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no such method" } });
  }
});
`

const cmMCPOut = "CM-MCP-OUT-5a17"

// testMatrixClaudeMCP runs a session with a user-scope MCP server, cmsrv,
// whose tool the model calls: the table's pattern mcp__<server>__<tool>
// admits the native name mcp__cmsrv__probe in a matcher, and the gate
// naming it runs on that call, given that name; it abstains, so the tool
// runs and its answer reaches the model.
func testMatrixClaudeMCP(t *testing.T) {
	t.Parallel()
	const tool = "mcp__cmsrv__probe"
	w := newWorld(t, "claude", fakemodel.Script{
		{Tool: tool, Input: map[string]any{"text": "cm-mcp-call"}},
		fakemodel.Say(cmFinal),
	})
	w.AllowedTools = tool
	server := filepath.Join(w.root, "cm-mcp.mjs")
	w.writeFile(server, cmMCPServer)
	// alwaysLoad: print mode waits for the server before asking the
	// model, where it otherwise starts while the server still connects.
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"cmsrv": map[string]any{"type": "stdio", "command": "node", "args": []string{server}, "alwaysLoad": true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	w.writeFile(filepath.Join(w.home, ".claude", ".claude.json"), string(cfg))
	w.installSource(cmID, cmPkg, cmFiles([]cmHook{{id: "gate-mcp", subject: "tool_call", phase: "before", effect: "gate",
		policy: "fail_closed", visibility: "user", tools: tool, fields: []string{"tool.name"}, result: `{"kind":"abstain"}`}}))
	s := w.run("Call the probe tool.")
	if runs := w.cmRuns("gate-mcp"); len(runs) != 1 || len(runs[0]) != 1 || runs[0][0] != tool {
		w.failf(s, "MCP gate: runs (bound tool.name) %q, want one given %q", runs, tool)
	}
	if got := toolResult(w.server, callID("claude", 0)); !strings.Contains(got, cmMCPOut+" cm-mcp-call") {
		w.failf(s, "MCP tool: its result %q does not hold its answer", got)
	}
}
