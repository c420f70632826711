package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"dalo/internal/fakemodel"
	"dalo/plan"
)

// The Gemini matrix: sessions of Gemini CLI that prove the claims of its
// table the shared scenarios do not: the payload fields, context on each
// event that takes it, and every failure delivery. Each installs a kit of
// its own, built from MatrixHook rows.
const (
	GeminiMatrixID    = "gm"
	GeminiMatrixPkg   = "gemini-matrix"
	GeminiMatrixFinal = "GM-FINAL-ANSWER-3d7c"
)

// GeminiMatrixFiles is the author source of the Gemini matrix kit holding
// hooks.
func GeminiMatrixFiles(hooks []MatrixHook) map[string]string {
	return MatrixFiles(GeminiMatrixPkg, "Probes of the Gemini CLI table's claims.", hooks)
}

// geminiEvents are the rows of the Gemini CLI table.
var geminiEvents = []MatrixEvent{
	{plan.SubjectSession, plan.PhaseStart, "SessionStart", "", []string{"session.id", "session.cwd", "transcript.path"}},
	{plan.SubjectPrompt, plan.PhaseBefore, "BeforeAgent", "", []string{"session.id", "session.cwd", "transcript.path", "prompt.text"}},
	{plan.SubjectToolCall, plan.PhaseBefore, "BeforeTool", "run_shell_command", []string{"session.id", "session.cwd", "transcript.path", "tool.name"}},
	{plan.SubjectToolCall, plan.PhaseAfter, "AfterTool", "run_shell_command", []string{"session.id", "session.cwd", "transcript.path", "tool.name"}},
	{plan.SubjectWorkflow, plan.PhaseStop, "AfterAgent", "", []string{"session.id", "session.cwd", "transcript.path", "workflow.last_message", "workflow.already_continued"}},
	{plan.SubjectSession, plan.PhaseEnd, "SessionEnd", "", []string{"session.id", "session.cwd", "transcript.path", "session.end_reason"}},
}

// geminiKeys is where the table says Gemini CLI's payload holds each field.
var geminiKeys = map[string]string{
	"session.id": "session_id", "session.cwd": "cwd", "transcript.path": "transcript_path",
	"prompt.text": plan.SubjectPrompt, "tool.name": "tool_name",
	"workflow.last_message": "prompt_response", "workflow.already_continued": "stop_hook_active",
	"session.end_reason": "reason",
}

// GeminiDiag is the first line of dalo's diagnostic for a failed hook of
// the Gemini matrix kit: what the user is shown.
func GeminiDiag(id, policy string) string {
	return fmt.Sprintf("dalo: hook %s:%s/%s failed (%s): handler exited with status 3", GeminiMatrixID, GeminiMatrixPkg, id, policy)
}

// GeminiModelChannel returns what is wrong of what the model read of the
// failure of Gemini matrix hook h: it reads it exactly when its visibility
// is model_and_user, and never a handler's stderr.
func GeminiModelChannel(srv *fakemodel.Server, h MatrixHook) []string {
	var bad []string
	modelDiag := fmt.Sprintf("[%s:%s/%s] This hook failed: handler exited with status 3.", GeminiMatrixID, GeminiMatrixPkg, h.ID)
	if toModel := srv.Contains(modelDiag); toModel != (h.Visibility == plan.VisibilityModelAndUser) {
		bad = append(bad, fmt.Sprintf("%s (%s): the failure reached the model = %v", h.ID, h.Visibility, toModel))
	}
	if h.Visibility == plan.VisibilityUser && srv.Contains(GeminiDiag(h.ID, h.Policy)) {
		bad = append(bad, fmt.Sprintf("%s: a user-only diagnostic reached the model", h.ID))
	}
	if srv.Contains(MatrixStderr) {
		bad = append(bad, "a handler's stderr reached the model")
	}
	return bad
}

