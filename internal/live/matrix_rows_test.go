//go:build unix

package live

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
)

// The rows of the GitHub Copilot CLI and Qwen Code tables beyond the one
// session of testBashMatrixSession: context before a tool call, a
// rewritten input, a replaced output, a failed tool call, a denied
// prompt, and the members (skills, agents) each reads. Each runs through
// dalo's own install and dispatch; the table cites the subtests that
// prove its claims, and a subtest runs only for a table that cites it.

const (
	bmPreCtx   = "BM-PRE-CONTEXT-91d4"
	bmReplaced = "BM-REPLACED-OUTPUT-7e3a"
	bmFailCtx  = "BM-FAILURE-CONTEXT-c2b8"
	bmPrompt   = "BM-PROMPT-DENY-4f61"
)

// testBashMatrixPreContext runs a tool_call/before add_context hook on the
// shell tool, and another that crashes under report shown to the model
// too: the context and the other's diagnostic reach the model, and the
// call runs.
func testBashMatrixPreContext(t *testing.T, p string) {
	t.Parallel()
	w := newWorld(t, p, fakemodel.Script{fakemodel.Run("touch bm-ran"), fakemodel.Say(bmFinal)})
	w.installSource(bmID, bmPkg, matrixFiles(bmPkg, "Context before a tool call.", []cmHook{
		{id: "pre-context", subject: "tool_call", phase: "before", effect: "add_context", tools: shellTool[p],
			result: `{"kind":"add_context","context":"` + bmPreCtx + `"}`},
		{id: "pre-report", subject: "tool_call", phase: "before", effect: "add_context", policy: "report", visibility: "model_and_user",
			tools: shellTool[p], exit: 3},
	}))
	s := w.run("Run the command you are given.")
	if !w.server.Contains(bmPreCtx) || !w.exists("bm-ran") {
		w.failf(s, "the context reached the model = %v, the command ran = %v; want both", w.server.Contains(bmPreCtx), w.exists("bm-ran"))
	}
	if d := fmt.Sprintf("[%s:%s/pre-report] This hook failed: handler exited with status 3.", bmID, bmPkg); !w.server.Contains(d) {
		w.failf(s, "the model did not read the crashed report hook's diagnostic %q", d)
	}
	if w.server.Contains(cmStderr) {
		w.failf(s, "a handler's stderr reached the model")
	}
}

// testBashMatrixRewrite runs a tool_call/before rewrite_input hook that
// replaces the shell command's input: the rewritten command runs, the
// model's own does not.
func testBashMatrixRewrite(t *testing.T, p string) {
	t.Parallel()
	w := newWorld(t, p, fakemodel.Script{fakemodel.Run("touch bm-original"), fakemodel.Say(bmFinal)})
	w.installSource(bmID, bmPkg, matrixFiles(bmPkg, "A rewritten input.", []cmHook{{id: "rewrite",
		subject: "tool_call", phase: "before", effect: "rewrite_input", policy: "fail_closed", tools: shellTool[p], when: "*bm-original*",
		result: `{"kind":"rewrite_input","input":{"command":"touch bm-rewritten"}}`}}))
	s := w.run("Run the command you are given.")
	if w.exists("bm-original") || !w.exists("bm-rewritten") {
		w.failf(s, "the model's command ran = %v, the rewritten one ran = %v; want false, true", w.exists("bm-original"), w.exists("bm-rewritten"))
	}
}

// testBashMatrixReplace runs a tool_call/after replace_output hook that
// replaces the shell command's output with the harness's own result
// object: the model reads the replacement, never the output.
func testBashMatrixReplace(t *testing.T, p string, output string) {
	t.Parallel()
	w := newWorld(t, p, fakemodel.Script{fakemodel.Run("echo bm-out-$((6*7))"), fakemodel.Say(bmFinal)})
	w.installSource(bmID, bmPkg, matrixFiles(bmPkg, "A replaced output.", []cmHook{{id: "replace",
		subject: "tool_call", phase: "after", effect: "replace_output", tools: shellTool[p],
		result: `{"kind":"replace_output","output":` + output + `}`}}))
	s := w.run("Run the command you are given.")
	if !w.server.Contains(bmReplaced) || w.server.Contains("bm-out-42") {
		w.failf(s, "the model read the replacement = %v, the command's own output = %v; want true, false", w.server.Contains(bmReplaced), w.server.Contains("bm-out-42"))
	}
}

