package scenario

import (
	"path/filepath"
	"strings"

	"dalo/internal/fakemodel"
	"dalo/plan"
)

// geminiFailClosed runs a session in which fail_closed hooks crash: a
// gate before each of two commands, one per error visibility, and a
// continuation on the first stop. Neither command runs; the model reads
// the generic reason for the user-only gate and the diagnostic for the
// other; the user is shown both; the crashed stop hook asks for one more
// pass, whose prompt is its diagnostic, and the next stop ends the
// session.
var geminiFailClosed = &Scenario{
	Name: "gemini-fail-closed", Test: "TestMatrixGemini/fail_closed", Harnesses: []string{"gemini"},
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{fakemodel.Run("touch gm-a"), fakemodel.Run("touch gm-b"), fakemodel.Say(GeminiMatrixFinal)}
	},
	Play: func(w *World, c *Check) error {
		hooks := []MatrixHook{
			{ID: "pre-closed-user", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailClosed, Visibility: plan.VisibilityUser,
				Tools: "run_shell_command", When: "*gm-a*", Exit: 3},
			{ID: "pre-closed-model", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailClosed, Visibility: plan.VisibilityModelAndUser,
				Tools: "run_shell_command", When: "*gm-b*", Exit: 3},
			{ID: "stop-closed-model", Subject: plan.SubjectWorkflow, Phase: plan.PhaseStop, Effect: plan.EffectContinueWorkflow, Policy: plan.PolicyFailClosed, Visibility: plan.VisibilityModelAndUser,
				When: `*'"stop_hook_active":false'*`, Exit: 3},
		}
		s, ok, err := runMatrix(w, c, GeminiMatrixID, GeminiMatrixPkg, GeminiMatrixFiles(hooks), "Run the commands you are given.")
		if !ok {
			return err
		}
		if w.Exists("gm-a") || w.Exists("gm-b") {
			c.Failf("a fail_closed gate crashed, and its command ran (gm-a %v, gm-b %v)", w.Exists("gm-a"), w.Exists("gm-b"))
		}
		if !w.Server.Contains("This hook failed; the details were shown to the user. The action was blocked (fail_closed).") {
			c.Failf("user-only fail_closed gate: the generic reason did not reach the model")
		}
		for _, h := range hooks {
			diag := GeminiDiag(h.ID, h.Policy)
			if !strings.Contains(s.Stderr, "Hook system message: "+diag+"\n  stderr: "+MatrixStderr) {
				c.Failf("%s: Gemini CLI did not show the user %q", h.ID, diag)
			}
			for _, b := range GeminiModelChannel(w.Server, h) {
				c.Failf("%s", b)
			}
		}
		if n := len(Turns(w.Server)); n != 4 {
			c.Failf("model turns = %d, want 4: two calls, the answer, and the one pass the crashed stop hook asked for", n)
		}
		if got := len(w.MatrixRuns("stop-closed-model")); got != 2 {
			c.Failf("the stop hook ran %d times, want 2", got)
		}
		return nil
	},
}

// geminiModelEvents runs a session with hooks of the user's own on the
// events the table lists as unmapped that fire in every turn: BeforeModel
// and AfterModel around each model request, BeforeToolSelection before the
// model chooses a tool. Each ran, so the table's reasons speak of events
// this version has.
var geminiModelEvents = &Scenario{
	Name: "gemini-model-events", Test: "TestMatrixGemini/model_events", Harnesses: []string{"gemini"},
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{fakemodel.Run("echo hi"), fakemodel.Say("Done.")}
	},
	Play: func(w *World, c *Check) error {
		settings, err := w.hooksFileJSON()
		if err != nil {
			return err
		}
		hooks := map[string]any{}
		events := []string{"BeforeModel", "AfterModel", "BeforeToolSelection"}
		for _, ev := range events {
			hooks[ev] = []any{map[string]any{"hooks": []any{map[string]any{
				"type": "command", "command": "touch " + filepath.Join(w.Out, ev), "timeout": 10000}}}}
		}
		settings["hooks"] = hooks
		if err := w.writeJSON(w.HooksFile(), settings); err != nil {
			return err
		}
		s, err := w.Run("Run the command you are given.")
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}
		for _, ev := range events {
			if !fileExists(filepath.Join(w.Out, ev)) {
				c.Failf("%s: the user's hook did not run", ev)
			}
		}
		return nil
	},
}

// geminiPromptClosed runs a session whose fail_closed prompt gate, with
// error_visibility model_and_user, crashes: the prompt never reaches the
// model (no model request at all), so the diagnostic reaches the user
// only, as the block reason, with the handler's stderr.
var geminiPromptClosed = &Scenario{
	Name: "gemini-prompt-closed", Test: "TestMatrixGemini/prompt_closed_model", Harnesses: []string{"gemini"},
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{fakemodel.Run("touch gm-ran"), fakemodel.Say(GeminiMatrixFinal)}
	},
	Play: func(w *World, c *Check) error {
		h := MatrixHook{ID: "prompt-closed-model", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailClosed,
			Visibility: plan.VisibilityModelAndUser, Exit: 3}
		if _, err := w.InstallSource(GeminiMatrixID, GeminiMatrixPkg, GeminiMatrixFiles([]MatrixHook{h})); err != nil {
			return err
		}
		s, err := w.Run("Run the command you are given, gm-closed-prompt.")
		c.Session = s
		w.logf("gemini exit: %v", err)
		if s.TimedOut {
			c.Failf("the session failed: %v", err)
			return nil
		}
		if n := len(w.Server.Requests()); n != 0 || w.Exists("gm-ran") {
			c.Failf("blocked prompt: %d model requests, the command ran = %v; want 0, false", n, w.Exists("gm-ran"))
		}
		if want := "[WARNING] Agent execution blocked: " + GeminiDiag(h.ID, h.Policy) + "\n  stderr: " + MatrixStderr; !strings.Contains(s.Stderr, want) {
			c.Failf("blocked prompt: Gemini CLI did not show the user %q", want)
		}
		if n := len(w.MatrixRuns(h.ID)); n != 1 {
			c.Failf("the prompt gate ran %d times, want 1", n)
		}
		return nil
	},
}
