package scenario

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"dalo/internal/fakemodel"
	"dalo/plan"
	"dalo/providers"
)

// The rows of the GitHub Copilot CLI and Qwen Code matrices beyond the
// session and its failures: the user channel, a denied prompt, the
// members each reads, context before a tool call, a rewritten input, a
// replaced output, a failed tool call and the tools offered.

// The marks of the row scenarios.
const (
	bmPreCtx    = "BM-PRE-CONTEXT-91d4"
	bmReplaced  = "BM-REPLACED-OUTPUT-7e3a"
	bmFailCtx   = "BM-FAILURE-CONTEXT-c2b8"
	bmPromptWhy = "BM-PROMPT-DENY-4f61"
)

// BashUserPrompt is the prompt of the user channel's sessions.
const BashUserPrompt = "Run the command you are given, bm-user-prompt."

func bashUserScript(*World) fakemodel.Script {
	return fakemodel.Script{fakemodel.Run("echo bm-user-1"), fakemodel.Say(BashMatrixFinal)}
}

// BashUserHooks are the hooks of the user channel's kit: a report hook
// shown to the user only on every event of harness, each crashing with a
// status of its own (60 and up, in the order of the events).
func BashUserHooks(harness string) []MatrixHook {
	var hooks []MatrixHook
	for i, e := range BashMatrices[harness].Events {
		hooks = append(hooks, MatrixHook{ID: "user-" + e.Event, Subject: e.Subject, Phase: e.Phase, Effect: plan.EffectObserve,
			Policy: plan.PolicyReport, Visibility: plan.VisibilityUser, Tools: e.Tools, Exit: 60 + i})
	}
	return hooks
}

// BashUserFiles is the author source of the user channel's kit.
func BashUserFiles(harness string) map[string]string {
	return bashMatrixFiles("Probes of the "+harness+" table's user channel.", BashUserHooks(harness))
}

// BashUserDiag is dalo's diagnostic of the crash of user channel hook h.
func BashUserDiag(h MatrixHook) string {
	return fmt.Sprintf("dalo: hook %s:%s/%s failed (report): handler exited with status %d", BashMatrixID, BashMatrixPkg, h.ID, h.Exit)
}

// playBashUser runs the user channel's kit headless. The user is shown a
// hook's diagnostic, with its stderr, on the harness's stderr exactly on
// the events the matrix says it shows (Shown); on every other event
// nowhere: not on stdout or stderr, in no file of the home; and never to
// the model. The same kit in the harness's terminal (through script(1))
// stays a live-only half of the test: a user's machine need not have
// script(1), and an interactive session must be driven by keystrokes and
// read off a screen, which takes a minute and more and proves the same
// claims a second way.
func playBashUser(w *World, c *Check) error {
	hooks := BashUserHooks(w.Harness)
	if _, err := w.InstallSource(BashMatrixID, BashMatrixPkg, BashUserFiles(w.Harness)); err != nil {
		return err
	}
	s, err := w.Run(BashUserPrompt)
	c.Session = s
	if err != nil {
		c.Failf("the session failed: %v", err)
		return nil
	}
	for _, h := range hooks {
		event := strings.TrimPrefix(h.ID, "user-")
		if len(w.MatrixRuns(h.ID)) == 0 {
			c.Failf("headless: the %s hook did not run", event)
			continue
		}
		diag := BashUserDiag(h)
		want := slices.Contains(BashMatrices[w.Harness].Shown, event)
		got := strings.Contains(s.Stderr, diag) && strings.Contains(s.Stderr, "stderr: "+MatrixStderr)
		if got != want {
			c.Failf("headless: %s's diagnostic and its stderr on the harness's stderr = %v, want %v", event, got, want)
		}
		if !want {
			if strings.Contains(s.Stdout, diag) || strings.Contains(s.Stderr, diag) {
				c.Failf("headless: %s's diagnostic was shown", event)
			}
			if files := w.HomeFiles(diag); len(files) > 0 {
				c.Failf("headless: %s's diagnostic is in %v", event, files)
			}
		}
		if w.Server.Contains(diag) || w.Server.Contains(fmt.Sprintf("status %d", h.Exit)) {
			c.Failf("%s's diagnostic, meant for the user only, reached the model", event)
		}
	}
	return nil
}

// HomeFiles returns the files under the world's home that hold mark,
// relative to it.
func (w *World) HomeFiles(mark string) []string {
	var found []string
	filepath.WalkDir(w.Home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(mark)) {
			rel, _ := filepath.Rel(w.Home, path)
			found = append(found, rel)
		}
		return nil
	})
	return found
}