// testBashMatrixToolFailure runs a session whose shell command fails,
// with a tool_call/failure observer binding the fields the table names,
// a hook adding context and one crashing under report shown to the model
// too: the observer runs once, for the failed call, and the context and
// the crashed hook's diagnostic reach the model.
func testBashMatrixToolFailure(t *testing.T, p string, fields []string) {
	t.Parallel()
	shell := shellTool[p]
	w := newWorld(t, p, fakemodel.Script{fakemodel.Run("echo bm-fine"), fakemodel.Run("exit 7"), fakemodel.Say(bmFinal)})
	w.installSource(bmID, bmPkg, matrixFiles(bmPkg, "A failed tool call.", []cmHook{
		{id: "f-failure", subject: "tool_call", phase: "failure", effect: "observe", tools: shell, fields: fields, result: `{"kind":"observe"}`},
		{id: "failure-context", subject: "tool_call", phase: "failure", effect: "add_context", tools: shell,
			result: `{"kind":"add_context","context":"` + bmFailCtx + `"}`},
		{id: "failure-report", subject: "tool_call", phase: "failure", effect: "add_context", policy: "report", visibility: "model_and_user",
			tools: shell, exit: 3},
	}))
	s := w.run("Run the commands you are given.")
	if !w.server.Contains(bmFailCtx) {
		w.failf(s, "the failure's context did not reach the model")
	}
	if d := fmt.Sprintf("[%s:%s/failure-report] This hook failed: handler exited with status 3.", bmID, bmPkg); !w.server.Contains(d) {
		w.failf(s, "the model did not read the crashed report hook's diagnostic %q", d)
	}
	runs, payloads := w.cmRuns("f-failure"), w.cmPayloads("f-failure")
	if len(runs) != 1 || len(payloads) != 1 {
		w.failf(s, "failure observer: %d runs, %d payloads; want one of each (the failed call only)", len(runs), len(payloads))
		return
	}
	if len(runs[0]) != len(fields) {
		w.failf(s, "failure observer argv %q, want one value per field %v", runs[0], fields)
		return
	}
	keys := bmHarnesses[p].keys
	for i, f := range fields {
		if want := fmt.Sprint(payloads[0][keys[f]]); runs[0][i] != want || want == "" {
			w.failf(s, "failure observer: %s = %q, want the payload's %q: %q", f, runs[0][i], keys[f], want)
		}
	}
	if in, _ := payloads[0]["tool_input"].(map[string]any); in["command"] != "exit 7" {
		w.failf(s, "failure observer ran for %v, want the failed command", payloads[0]["tool_input"])
	}
}

// testBashMatrixPromptDeny runs a prompt/before gate that denies the
// prompt: the model is never asked, nothing runs, and where the table
// says the harness shows the reason (stderr) the user reads it.
func testBashMatrixPromptDeny(t *testing.T, p string, userReads bool) {
	t.Parallel()
	w := newWorld(t, p, fakemodel.Script{fakemodel.Run("touch bm-ran"), fakemodel.Say(bmFinal)})
	w.installSource(bmID, bmPkg, matrixFiles(bmPkg, "A prompt gate.", []cmHook{{id: "prompt-gate",
		subject: "prompt", phase: "before", effect: "gate", policy: "fail_closed", when: "*bm-deny-this*",
		result: `{"kind":"deny","reason":"` + bmPrompt + `"}`}}))
	s, err := w.runExit("Run the command, bm-deny-this.")
	t.Logf("%s exit: %v", p, err)
	bmNotAsked(w, s)
	if userReads && !strings.Contains(s.stderr, bmPrompt) {
		w.failf(s, "the user was not shown the denial's reason %q on stderr", bmPrompt)
	}
}

