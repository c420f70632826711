package scenario

import (
	"fmt"
	"strings"

	"dalo/plan"
)

// claudeFailures runs a session in which hooks crash under report and
// fail_open on every row, with error_visibility user and model_and_user.
// Every action goes on (the prompt reaches the model, the commands run,
// the stop asks for no other pass); the user is shown every diagnostic
// with the handler's stderr; the model reads the model_and_user
// diagnostics, as context, and none of the user ones; no handler's stderr
// reaches the model.
var claudeFailures = &Scenario{
	Name: "claude-failures", Test: "TestMatrixClaude/failures", Harnesses: []string{"claude"},
	Script: ClaudeMatrixScript,
	Play: func(w *World, c *Check) error {
		type failing struct {
			event string
			hook  MatrixHook
		}
		var fs []failing
		add := func(event, effect, policy, visibility string, exit int) {
			for _, e := range ClaudeMatrixEvents {
				if e.Event == event {
					id := fmt.Sprintf("%s-%s-%s", event, policy, visibility)
					fs = append(fs, failing{event, MatrixHook{ID: id, Subject: e.Subject, Phase: e.Phase, Effect: effect,
						Policy: policy, Visibility: visibility, Tools: e.Tools, Exit: exit}})
				}
			}
		}
		add("SessionStart", plan.EffectObserve, plan.PolicyReport, plan.VisibilityUser, 21)
		add("SessionStart", plan.EffectAddContext, plan.PolicyFailOpen, plan.VisibilityUser, 22)
		add("SessionStart", plan.EffectAddContext, plan.PolicyFailOpen, plan.VisibilityModelAndUser, 23)
		add("UserPromptSubmit", plan.EffectAddContext, plan.PolicyFailOpen, plan.VisibilityUser, 24)
		add("UserPromptSubmit", plan.EffectAddContext, plan.PolicyFailOpen, plan.VisibilityModelAndUser, 25)
		add("PreToolUse", plan.EffectObserve, plan.PolicyReport, plan.VisibilityModelAndUser, 26)
		add("PostToolUse", plan.EffectAddContext, plan.PolicyFailOpen, plan.VisibilityUser, 27)
		add("PostToolUse", plan.EffectAddContext, plan.PolicyFailOpen, plan.VisibilityModelAndUser, 28)
		add("PostToolUseFailure", plan.EffectObserve, plan.PolicyReport, plan.VisibilityUser, 29)
		add("PostToolUseFailure", plan.EffectObserve, plan.PolicyReport, plan.VisibilityModelAndUser, 30)
		add("PostToolUseFailure", plan.EffectAddContext, plan.PolicyFailOpen, plan.VisibilityUser, 31)
		add("PostToolUseFailure", plan.EffectAddContext, plan.PolicyFailOpen, plan.VisibilityModelAndUser, 32)
		add("Stop", plan.EffectObserve, plan.PolicyReport, plan.VisibilityUser, 33)
		add("Stop", plan.EffectContinueWorkflow, plan.PolicyFailOpen, plan.VisibilityUser, 34)
		var hooks []MatrixHook
		for _, f := range fs {
			hooks = append(hooks, f.hook)
		}
		const prompt = "Run the matrix commands, cm-failures-prompt."
		s, ok, err := runMatrix(w, c, ClaudeMatrixID, ClaudeMatrixPkg, ClaudeMatrixFiles(hooks), prompt)
		if !ok {
			return err
		}
		msgs := UserMessages(s.Stdout)
		recs, err := w.claudeTranscript()
		if err != nil {
			c.Failf("%v", err)
		}
		for _, f := range fs {
			h := f.hook
			diag := fmt.Sprintf("dalo: hook %s:%s/%s failed (%s): handler exited with status %d", ClaudeMatrixID, ClaudeMatrixPkg, h.ID, h.Policy, h.Exit)
			// The user channel. SessionStart's systemMessage is not a
			// line of the headless stream: Claude keeps it in the
			// transcript as a hook_system_message, the record the stream
			// shows for the other events (finding 36), and the stream
			// carries the hook's answer.
			if f.event == "SessionStart" {
				found := false
				for _, a := range attachments(recs, "hook_system_message") {
					text, _ := a["content"].(string)
					if a["hookEvent"] == "SessionStart" && strings.Contains(text, diag) && strings.Contains(text, "  stderr: "+MatrixStderr) {
						found = true
					}
				}
				if !found {
					c.Failf("%s: the transcript holds no SessionStart hook_system_message with %q and its stderr", h.ID, diag)
				}
				if !hookResponse(s, "SessionStart", diag) {
					c.Failf("%s: the stream holds no SessionStart hook_response with %q", h.ID, diag)
				}
			} else {
				says := f.event
				if h.Tools != "" {
					says += ":" + h.Tools
				}
				says += " says: "
				if _, ok := Shown(msgs, says+diag, says+"  stderr: "+MatrixStderr); !ok {
					c.Failf("%s: the user was not shown %q with its stderr (shown: %+v)", h.ID, says+diag, msgs)
				}
			}
			checkModelChannel(w, c, h, ClaudeMatrixID, ClaudeMatrixPkg, diag)
		}
		if w.Server.Contains(MatrixStderr) {
			c.Failf("a handler's stderr reached the model")
		}
		// report and fail_open leave every action unchanged.
		if !w.Server.Contains(prompt) {
			c.Failf("the prompt did not reach the model")
		}
		claudeRan(w, c, s)
		return nil
	},
}

// checkModelChannel fails c unless the model read the failure of matrix
// hook h (of source id, package pkg) exactly when its visibility is
// model_and_user, naming its exit status; diag is what the user is shown.
func checkModelChannel(w *World, c *Check, h MatrixHook, id, pkg, diag string) {
	modelDiag := "[" + id + ":" + pkg + "/" + h.ID + "] This hook failed: "
	switch h.Visibility {
	case plan.VisibilityModelAndUser:
		found := false
		for _, q := range w.Server.Requests() {
			if text := ModelText(q, modelDiag); text != "" {
				found = true
				if !strings.Contains(text, fmt.Sprintf("status %d", h.Exit)) {
					c.Failf("%s: the model read %q, want the failure with status %d", h.ID, text, h.Exit)
				}
				break
			}
		}
		if !found {
			c.Failf("%s: the diagnostic %q... did not reach the model", h.ID, modelDiag)
		}
	case plan.VisibilityUser:
		if w.Server.Contains(pkg+"/"+h.ID+"]") || w.Server.Contains(diag) {
			c.Failf("%s: a user-only diagnostic reached the model", h.ID)
		}
	}
}
