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

// The Claude matrix: sessions of Claude Code that prove the claims of its
// table on payload fields, outputs that print nothing and failure
// deliveries. Each installs a kit of its own, built from MatrixHook rows,
// and runs one session that serves several claims.
const (
	ClaudeMatrixID    = "cm"
	ClaudeMatrixPkg   = "claude-matrix"
	ClaudeMatrixFinal = "CM-FINAL-ANSWER-6b1e"
)

// ClaudeMatrixFiles is the author source of the Claude matrix kit holding
// hooks.
func ClaudeMatrixFiles(hooks []MatrixHook) map[string]string {
	return MatrixFiles(ClaudeMatrixPkg, "Probes of the Claude Code table's claims.", hooks)
}

// A MatrixEvent is a row of a table, with its native event, the portable
// fields its payload holds (events.<E>.payload) and its tool matcher.
type MatrixEvent struct {
	Subject, Phase, Event, Tools string
	Fields                       []string
}

// ClaudeMatrixEvents are the rows of the Claude Code table.
var ClaudeMatrixEvents = []MatrixEvent{
	{plan.SubjectSession, plan.PhaseStart, "SessionStart", "", []string{"session.id", "session.cwd", "transcript.path"}},
	{plan.SubjectPrompt, plan.PhaseBefore, "UserPromptSubmit", "", []string{"session.id", "session.cwd", "transcript.path", "session.permission_mode", "prompt.text"}},
	{plan.SubjectToolCall, plan.PhaseBefore, "PreToolUse", "Bash", []string{"session.id", "session.cwd", "transcript.path", "session.permission_mode", "tool.name", "tool.call_id"}},
	{plan.SubjectToolCall, plan.PhaseAfter, "PostToolUse", "Bash", []string{"session.id", "session.cwd", "transcript.path", "session.permission_mode", "tool.name", "tool.call_id"}},
	{plan.SubjectToolCall, plan.PhaseFailure, "PostToolUseFailure", "Bash", []string{"session.id", "session.cwd", "transcript.path", "session.permission_mode", "tool.name", "tool.call_id"}},
	{plan.SubjectWorkflow, plan.PhaseStop, "Stop", "", []string{"session.id", "session.cwd", "transcript.path", "session.permission_mode", "workflow.last_message", "workflow.already_continued"}},
	{plan.SubjectSession, plan.PhaseEnd, "SessionEnd", "", []string{"session.id", "session.cwd", "transcript.path", "session.end_reason"}},
}

// ClaudeMatrixScript is the model's turn in the sessions that need no
// other tool: a shell call that succeeds, one that fails
// (PostToolUseFailure), and the final answer.
func ClaudeMatrixScript(*World) fakemodel.Script {
	return fakemodel.Script{
		fakemodel.Run("echo cm-out-$((6*7)); touch cm-ran"),
		fakemodel.Run("exit 7"),
		fakemodel.Say(ClaudeMatrixFinal),
	}
}

// claudeKeys is where the table says Claude Code's payload holds each field.
var claudeKeys = map[string]string{
	"session.id": "session_id", "session.cwd": "cwd", "transcript.path": "transcript_path",
	"session.permission_mode": "permission_mode", "prompt.text": plan.SubjectPrompt,
	"tool.name": "tool_name", "tool.call_id": "tool_use_id",
	"workflow.last_message": "last_assistant_message", "workflow.already_continued": "stop_hook_active",
	"session.end_reason": "reason",
}

