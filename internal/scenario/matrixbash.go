package scenario

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"dalo/internal/fakemodel"
	"dalo/plan"
)

// The matrices of GitHub Copilot CLI and Qwen Code: sessions that prove
// the claims of both tables through dalo's own install and dispatch. Both
// harnesses read hooks in Claude Code's shape from settings.json; what
// differs between them is each one's BashMatrix. Each scenario is a
// subtest of the live test TestMatrixCopilot or TestMatrixQwen, and
// installs a kit of its own, built from MatrixHook rows.
const (
	BashMatrixID    = "bm"
	BashMatrixPkg   = "bash-matrix"
	BashMatrixFinal = "BM-FINAL-ANSWER-6a1e"
)

// A BashMatrix is what the matrix needs to know of a harness: the live
// test its scenarios are subtests of, its events, where its payload holds
// each field, and the events on which it shows the user a hook's message.
type BashMatrix struct {
	Test   string
	Events []MatrixEvent
	Keys   map[string]string
	Shown  []string
}

// BashMatrices are the matrices of the harnesses that read hooks in Claude
// Code's shape.
var BashMatrices = map[string]BashMatrix{
	// Copilot's payloads carry no tool call id, no permission mode, and a
	// transcript path on Stop only (finding 62). It shows a hook's
	// messages nowhere.
	"copilot": {
		Test: "TestMatrixCopilot",
		Events: []MatrixEvent{
			{plan.SubjectSession, plan.PhaseStart, "SessionStart", "", []string{"session.id", "session.cwd"}},
			{plan.SubjectPrompt, plan.PhaseBefore, "UserPromptSubmit", "", []string{"session.id", "session.cwd", "prompt.text"}},
			{plan.SubjectToolCall, plan.PhaseBefore, "PreToolUse", "Bash", []string{"session.id", "session.cwd", "tool.name"}},
			{plan.SubjectToolCall, plan.PhaseAfter, "PostToolUse", "Bash", []string{"session.id", "session.cwd", "tool.name"}},
			{plan.SubjectWorkflow, plan.PhaseStop, "Stop", "", []string{"session.id", "session.cwd", "transcript.path", "workflow.already_continued"}},
			{plan.SubjectSession, plan.PhaseEnd, "SessionEnd", "", []string{"session.id", "session.cwd", "session.end_reason"}},
		},
		Keys: map[string]string{"session.id": "session_id", "session.cwd": "cwd", "prompt.text": plan.SubjectPrompt, "tool.name": "tool_name",
			"transcript.path": "transcript_path", "workflow.already_continued": "stop_hook_active", "session.end_reason": "reason"},
	},
	// Qwen fires no SessionEnd headless (finding 64), and shows a hook's
	// messages on Stop only.
	"qwen": {
		Test: "TestMatrixQwen",
		Events: []MatrixEvent{
			{plan.SubjectSession, plan.PhaseStart, "SessionStart", "", qwenCommon[:3]},
			{plan.SubjectPrompt, plan.PhaseBefore, "UserPromptSubmit", "", append(qwenCommon[:4:4], "prompt.text")},
			{plan.SubjectToolCall, plan.PhaseBefore, "PreToolUse", "run_shell_command", append(qwenCommon[:4:4], "tool.name", "tool.call_id")},
			{plan.SubjectToolCall, plan.PhaseAfter, "PostToolUse", "run_shell_command", append(qwenCommon[:4:4], "tool.name", "tool.call_id")},
			{plan.SubjectWorkflow, plan.PhaseStop, "Stop", "", append(qwenCommon[:4:4], "workflow.last_message", "workflow.already_continued")},
		},
		Keys: map[string]string{"session.id": "session_id", "session.cwd": "cwd", "prompt.text": plan.SubjectPrompt, "tool.name": "tool_name",
			"tool.call_id": "tool_call_id", "transcript.path": "transcript_path", "session.permission_mode": "permission_mode",
			"workflow.last_message": "last_assistant_message", "workflow.already_continued": "stop_hook_active"},
		Shown: []string{"Stop"},
	},
}

