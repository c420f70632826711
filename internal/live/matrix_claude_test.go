//go:build unix

package live

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
	"dalo/internal/scenario"
)

// The Claude matrix: live tests that prove the claims of the Claude Code
// tables which rested on a recording or on documentation only. Each
// subtest of TestMatrixClaude installs a kit of its own, built from cmHook
// rows, and runs one session that serves several claims. Its fields,
// outputs_nothing, failures, native_tools, actor and prompt_fail_closed
// are scenarios (scenario.ClaudeMatrixFiles), which dalo providers verify
// runs too.

const (
	cmID     = scenario.ClaudeMatrixID
	cmPkg    = scenario.ClaudeMatrixPkg
	cmFinal  = scenario.ClaudeMatrixFinal
	cmStderr = scenario.MatrixStderr
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
		{"native_tools", "claude-native-tools"},
		{"actor", "claude-actor"},
		{"prompt_fail_closed", "claude-prompt-closed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			play(t, "claude", c.scenario)
		})
	}
	t.Run("mcp_tool", testMatrixClaudeMCP)
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
