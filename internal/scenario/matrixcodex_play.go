package scenario

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"dalo/internal/fakemodel"
	"dalo/plan"
)

// realPath resolves symlinks in p, for comparing paths (a temp dir may be
// reached through a link).
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// codexFieldsNothing runs one app-server session in which a hook on every
// native event binds every field the table declares for it, and hooks on
// every row answer abstain, observe or allow. Each field is what the
// session had; each action goes on as without hooks: no hook run shows
// the user anything or adds context, the prompt and the command's output
// reach the model, the turn ends after the answer; and a skill the user
// put in $CODEX_HOME/skills reaches the model.
var codexFieldsNothing = &Scenario{
	Name: "codex-fields-nothing", Test: "TestMatrixCodex/fields_and_nothing", Harnesses: []string{"codex"},
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{fakemodel.Run("echo mxc-out-$((40+2))"), fakemodel.Say(CodexMatrixFinal)}
	},
	Play: func(w *World, c *Check) error {
		const prompt = "Run the matrix command, mxc-prompt-text."
		const skill = "MXC-CONFIG-HOME-SKILL-0c9b"
		hooks := append(append([]CodexMatrixHook{}, codexFieldHooks...), codexNothingHooks...)
		if _, err := w.InstallSource(CodexMatrixID, CodexMatrixPkg, CodexMatrixFiles(hooks...)); err != nil {
			return err
		}
		// config.skills[1]: a skill the user put in $CODEX_HOME/skills.
		if err := w.WriteFile(filepath.Join(w.Home, ".codex", "skills", "mxc-skill", "SKILL.md"),
			"---\nname: mxc-skill\ndescription: "+skill+"\n---\n\nA skill in the Codex config home.\n"); err != nil {
			return err
		}
		runs, s, err := w.AppServer(prompt)
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}
		codexFields(w, c, prompt)
		// Outputs that print nothing: each hook ran once, and no hook run
		// of any event showed anything or added context.
		for _, h := range codexNothingHooks {
			if n := len(w.CodexMatrixRuns(h.ID)); n != 1 {
				c.Failf("%s (%s): ran %d times, want 1", h.ID, h.Answer, n)
			}
		}
		events := map[string]bool{}
		for _, r := range runs {
			events[r.EventName] = true
			if r.Status != "completed" || len(r.Entries) != 0 {
				c.Failf("%s hook run: status %q, entries %+v; want completed with nothing shown or added", r.EventName, r.Status, r.Entries)
			}
			// dalo's entries run in Codex's turn, which waits for them
			// (no async: true); a Codex that says so says "sync".
			if r.ExecutionMode != "" && r.ExecutionMode != "sync" {
				c.Failf("%s hook run: execution mode %q, want sync: Codex does not wait for an async hook", r.EventName, r.ExecutionMode)
			}
		}
		for _, e := range []string{"sessionStart", "userPromptSubmit", "preToolUse", "postToolUse", plan.PhaseStop} {
			if !events[e] {
				c.Failf("no %s hook run", e)
			}
		}
		// The harness went on as without hooks: the prompt and the
		// command's output reached the model, which answered once more.
		if !w.Server.Contains(prompt) || !w.Server.Contains("mxc-out-42") {
			c.Failf("prompt reached the model = %v, command output reached it = %v; want true, true",
				w.Server.Contains(prompt), w.Server.Contains("mxc-out-42"))
		}
		if n := len(w.Server.Requests()); n != 2 {
			c.Failf("model requests = %d, want 2: the shell call and the answer", n)
		}
		if !w.Server.Contains(skill) {
			c.Failf("the skill in $CODEX_HOME/skills did not reach the model")
		}
		return nil
	},
}