// The matrices' scenarios are appended to All here, after every other,
// beside the one list that names them.
func init() { All = append(All, bashMatrixScenarios()...) }

// qwenCommon are the fields every payload of Qwen Code holds.
var qwenCommon = []string{"session.id", "session.cwd", "transcript.path", "session.permission_mode"}

// bashMatrixScenario is the scenario that is the subtest sub of harness's
// matrix test.
func bashMatrixScenario(harness, sub string, script func(*World) fakemodel.Script, play func(*World, *Check) error) *Scenario {
	return &Scenario{Name: harness + "-" + strings.ReplaceAll(sub, "_", "-"), Test: BashMatrices[harness].Test + "/" + sub,
		Harnesses: []string{harness}, Script: script, Play: play}
}

// bashMatrixScenarios are the scenarios of both matrices, the most claims
// first.
func bashMatrixScenarios() []*Scenario {
	var all []*Scenario
	for _, h := range []string{"copilot", "qwen"} {
		all = append(all,
			bashMatrixScenario(h, "session", bashSessionScript, playBashSession),
			bashMatrixScenario(h, "user_channel", bashUserScript, playBashUser),
			bashMatrixScenario(h, "failures", bashFailuresScript, playBashFailures),
			bashMatrixScenario(h, "prompt_deny", bashPromptScript, playBashPromptDeny),
			bashMatrixScenario(h, "prompt_fail_closed", bashPromptScript, playBashPromptClosed),
			bashMatrixScenario(h, "members", sayFinal, playBashMembers))
	}
	return append(all,
		bashMatrixScenario("copilot", "pre_context", bashPreContextScript, playBashPreContext),
		bashMatrixScenario("copilot", "rewrite_input", bashRewriteScript, playBashRewrite),
		bashMatrixScenario("copilot", "replace_output", bashReplaceScript, playBashReplace),
		bashMatrixScenario("qwen", "tool_failure", bashToolFailureScript, playBashToolFailure),
		bashMatrixScenario("qwen", "tools", sayFinal, playQwenTools))
}

// bashMatrixFiles is the author source of the matrix kit holding hooks.
func bashMatrixFiles(description string, hooks []MatrixHook) map[string]string {
	return MatrixFiles(BashMatrixPkg, description, hooks)
}

// runBashMatrix installs the matrix kit of hooks and runs prompt in a
// session, failing c when the session fails; ok says it ran.
func runBashMatrix(w *World, c *Check, description string, hooks []MatrixHook, prompt string) (s Session, ok bool, err error) {
	return runMatrix(w, c, BashMatrixID, BashMatrixPkg, bashMatrixFiles(description, hooks), prompt)
}

func sayFinal(*World) fakemodel.Script { return fakemodel.Script{fakemodel.Say(BashMatrixFinal)} }

// The marks of the session scenario.
const (
	bmStartCtx  = "BM-START-CONTEXT-1b7e"
	bmPromptCtx = "BM-PROMPT-CONTEXT-7c20"
	bmPostCtx   = "BM-POST-CONTEXT-3f9d"
	bmDenyWhy   = "BM-DENY-REASON-5e02"
	bmAgain     = "BM-CONTINUE-REASON-0a4b"
	bmPrompt    = "Run the matrix commands, bm-fields-prompt."
)

func bashSessionScript(*World) fakemodel.Script {
	return fakemodel.Script{
		fakemodel.Run("touch bm-denied"),
		fakemodel.Run("echo bm-out-42; touch bm-ran"),
		fakemodel.Say(BashMatrixFinal),
	}
}