func bashPromptScript(*World) fakemodel.Script {
	return fakemodel.Script{fakemodel.Run("touch bm-ran"), fakemodel.Say(BashMatrixFinal)}
}

// bashUserReadsPrompt says whether harness shows the user, on stderr, why
// it refused a prompt. Headless, Qwen Code shows the reason of a denied
// prompt nowhere.
var bashUserReadsPrompt = map[string]bool{"copilot": true}

// playBashPromptDeny runs a prompt/before gate that denies the prompt: the
// model is never asked, nothing runs, and where the harness shows the
// reason (stderr) the user reads it.
func playBashPromptDeny(w *World, c *Check) error {
	hooks := []MatrixHook{{ID: "prompt-gate", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectGate,
		Policy: plan.PolicyFailClosed, When: "*bm-deny-this*", Result: `{"kind":"deny","reason":"` + bmPromptWhy + `"}`}}
	s, ok, err := runBashRefused(w, c, "A prompt gate.", hooks, "Run the command, bm-deny-this.")
	if !ok {
		return err
	}
	if bashUserReadsPrompt[w.Harness] && !strings.Contains(s.Stderr, bmPromptWhy) {
		c.Failf("the user was not shown the denial's reason %q on stderr", bmPromptWhy)
	}
	return nil
}

// playBashPromptClosed runs a fail_closed prompt gate that crashes, under
// both error visibilities: the prompt is denied, the model is never
// asked, and where the harness shows the reason the user reads the
// diagnostic of each.
func playBashPromptClosed(w *World, c *Check) error {
	hooks := []MatrixHook{
		{ID: "prompt-closed", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailClosed, Visibility: plan.VisibilityUser, Exit: 41},
		{ID: "prompt-model-closed", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailClosed, Visibility: plan.VisibilityModelAndUser, Exit: 42},
	}
	s, ok, err := runBashRefused(w, c, "Crashing prompt gates.", hooks, "Run the command, bm-closed-prompt.")
	if !ok {
		return err
	}
	for _, h := range hooks {
		if d := "dalo: hook " + BashMatrixID + ":" + BashMatrixPkg + "/" + h.ID + " failed (fail_closed)"; bashUserReadsPrompt[w.Harness] && !strings.Contains(s.Stderr, d) {
			c.Failf("the user was not shown %q on stderr", d)
		}
	}
	return nil
}

// runBashRefused installs the matrix kit of hooks and runs prompt in a
// session the harness may end in failure, having refused the prompt; it
// fails c unless the harness asked the model nothing and ran no command.
// ok says the session ended within its bound.
func runBashRefused(w *World, c *Check, description string, hooks []MatrixHook, prompt string) (s Session, ok bool, err error) {
	if _, err := w.InstallSource(BashMatrixID, BashMatrixPkg, bashMatrixFiles(description, hooks)); err != nil {
		return Session{}, false, err
	}
	s, err = w.Run(prompt)
	c.Session = s
	w.logf("%s exit: %v", w.Harness, err)
	if s.TimedOut {
		c.Failf("the session failed: %v", err)
		return s, false, nil
	}
	for _, q := range w.Server.Requests() {
		if q.Method == "POST" {
			c.Failf("denied prompt: the model was asked (%s %s)", q.Method, q.Path)
			break
		}
	}
	if w.Exists("bm-ran") {
		c.Failf("denied prompt: the model's command ran")
	}
	return s, true, nil
}

// playBashMembers installs a package of one skill and one agent (with the
// skill as its inline fallback): the skill's description reaches the
// model where the table says the harness reads it, and the agent's from
// the file the table says it reads (its agents location and layout);
// where it reads none, dalo installs the fallback skill and the agent's
// description reaches the model nowhere.
func playBashMembers(w *World, c *Check) error {
	files := map[string]string{
		"plugins/members/PLUGIN.toml": "schema_version = 1\n\n[plugin]\nname = \"members\"\ndescription = \"A skill and an agent.\"\nid = \"dalo.members\"\n\n" +
			"[[plugin.members]]\nref = \"skill:live-skill\"\nrequirement = \"required\"\n\n" +
			"[[plugin.members]]\nref = \"agent:live-agent\"\nrequirement = \"required\"\nfallback = { kind = \"inline\", skill = \"skill:live-skill\" }\n",
		"skills/live-skill/SKILL.md": SourceFiles["skills/live-skill/SKILL.md"],
		"agents/live-agent.md":       SourceFiles["agents/live-agent.md"],
	}
	_, ok, err := runMatrix(w, c, BashMatrixID, "members", files, "Say something short.")
	if !ok {
		return err
	}
	if !w.Server.Contains(MarkSkill) {
		c.Failf("the skill's description %s did not reach the model", MarkSkill)
	}
	tb := w.Provider
	if reads := tb.Config.Agents.Status == providers.Supported; w.Server.Contains(MarkAgent) != reads {
		c.Failf("the agent's description %s reached the model = %v; the table says the harness reads agents = %v", MarkAgent, !reads, reads)
	}
	// The agent's description came from the file the table names.
	file, ok, err := tb.AgentFile("live-agent", w.Getenv)
	if err != nil {
		return err
	}
	if _, err := os.Stat(file); ok && err != nil {
		c.Failf("no agent file where the table says the harness reads it: %v", err)
	}
	return nil
}