// testBashMatrixPromptClosed runs a fail_closed prompt gate that crashes,
// under both error visibilities: the prompt is denied, the model is never
// asked, and where the table says the harness shows the reason the user
// reads the diagnostic of each.
func testBashMatrixPromptClosed(t *testing.T, p string, userReads bool) {
	t.Parallel()
	w := newWorld(t, p, fakemodel.Script{fakemodel.Run("touch bm-ran"), fakemodel.Say(bmFinal)})
	w.installSource(bmID, bmPkg, matrixFiles(bmPkg, "Crashing prompt gates.", []cmHook{
		{id: "prompt-closed", subject: "prompt", phase: "before", effect: "gate", policy: "fail_closed", visibility: "user", exit: 41},
		{id: "prompt-model-closed", subject: "prompt", phase: "before", effect: "gate", policy: "fail_closed", visibility: "model_and_user", exit: 42},
	}))
	s, err := w.runExit("Run the command, bm-closed-prompt.")
	t.Logf("%s exit: %v", p, err)
	bmNotAsked(w, s)
	for _, id := range []string{"prompt-closed", "prompt-model-closed"} {
		if d := "dalo: hook " + bmID + ":" + bmPkg + "/" + id + " failed (fail_closed)"; userReads && !strings.Contains(s.stderr, d) {
			w.failf(s, "the user was not shown %q on stderr", d)
		}
	}
}

// bmNotAsked fails unless the harness asked the model nothing and ran
// no command.
func bmNotAsked(w *world, s session) {
	w.t.Helper()
	for _, q := range w.server.Requests() {
		if q.Method == "POST" {
			w.failf(s, "denied prompt: the model was asked (%s %s)", q.Method, q.Path)
			break
		}
	}
	if w.exists("bm-ran") {
		w.failf(s, "denied prompt: the model's command ran")
	}
}

// testBashMatrixMembers installs a package of one skill and one agent
// (with the skill as its inline fallback): the skill's description
// reaches the model where the table says the harness reads it, and the
// agent's from the file the table says it reads (its agents location and
// layout); where it reads none, dalo installs the fallback skill and the
// agent's description reaches the model nowhere.
func testBashMatrixMembers(t *testing.T, p string) {
	t.Parallel()
	tb := tableUnder(t, p)
	w := newWorld(t, p, fakemodel.Script{fakemodel.Say(bmFinal)})
	files := map[string]string{
		"plugins/members/PLUGIN.toml": "schema_version = 1\n\n[plugin]\nname = \"members\"\ndescription = \"A skill and an agent.\"\nid = \"dalo.members\"\n\n" +
			"[[plugin.members]]\nref = \"skill:live-skill\"\nrequirement = \"required\"\n\n" +
			"[[plugin.members]]\nref = \"agent:live-agent\"\nrequirement = \"required\"\nfallback = { kind = \"inline\", skill = \"skill:live-skill\" }\n",
		"skills/live-skill/SKILL.md": sourceFiles["skills/live-skill/SKILL.md"],
		"agents/live-agent.md":       sourceFiles["agents/live-agent.md"],
	}
	w.installSource(bmID, "members", files)
	s := w.run("Say something short.")
	if !w.server.Contains(markSkill) {
		w.failf(s, "the skill's description %s did not reach the model", markSkill)
	}
	if reads := tb.Config.Agents.Status == "supported"; w.server.Contains(markAgent) != reads {
		w.failf(s, "the agent's description %s reached the model = %v; the table says the harness reads agents = %v", markAgent, !reads, reads)
	}
	// The agent's description came from the file the table names.
	if file, ok, err := tb.AgentFile("live-agent", w.getenv); err != nil {
		t.Fatal(err)
	} else if _, err := os.Stat(file); ok && err != nil {
		w.failf(s, "no agent file where the table says the harness reads it: %v", err)
	}
}