// playBashSession runs one session with an observer binding every field
// the table names on every event, context on each event that takes it, a
// gate that denies the first shell command, and a stop hook that
// continues the workflow once. Each bound value is right: one session id,
// the project, the prompt, the shell tool's hook name, a transcript, false
// then true; each context, the denial's reason and the continuation's
// reach the model; the denied command does not run, the other does.
func playBashSession(w *World, c *Check) error {
	m, shell := BashMatrices[w.Harness], w.ShellTool()
	var hooks []MatrixHook
	for _, e := range m.Events {
		hooks = append(hooks, MatrixHook{ID: "f-" + e.Event, Subject: e.Subject, Phase: e.Phase, Effect: plan.EffectObserve,
			Tools: e.Tools, Fields: e.Fields, Result: `{"kind":"observe"}`})
	}
	hooks = append(hooks,
		MatrixHook{ID: "start-context", Subject: plan.SubjectSession, Phase: plan.PhaseStart, Effect: plan.EffectAddContext,
			Result: `{"kind":"add_context","context":"` + bmStartCtx + `"}`},
		MatrixHook{ID: "prompt-context", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectAddContext,
			Result: `{"kind":"add_context","context":"` + bmPromptCtx + `"}`},
		MatrixHook{ID: "deny-gate", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailClosed,
			Tools: shell, When: "*bm-denied*", Result: `{"kind":"deny","reason":"` + bmDenyWhy + `"}`},
		MatrixHook{ID: "post-context", Subject: plan.SubjectToolCall, Phase: plan.PhaseAfter, Effect: plan.EffectAddContext,
			Tools: shell, When: "*bm-ran*", Result: `{"kind":"add_context","context":"` + bmPostCtx + `"}`},
		MatrixHook{ID: "continue-once", Subject: plan.SubjectWorkflow, Phase: plan.PhaseStop, Effect: plan.EffectContinueWorkflow,
			When: `*'"stop_hook_active":false'*`, Result: `{"kind":"continue_workflow","reason":"` + bmAgain + `"}`})
	if _, err := w.InstallSource(BashMatrixID, BashMatrixPkg, bashMatrixFiles("Probes of the "+w.Harness+" table's claims.", hooks)); err != nil {
		return err
	}
	cfg := w.HooksFile()
	if b, err := os.ReadFile(cfg); err != nil || !strings.Contains(string(b), "/dalo-hook dispatch --home "+w.Store+" --provider "+w.Harness+" --event PreToolUse") {
		return fmt.Errorf("%s does not call dalo-hook dispatch from the store (err %v):\n%s", cfg, err, b)
	}
	s, err := w.Run(bmPrompt)
	c.Session = s
	if err != nil {
		c.Failf("the session failed: %v", err)
		return nil
	}
	for _, mark := range []string{bmStartCtx, bmPromptCtx, bmPostCtx, bmDenyWhy, bmAgain} {
		if !w.Server.Contains(mark) {
			c.Failf("%s did not reach the model", mark)
		}
	}
	if w.Exists("bm-denied") || !w.Exists("bm-ran") {
		c.Failf("the denied command ran = %v, the allowed one ran = %v; want false, true", w.Exists("bm-denied"), w.Exists("bm-ran"))
	}
	bashFields(w, c, m, shell)
	return nil
}