func bashPreContextScript(*World) fakemodel.Script {
	return fakemodel.Script{fakemodel.Run("touch bm-ran"), fakemodel.Say(BashMatrixFinal)}
}

// playBashPreContext runs a tool_call/before add_context hook on the shell
// tool, and another that crashes under report shown to the model too: the
// context and the other's diagnostic reach the model, and the call runs.
func playBashPreContext(w *World, c *Check) error {
	shell := w.ShellTool()
	hooks := []MatrixHook{
		{ID: "pre-context", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectAddContext, Tools: shell,
			Result: `{"kind":"add_context","context":"` + bmPreCtx + `"}`},
		{ID: "pre-report", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectAddContext, Policy: plan.PolicyReport,
			Visibility: plan.VisibilityModelAndUser, Tools: shell, Exit: 3},
	}
	_, ok, err := runBashMatrix(w, c, "Context before a tool call.", hooks, "Run the command you are given.")
	if !ok {
		return err
	}
	if !w.Server.Contains(bmPreCtx) || !w.Exists("bm-ran") {
		c.Failf("the context reached the model = %v, the command ran = %v; want both", w.Server.Contains(bmPreCtx), w.Exists("bm-ran"))
	}
	if d := bashModelDiag("pre-report"); !w.Server.Contains(d) {
		c.Failf("the model did not read the crashed report hook's diagnostic %q", d)
	}
	if w.Server.Contains(MatrixStderr) {
		c.Failf("a handler's stderr reached the model")
	}
	return nil
}

func bashRewriteScript(*World) fakemodel.Script {
	return fakemodel.Script{fakemodel.Run("touch bm-original"), fakemodel.Say(BashMatrixFinal)}
}

// playBashRewrite runs a tool_call/before rewrite_input hook that replaces
// the shell command's input: the rewritten command runs, the model's own
// does not.
func playBashRewrite(w *World, c *Check) error {
	hooks := []MatrixHook{{ID: "rewrite", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectRewriteInput,
		Policy: plan.PolicyFailClosed, Tools: w.ShellTool(), When: "*bm-original*",
		Result: `{"kind":"rewrite_input","input":{"command":"touch bm-rewritten"}}`}}
	_, ok, err := runBashMatrix(w, c, "A rewritten input.", hooks, "Run the command you are given.")
	if !ok {
		return err
	}
	if w.Exists("bm-original") || !w.Exists("bm-rewritten") {
		c.Failf("the model's command ran = %v, the rewritten one ran = %v; want false, true", w.Exists("bm-original"), w.Exists("bm-rewritten"))
	}
	return nil
}

func bashReplaceScript(*World) fakemodel.Script {
	return fakemodel.Script{fakemodel.Run("echo bm-out-$((6*7))"), fakemodel.Say(BashMatrixFinal)}
}

// bashReplacement is the output a replace_output hook gives, in each
// harness's own tool result: Copilot's result object, whose
// textResultForLlm the model reads.
var bashReplacement = map[string]string{
	"copilot": `{"textResultForLlm":"` + bmReplaced + `","resultType":"success"}`,
}

// playBashReplace runs a tool_call/after replace_output hook that replaces
// the shell command's output with the harness's own result object: the
// model reads the replacement, never the output.
func playBashReplace(w *World, c *Check) error {
	hooks := []MatrixHook{{ID: "replace", Subject: plan.SubjectToolCall, Phase: plan.PhaseAfter, Effect: plan.EffectReplaceOutput,
		Tools: w.ShellTool(), Result: `{"kind":"replace_output","output":` + bashReplacement[w.Harness] + `}`}}
	_, ok, err := runBashMatrix(w, c, "A replaced output.", hooks, "Run the command you are given.")
	if !ok {
		return err
	}
	if !w.Server.Contains(bmReplaced) || w.Server.Contains("bm-out-42") {
		c.Failf("the model read the replacement = %v, the command's own output = %v; want true, false", w.Server.Contains(bmReplaced), w.Server.Contains("bm-out-42"))
	}
	return nil
}