// codexFields checks what each of codexFieldHooks was given: one session
// id, the project dir, a transcript file named for the session, the
// permission mode Codex runs in, the prompt, the tool and its call id, the
// model's last message, an end reason.
func codexFields(w *World, c *Check, prompt string) {
	var sessionID string
	for _, h := range codexFieldHooks {
		runs := w.CodexMatrixRuns(h.ID) // one run each: one shell call
		if len(runs) != 1 || len(runs[0]) != len(h.Inputs) {
			c.Failf("%s: bound inputs per run = %q, want one run of %d inputs", h.ID, runs, len(h.Inputs))
			continue
		}
		got := map[string]string{}
		for i, in := range h.Inputs {
			got[strings.SplitN(in, "=", 3)[2]] = runs[0][i]
		}
		w.logf("%s: %q", h.ID, got)
		if sessionID == "" {
			sessionID = got["session.id"]
		}
		if got["session.id"] == "" || got["session.id"] != sessionID {
			c.Failf("%s: session.id = %q, want the session's id %q on every event", h.ID, got["session.id"], sessionID)
		}
		if realPath(got["session.cwd"]) != realPath(w.Work) {
			c.Failf("%s: session.cwd = %q, want the project dir %q", h.ID, got["session.cwd"], w.Work)
		}
		tp := got["transcript.path"]
		if fi, err := os.Stat(tp); err != nil || !fi.Mode().IsRegular() || !strings.Contains(filepath.Base(tp), sessionID) ||
			!strings.HasPrefix(realPath(tp), realPath(filepath.Join(w.Home, ".codex"))+string(filepath.Separator)) {
			c.Failf("%s: transcript.path = %q (%v), want a file in $CODEX_HOME named for session %s", h.ID, tp, err, sessionID)
		}
		if m, ok := got["session.permission_mode"]; ok && m != "bypassPermissions" {
			c.Failf("%s: session.permission_mode = %q, want bypassPermissions (no approvals, no sandbox)", h.ID, m)
		}
		switch h.ID {
		case "prompt-fields":
			if got["prompt.text"] != prompt {
				c.Failf("prompt.text = %q, want %q", got["prompt.text"], prompt)
			}
		case "pre-fields", "post-fields":
			if got["tool.name"] != "Bash" || got["tool.call_id"] != CallID("codex", 0) {
				c.Failf("%s: tool.name, tool.call_id = %q, %q; want Bash, %s", h.ID, got["tool.name"], got["tool.call_id"], CallID("codex", 0))
			}
		case "stop-fields":
			if got["workflow.last_message"] != CodexMatrixFinal || got["workflow.already_continued"] != "false" {
				c.Failf("workflow.last_message, already_continued = %q, %q; want %q, false",
					got["workflow.last_message"], got["workflow.already_continued"], CodexMatrixFinal)
			}
		case "end-fields":
			if got["session.end_reason"] == "" {
				c.Failf("session.end_reason is empty")
			}
		}
	}
	// SessionStart's permission_mode, which no row binds: the key the
	// table names is in its payload, with the same mode.
	var start struct {
		Mode *string `json:"permission_mode"`
	}
	if err := json.Unmarshal([]byte(w.Output("start-fields.stdin")), &start); err != nil || start.Mode == nil || *start.Mode != "bypassPermissions" {
		c.Failf("SessionStart payload permission_mode = %v (%v), want bypassPermissions", start.Mode, err)
	}
}