// geminiFieldsContext runs a session with an observer on every native
// event binding every field the table says its payload holds, and context
// from session start and after the successful tool call. Each bound value
// is the payload's key the table names, and right: one session id, the
// project dir, one transcript under the configuration home, the prompt,
// the shell tool's name (for the failed command as for the other:
// AfterTool fires for both), the model's final text, false, the end
// reason. Both contexts reach the model; the observers change nothing.
var geminiFieldsContext = &Scenario{
	Name: "gemini-fields-context", Test: "TestMatrixGemini/fields_context", Harnesses: []string{"gemini"},
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{
			fakemodel.Run("echo gm-out-42; touch gm-ran"),
			fakemodel.Run("exit 7"),
			fakemodel.Say(GeminiMatrixFinal),
		}
	},
	Play: func(w *World, c *Check) error {
		const startCtx, postCtx = "GM-START-CONTEXT-51f0", "GM-POST-CONTEXT-a2c9"
		var hooks []MatrixHook
		for _, e := range geminiEvents {
			hooks = append(hooks, MatrixHook{ID: "f-" + e.Event, Subject: e.Subject, Phase: e.Phase, Effect: plan.EffectObserve,
				Policy: plan.PolicyReport, Visibility: plan.VisibilityUser, Tools: e.Tools, Fields: e.Fields, Result: `{"kind":"observe"}`})
		}
		hooks = append(hooks,
			MatrixHook{ID: "start-context", Subject: plan.SubjectSession, Phase: plan.PhaseStart, Effect: plan.EffectAddContext,
				Result: `{"kind":"add_context","context":"` + startCtx + `"}`},
			MatrixHook{ID: "post-context", Subject: plan.SubjectToolCall, Phase: plan.PhaseAfter, Effect: plan.EffectAddContext, Tools: "run_shell_command",
				When: "*gm-ran*", Result: `{"kind":"add_context","context":"` + postCtx + `"}`})
		const prompt = "Run the matrix commands, gm-fields-prompt."
		s, ok, err := runMatrix(w, c, GeminiMatrixID, GeminiMatrixPkg, GeminiMatrixFiles(hooks), prompt)
		if !ok {
			return err
		}
		want := map[string]string{
			// Gemini CLI puts the context SessionStart added in front of
			// the first prompt, before BeforeAgent sees it.
			"prompt.text":                "<hook_context>[" + GeminiMatrixID + ":" + GeminiMatrixPkg + "/start-context] " + startCtx + "</hook_context>\n\n" + prompt,
			"tool.name":                  "run_shell_command",
			"workflow.last_message":      GeminiMatrixFinal,
			"workflow.already_continued": "false",
			"session.end_reason":         "exit",
		}
		calls := map[string]int{"BeforeTool": 2, "AfterTool": 2}
		var sid, transcript string
		for _, e := range geminiEvents {
			n := 1
			if k := calls[e.Event]; k != 0 {
				n = k
			}
			for i, got := range matrixBound(w, c, "f-"+e.Event, e, n, geminiKeys) {
				for _, f := range e.Fields {
					v, bad := got[f], ""
					switch f {
					case "session.id":
						if sid == "" {
							sid = v
						}
						if v == "" || v != sid {
							bad = "one session id, " + sid
						}
					case "session.cwd":
						if !SamePath(v, w.Work) {
							bad = "the project dir " + w.Work
						}
					case "transcript.path":
						if transcript == "" {
							transcript = v
						}
						if v != transcript || !strings.HasPrefix(v, w.ConfigHome()+string(filepath.Separator)) {
							bad = "one path under " + w.ConfigHome()
						}
					default:
						if v != want[f] {
							bad = want[f]
						}
					}
					if bad != "" && got != nil {
						c.Failf("%s run %d: bound %s = %q, want %s", e.Event, i, f, v, bad)
					}
				}
			}
		}
		if b, err := os.ReadFile(transcript); err != nil || !strings.Contains(string(b), "gm-fields-prompt") {
			c.Failf("transcript.path %q: the file does not hold the session's prompt (%v)", transcript, err)
		}
		for _, ctx := range []string{startCtx, postCtx} {
			if !w.Server.Contains(ctx) {
				c.Failf("context %s did not reach the model", ctx)
			}
		}
		if !w.Exists("gm-ran") || !w.Server.Contains("gm-out-42") || !w.Server.Contains("Exit Code: 7") {
			c.Failf("the commands ran = %v, their results reached the model = %v, %v; want true", w.Exists("gm-ran"),
				w.Server.Contains("gm-out-42"), w.Server.Contains("Exit Code: 7"))
		}
		if n := len(Turns(w.Server)); n != 3 {
			c.Failf("model turns = %d, want 3: two tool calls and the answer", n)
		}
		if strings.Contains(s.Stderr, "Hook system message") || !strings.Contains(s.Stdout, GeminiMatrixFinal) {
			c.Failf("the user was shown a hook message, or not the final answer")
		}
		return nil
	},
}