func bashToolFailureScript(*World) fakemodel.Script {
	return fakemodel.Script{fakemodel.Run("echo bm-fine"), fakemodel.Run("exit 7"), fakemodel.Say(BashMatrixFinal)}
}

// bashFailureFields are the fields a harness's tool_call/failure payload
// holds.
var bashFailureFields = map[string][]string{
	"qwen": {"session.id", "session.cwd", "transcript.path", "tool.name", "tool.call_id", "session.permission_mode"},
}

// playBashToolFailure runs a session whose shell command fails, with a
// tool_call/failure observer binding the fields the table names, a hook
// adding context and one crashing under report shown to the model too: the
// observer runs once, for the failed call, and the context and the
// crashed hook's diagnostic reach the model.
func playBashToolFailure(w *World, c *Check) error {
	shell, fields := w.ShellTool(), bashFailureFields[w.Harness]
	hooks := []MatrixHook{
		{ID: "f-failure", Subject: plan.SubjectToolCall, Phase: plan.PhaseFailure, Effect: plan.EffectObserve, Tools: shell, Fields: fields, Result: `{"kind":"observe"}`},
		{ID: "failure-context", Subject: plan.SubjectToolCall, Phase: plan.PhaseFailure, Effect: plan.EffectAddContext, Tools: shell,
			Result: `{"kind":"add_context","context":"` + bmFailCtx + `"}`},
		{ID: "failure-report", Subject: plan.SubjectToolCall, Phase: plan.PhaseFailure, Effect: plan.EffectAddContext, Policy: plan.PolicyReport,
			Visibility: plan.VisibilityModelAndUser, Tools: shell, Exit: 3},
	}
	_, ok, err := runBashMatrix(w, c, "A failed tool call.", hooks, "Run the commands you are given.")
	if !ok {
		return err
	}
	if !w.Server.Contains(bmFailCtx) {
		c.Failf("the failure's context did not reach the model")
	}
	if d := bashModelDiag("failure-report"); !w.Server.Contains(d) {
		c.Failf("the model did not read the crashed report hook's diagnostic %q", d)
	}
	runs, payloads := w.MatrixRuns("f-failure"), bashPayloads(w, c, "f-failure")
	if len(runs) != 1 || len(payloads) != 1 {
		c.Failf("failure observer: %d runs, %d payloads; want one of each (the failed call only)", len(runs), len(payloads))
		return nil
	}
	if len(runs[0]) != len(fields) {
		c.Failf("failure observer argv %q, want one value per field %v", runs[0], fields)
		return nil
	}
	keys := BashMatrices[w.Harness].Keys
	for i, f := range fields {
		if want := fmt.Sprint(payloads[0][keys[f]]); runs[0][i] != want || want == "" {
			c.Failf("failure observer: %s = %q, want the payload's %q: %q", f, runs[0][i], keys[f], want)
		}
	}
	if in, _ := payloads[0]["tool_input"].(map[string]any); in["command"] != "exit 7" {
		c.Failf("failure observer ran for %v, want the failed command", payloads[0]["tool_input"])
	}
	return nil
}

// playQwenTools runs a session in yolo mode, as the scenarios run Qwen
// Code: the tools it offers the model, by the names its hooks see
// (run_shell_command's is proved on every row's session), are exactly the
// table's.
func playQwenTools(w *World, c *Check) error {
	s, err := w.Run("Say something short.")
	c.Session = s
	if err != nil {
		c.Failf("the session failed: %v", err)
		return nil
	}
	reqs := w.Server.Requests()
	if len(reqs) == 0 {
		c.Failf("no model request")
		return nil
	}
	var offered []string
	tools, _ := reqs[0].JSON["tools"].([]any)
	for _, tool := range tools {
		if m, ok := tool.(map[string]any); ok {
			name, _ := m["name"].(string)
			offered = append(offered, name)
		}
	}
	slices.Sort(offered)
	want := w.Provider.ToolNames()
	slices.Sort(want)
	if !slices.Equal(offered, want) {
		c.Failf("Qwen Code offered the model %q, want the table's tools %q", offered, want)
	}
	return nil
}