// streamSessionID returns the session id Claude Code's stream-json output
// names, read from the harness's output rather than from any hook.
func streamSessionID(s Session) string {
	for _, line := range strings.Split(s.Stdout, "\n") {
		var rec struct {
			Type      string `json:"type"`
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Type == "result" {
			return rec.SessionID
		}
	}
	return ""
}

// claudeTranscript returns the records of the session transcript Claude
// Code keeps under $CLAUDE_CONFIG_DIR/projects: what an interactive session
// (or a resumed one) shows the user.
func (w *World) claudeTranscript() ([]map[string]any, error) {
	paths, _ := filepath.Glob(filepath.Join(w.Home, ".claude", "projects", "*", "*.jsonl"))
	if len(paths) != 1 {
		return nil, fmt.Errorf("session transcripts: %q, want one", paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		return nil, err
	}
	var recs []map[string]any
	for _, line := range strings.Split(string(b), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) == nil {
			recs = append(recs, r)
		}
	}
	return recs, nil
}

// attachments returns the transcript's attachments of type typ.
func attachments(recs []map[string]any, typ string) []map[string]any {
	var as []map[string]any
	for _, r := range recs {
		if a, _ := r["attachment"].(map[string]any); a != nil && a["type"] == typ {
			as = append(as, a)
		}
	}
	return as
}

// messagePosts counts the model requests that asked Claude's model for a
// turn.
func messagePosts(srv *fakemodel.Server) int {
	n := 0
	for _, q := range srv.Requests() {
		if q.Method == "POST" && strings.HasSuffix(q.Path, "/messages") {
			n++
		}
	}
	return n
}

// hookResponse reports whether Claude's stream holds a hook_response
// record of event whose output holds text.
func hookResponse(s Session, event, text string) bool {
	for _, line := range strings.Split(s.Stdout, "\n") {
		var rec struct {
			Type, Subtype, Output string
			HookEvent             string `json:"hook_event"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec.Type == "system" && rec.Subtype == "hook_response" && rec.HookEvent == event {
			var out struct{ SystemMessage string }
			if json.Unmarshal([]byte(rec.Output), &out) == nil && strings.Contains(out.SystemMessage, text) {
				return true
			}
		}
	}
	return false
}

// claudeRan checks that the commands of ClaudeMatrixScript ran, their
// results reached the model, and the model was asked three times (no
// other pass), the last answer ending the session.
func claudeRan(w *World, c *Check, s Session) {
	if !w.Exists("cm-ran") || !strings.Contains(ToolResult(w.Server, CallID("claude", 0)), "cm-out-42") {
		c.Failf("the shell command ran = %v, its result %q; want true and its output cm-out-42",
			w.Exists("cm-ran"), ToolResult(w.Server, CallID("claude", 0)))
	}
	if got := ToolResult(w.Server, CallID("claude", 1)); !strings.Contains(got, "Exit code 7") {
		c.Failf("the failing command's result = %q, want its error", got)
	}
	if n := messagePosts(w.Server); n != 3 {
		c.Failf("model requests = %d, want 3: two tool calls and the answer (no other pass)", n)
	}
	if !strings.Contains(s.Stdout, ClaudeMatrixFinal) {
		c.Failf("the session's result does not hold the final answer %s", ClaudeMatrixFinal)
	}
}

// claudeUnchanged checks that the session of ClaudeMatrixScript went on as
// it does without hooks: the prompt reached the model, the commands ran
// (claudeRan), no hook context reached the model, and the user was shown
// nothing from a hook.
func claudeUnchanged(w *World, c *Check, s Session, prompt string) {
	if !w.Server.Contains(prompt) {
		c.Failf("the prompt did not reach the model")
	}
	claudeRan(w, c, s)
	if w.Server.Contains("hook additional context") {
		c.Failf("hook context reached the model")
	}
	if msgs := UserMessages(s.Stdout); len(msgs) != 0 {
		c.Failf("the user was shown %+v, want nothing", msgs)
	}
	recs, err := w.claudeTranscript()
	if err != nil {
		c.Failf("%v", err)
	}
	for _, typ := range []string{"hook_system_message", "hook_additional_context", "hook_blocking_error"} {
		if as := attachments(recs, typ); len(as) != 0 {
			c.Failf("the transcript holds %d %s attachments, want none: %v", len(as), typ, as)
		}
	}
}

// runMatrix installs the matrix kit of hooks (files) and runs prompt in a
// session, failing c when the session fails; ok says it ran.
func runMatrix(w *World, c *Check, id, pkg string, files map[string]string, prompt string) (s Session, ok bool, err error) {
	w.StreamJSON = w.Harness == "claude"
	if _, err := w.InstallSource(id, pkg, files); err != nil {
		return Session{}, false, err
	}
	s, err = w.Run(prompt)
	c.Session = s
	if err != nil {
		c.Failf("the session failed: %v", err)
		return s, false, nil
	}
	return s, true, nil
}