// bashFields checks what each observer of playBashSession was given.
func bashFields(w *World, c *Check, m BashMatrix, shell string) {
	var sid string
	for _, e := range m.Events {
		id := "f-" + e.Event
		runs, payloads := w.MatrixRuns(id), bashPayloads(w, c, id)
		if len(runs) == 0 || len(runs) != len(payloads) {
			c.Failf("%s observer: %d runs, %d payloads; want at least one of each, as many", e.Event, len(runs), len(payloads))
			continue
		}
		for i, run := range runs {
			if e.Event == "UserPromptSubmit" && i > 0 && payloads[i][m.Keys["prompt.text"]] == "" {
				// Qwen Code fires it again, with an empty prompt, after a
				// tool result (finding 64): the empty value is no argument.
				continue
			}
			if len(run) != len(e.Fields) {
				c.Failf("%s run %d: argv %q, want one value per field %v", e.Event, i, run, e.Fields)
				continue
			}
			for j, f := range e.Fields {
				got, key := run[j], m.Keys[f]
				if want := fmt.Sprint(payloads[i][key]); key == "" || got != want {
					c.Failf("%s run %d: %s = %q, want the payload's %q: %q", e.Event, i, f, got, key, want)
				}
				if f == "session.id" && sid == "" {
					sid = got
				}
				if bad := bashFieldWrong(w, f, got, sid, shell, i); bad != "" {
					c.Failf("%s run %d: %s %q, want %s", e.Event, i, f, got, bad)
				}
			}
		}
		bashUnbound(w, c, e, payloads)
		switch e.Event {
		case "UserPromptSubmit":
			if i := slices.Index(e.Fields, "prompt.text"); len(runs[0]) == len(e.Fields) && runs[0][i] != bmPrompt {
				c.Failf("prompt.text %q, want %q", runs[0][i], bmPrompt)
			}
		case "PreToolUse":
			if len(runs) != 2 {
				c.Failf("PreToolUse observer: %d runs, want 2 (both commands)", len(runs))
			}
		case "Stop":
			if len(runs) != 2 {
				c.Failf("Stop observer: %d runs, want 2 (continued once)", len(runs))
			}
		case "SessionEnd":
			if i := slices.Index(e.Fields, "session.end_reason"); len(runs) == 1 && len(runs[0]) == len(e.Fields) && runs[0][i] != "complete" {
				c.Failf("session.end_reason %q, want complete", runs[0][i])
			}
		}
	}
	// The model's call id is the same before and after the call.
	pre, post := w.MatrixRuns("f-PreToolUse"), w.MatrixRuns("f-PostToolUse")
	for _, e := range m.Events {
		i := slices.Index(e.Fields, "tool.call_id")
		if e.Event != "PreToolUse" || i < 0 || len(pre) != 2 || len(post) != 1 || len(pre[1]) != len(e.Fields) || len(post[0]) != len(e.Fields) {
			continue
		}
		if pre[1][i] != post[0][i] {
			c.Failf("tool.call_id before %q and after %q the call differ", pre[1][i], post[0][i])
		}
	}
}

// bashUnbound checks that each payload of event e holds every field the
// table says it does that the observer does not bind (the rules let no
// hook of that row bind it: Qwen's permission mode at session start),
// under the table's key.
func bashUnbound(w *World, c *Check, e MatrixEvent, payloads []map[string]any) {
	fields := w.Provider.Events[e.Event].Payload.Fields
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		if slices.Contains(e.Fields, f) {
			continue
		}
		for i, p := range payloads {
			if v, ok := p[fields[f].Key]; !ok || v == nil || v == "" {
				c.Failf("%s run %d: the payload holds no %s under %q, where the table says it does", e.Event, i, f, fields[f].Key)
			}
		}
	}
}

// bashFieldWrong says what the value got of field f, in run i of an
// observer, should have been, or "" when it is right.
func bashFieldWrong(w *World, f, got, sid, shell string, i int) string {
	switch f {
	case "session.id":
		if got != sid {
			return "the session's " + sid
		}
	case "session.cwd":
		if !SamePath(got, w.Work) {
			return "the project " + w.Work
		}
	case "tool.name":
		if got != shell {
			return shell
		}
	case "transcript.path":
		if !strings.HasPrefix(got, w.ConfigHome()+string(filepath.Separator)) {
			return "a path under the configuration home " + w.ConfigHome()
		}
	case "workflow.already_continued":
		if want := fmt.Sprint(i > 0); got != want {
			return want
		}
	case "tool.call_id":
		if got == "" {
			return "a call id"
		}
	}
	return ""
}

// bashPayloads returns the native payload of each run of matrix hook id,
// failing c for each line that is none.
func bashPayloads(w *World, c *Check, id string) []map[string]any {
	ps, bad := w.MatrixPayloads(id)
	for _, b := range bad {
		c.Failf("hook %s: stdin %s is not the native payload", id, b)
	}
	return ps
}

func bashFailuresScript(*World) fakemodel.Script {
	return fakemodel.Script{
		fakemodel.Run("touch bm-closed"),
		fakemodel.Run("touch bm-model-closed"),
		fakemodel.Run("touch bm-open"),
		fakemodel.Say(BashMatrixFinal),
	}
}