// geminiFailures runs a session in which a report or fail_open hook
// crashes on every event, for each error visibility the table supports
// there: the session goes on (the command runs, no extra turn), Gemini CLI
// shows the user each diagnostic on stderr, and only the model_and_user
// ones reach the model.
var geminiFailures = &Scenario{
	Name: "gemini-failures", Test: "TestMatrixGemini/failures", Harnesses: []string{"gemini"},
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{fakemodel.Run("touch gm-ran"), fakemodel.Say(GeminiMatrixFinal)}
	},
	Play: func(w *World, c *Check) error {
		hooks := []MatrixHook{
			{ID: "start-report-user", Subject: plan.SubjectSession, Phase: plan.PhaseStart, Effect: plan.EffectObserve, Policy: plan.PolicyReport, Visibility: plan.VisibilityUser},
			{ID: "start-report-model", Subject: plan.SubjectSession, Phase: plan.PhaseStart, Effect: plan.EffectObserve, Policy: plan.PolicyReport, Visibility: plan.VisibilityModelAndUser},
			{ID: "prompt-report-user", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectObserve, Policy: plan.PolicyReport, Visibility: plan.VisibilityUser},
			{ID: "prompt-open-model", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectAddContext, Policy: plan.PolicyFailOpen, Visibility: plan.VisibilityModelAndUser},
			{ID: "pre-report-user", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectObserve, Policy: plan.PolicyReport, Visibility: plan.VisibilityUser, Tools: "run_shell_command"},
			{ID: "pre-open-user", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailOpen, Visibility: plan.VisibilityUser, Tools: "run_shell_command"},
			{ID: "post-report-model", Subject: plan.SubjectToolCall, Phase: plan.PhaseAfter, Effect: plan.EffectObserve, Policy: plan.PolicyReport, Visibility: plan.VisibilityModelAndUser, Tools: "run_shell_command"},
			{ID: "post-open-user", Subject: plan.SubjectToolCall, Phase: plan.PhaseAfter, Effect: plan.EffectAddContext, Policy: plan.PolicyFailOpen, Visibility: plan.VisibilityUser, Tools: "run_shell_command"},
			{ID: "stop-report-user", Subject: plan.SubjectWorkflow, Phase: plan.PhaseStop, Effect: plan.EffectObserve, Policy: plan.PolicyReport, Visibility: plan.VisibilityUser},
			{ID: "stop-open-user", Subject: plan.SubjectWorkflow, Phase: plan.PhaseStop, Effect: plan.EffectContinueWorkflow, Policy: plan.PolicyFailOpen, Visibility: plan.VisibilityUser},
			{ID: "end-report-user", Subject: plan.SubjectSession, Phase: plan.PhaseEnd, Effect: plan.EffectObserve, Policy: plan.PolicyReport, Visibility: plan.VisibilityUser},
		}
		for i := range hooks {
			hooks[i].Exit = 3
		}
		s, ok, err := runMatrix(w, c, GeminiMatrixID, GeminiMatrixPkg, GeminiMatrixFiles(hooks), "Run the command you are given.")
		if !ok {
			return err
		}
		if !w.Exists("gm-ran") || len(Turns(w.Server)) != 2 {
			c.Failf("the command ran = %v, model turns = %d; want true, 2: no failure here blocks or asks for a pass",
				w.Exists("gm-ran"), len(Turns(w.Server)))
		}
		for _, h := range hooks {
			diag := GeminiDiag(h.ID, h.Policy)
			if !strings.Contains(s.Stderr, diag+"\n  stderr: "+MatrixStderr) {
				c.Failf("%s: Gemini CLI did not show the user %q with the handler's stderr", h.ID, diag)
			}
			for _, b := range GeminiModelChannel(w.Server, h) {
				c.Failf("%s", b)
			}
		}
		return nil
	},
}