// codexUserFailures runs one app-server session of two turns. The first
// prompt's fail_closed gate (model_and_user) fails: the prompt is blocked,
// its hook run shows the user the diagnostic as feedback and a warning. In
// the second turn hooks fail under fail_open and report on session start,
// the prompt, after the tool call and on stop: each action goes on; a
// diagnostic with visibility user is shown the user as a warning of that
// event's hook run and never reaches the model; one with model_and_user
// reaches both.
var codexUserFailures = &Scenario{
	Name: "codex-user-failures", Test: "TestMatrixCodex/user_failures", Harnesses: []string{"codex"},
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{fakemodel.Run("touch mxc-pre-crash; echo mxc-post-crash-$((40+2))"), fakemodel.Say("Done.")}
	},
	Play: func(w *World, c *Check) error {
		if _, err := w.InstallSource(CodexMatrixID, CodexMatrixPkg, CodexMatrixFiles(codexFailHooks...)); err != nil {
			return err
		}
		runs, s, err := w.AppServer("Please handle mxc-prompt-closed-crash now.", "Run the matrix commands, mxc-prompt-crash.")
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}
		event := map[string]string{"session/start": "sessionStart", "prompt/before": "userPromptSubmit",
			"tool_call/before": "preToolUse", "tool_call/after": "postToolUse", "workflow/stop": plan.PhaseStop}
		for _, h := range codexFailHooks {
			ev, ok := event[h.Subject+"/"+h.Phase]
			if !ok {
				continue // session/end: below
			}
			found := false
			for _, r := range Event(runs, ev) {
				if text, ok := r.Entry("warning", codexDiag(h), "  stderr: "+CodexMatrixStderr); ok {
					found = true
					w.logf("user channel, %s: %q", ev, text)
				}
			}
			if !found {
				c.Failf("%s (%s, %s): no %s hook run showed the user a warning %q with the handler's stderr", h.ID, h.Policy, h.Visibility, ev, codexDiag(h))
			}
			switch {
			case h.ID == "prompt-closed-model":
				// A blocked prompt asks the model nothing.
			case h.Visibility == plan.VisibilityUser && w.Server.Contains(codexModelDiag(h)):
				c.Failf("%s, user: its diagnostic reached the model", h.ID)
			case h.Visibility == plan.VisibilityModelAndUser:
				var text string
				for _, q := range w.Server.Requests() {
					if text = ModelText(q, codexModelDiag(h)); text != "" {
						break
					}
				}
				if status := fmt.Sprintf("status %d", h.Exit); !strings.Contains(text, status) {
					c.Failf("%s, model_and_user: the model read %q, want the diagnostic naming %s", h.ID, text, status)
				}
			}
		}
		if w.Server.Contains(CodexMatrixStderr) {
			c.Failf("a handler's stderr reached the model")
		}
		codexBlockedThenOn(w, c, runs)
		return nil
	},
}

// codexBlockedThenOn checks the two turns of codexUserFailures: the first
// prompt's run blocked with the diagnostic as feedback and nothing of it
// reaching the model; then each action unchanged by fail_open and report,
// and the session end hook run once.
func codexBlockedThenOn(w *World, c *Check, runs []HookRun) {
	var closed CodexMatrixHook
	for _, h := range codexFailHooks {
		if h.ID == "prompt-closed-model" {
			closed = h
		}
	}
	prompts := Event(runs, "userPromptSubmit")
	if len(prompts) != 2 || prompts[0].Status != "blocked" || prompts[1].Status == "blocked" {
		c.Failf("userPromptSubmit hook runs = %+v, want 2: the first blocked, the second not", prompts)
	} else if text, ok := prompts[0].Entry("feedback", codexDiag(closed), "  stderr: "+CodexMatrixStderr); !ok {
		c.Failf("blocked prompt: the user was not shown the diagnostic as feedback")
	} else {
		w.logf("user channel, blocked prompt (feedback): %q", text)
	}
	if w.Server.Contains("mxc-prompt-closed-crash") {
		c.Failf("the blocked prompt reached the model")
	}
	// fail_open and report leave each action unchanged: the second prompt
	// reached the model, the command ran and its output reached the
	// model, and Stop asked for no other pass.
	if !w.Server.Contains("mxc-prompt-crash") || !w.Exists("mxc-pre-crash") || !w.Server.Contains("mxc-post-crash-42") {
		c.Failf("prompt reached the model = %v, command ran = %v, its output reached the model = %v; want true, true, true",
			w.Server.Contains("mxc-prompt-crash"), w.Exists("mxc-pre-crash"), w.Server.Contains("mxc-post-crash-42"))
	}
	if n := len(w.Server.Requests()); n != 2 {
		c.Failf("model requests = %d, want 2: the shell call and the answer (no other pass after Stop)", n)
	}
	// SessionEnd: the handler ran and failed; Codex's app server sends no
	// hook run for it (finding 35), so its user channel stays the
	// documented one. Logged, so that a change shows.
	if n := len(w.CodexMatrixRuns("end-report-user")); n != 1 {
		c.Failf("end-report-user: ran %d times, want 1", n)
	}
	w.logf("sessionEnd hook runs: %+v", Event(runs, "sessionEnd"))
}