// playBashFailures runs a session whose hooks crash (exit 3 with text on
// stderr): a fail_closed gate shown to the user only denies with the
// generic reason, one shown to the model too with its diagnostic, a
// fail_open gate lets the command run; context hooks under report and
// fail_open shown to the model put the diagnostic in front of it; a
// crashing fail_closed stop hook asks for another pass with the generic
// reason, and one shown to the model too with its diagnostic. No
// handler's stderr reaches the model.
func playBashFailures(w *World, c *Check) error {
	shell := w.ShellTool()
	hooks := []MatrixHook{
		{ID: "closed", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailClosed, Visibility: plan.VisibilityUser, Tools: shell, When: "*bm-closed*", Exit: 3},
		{ID: "model-closed", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailClosed, Visibility: plan.VisibilityModelAndUser, Tools: shell, When: "*bm-model-closed*", Exit: 3},
		{ID: "open", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailOpen, Tools: shell, When: "*bm-open*", Exit: 3},
		{ID: "start-report", Subject: plan.SubjectSession, Phase: plan.PhaseStart, Effect: plan.EffectAddContext, Policy: plan.PolicyReport, Visibility: plan.VisibilityModelAndUser, Exit: 3},
		{ID: "prompt-open", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectAddContext, Policy: plan.PolicyFailOpen, Visibility: plan.VisibilityModelAndUser, When: "*bm-failures-prompt*", Exit: 3},
		{ID: "post-report", Subject: plan.SubjectToolCall, Phase: plan.PhaseAfter, Effect: plan.EffectAddContext, Policy: plan.PolicyReport, Visibility: plan.VisibilityModelAndUser, Tools: shell, When: "*bm-open*", Exit: 3},
		{ID: "strict-stop", Subject: plan.SubjectWorkflow, Phase: plan.PhaseStop, Effect: plan.EffectContinueWorkflow, Policy: plan.PolicyFailClosed, Visibility: plan.VisibilityUser, Exit: 3},
		{ID: "model-stop", Subject: plan.SubjectWorkflow, Phase: plan.PhaseStop, Effect: plan.EffectContinueWorkflow, Policy: plan.PolicyFailClosed, Visibility: plan.VisibilityModelAndUser, Exit: 3},
	}
	_, ok, err := runBashMatrix(w, c, "Probes of the "+w.Harness+" table's failures.", hooks, "Run the commands you are given, bm-failures-prompt.")
	if !ok {
		return err
	}
	if w.Exists("bm-closed") || w.Exists("bm-model-closed") || !w.Exists("bm-open") {
		c.Failf("ran: fail_closed (user) %v, fail_closed (model) %v, fail_open %v; want false, false, true",
			w.Exists("bm-closed"), w.Exists("bm-model-closed"), w.Exists("bm-open"))
	}
	generic := fmt.Sprintf("[%s:%s/closed] This hook failed; the details were shown to the user. The action was blocked (fail_closed).", BashMatrixID, BashMatrixPkg)
	if !w.Server.Contains(generic) {
		c.Failf("fail_closed gate (user): the model did not read %q", generic)
	}
	for _, id := range []string{"model-closed", "start-report", "prompt-open", "post-report", "model-stop"} {
		if d := bashModelDiag(id); !w.Server.Contains(d) {
			c.Failf("%s (model_and_user): the model did not read %q", id, d)
		}
	}
	if !w.Server.Contains("Another pass was requested (fail_closed).") {
		c.Failf("crashing fail_closed stop hook: no pass was asked for with the generic reason")
	}
	if w.Server.Contains(MatrixStderr) {
		c.Failf("a handler's stderr reached the model")
	}
	return nil
}

// bashModelDiag is what the model reads of the crash (exit 3) of matrix
// hook id shown to the model.
func bashModelDiag(id string) string {
	return fmt.Sprintf("[%s:%s/%s] This hook failed: handler exited with status 3.", BashMatrixID, BashMatrixPkg, id)
}
