//go:build unix

package live

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
)

// The Claude matrix: live tests that prove the claims of the Claude Code
// 2.1.233 table (providers/claude/2.1.233.cue) which rested on a recording
// or on documentation only. Each subtest of TestMatrixClaude installs a kit
// of its own, built from cmHook rows, and runs one session that serves
// several claims.

const (
	cmID          = "cm"
	cmPkg         = "claude-matrix"
	cmFinal       = "CM-FINAL-ANSWER-6b1e"
	cmStderr      = "CM-HANDLER-STDERR-0d93"
	cmWebDeny     = "CM-WEB-DENY-f27a"
	cmNotebookOut = "CM-NOTEBOOK-CELL-84c0"
)

// A cmHook is one hook of a matrix kit, with a tool of the same id. fields
// are the event fields it binds, each to an input named after the field
// (dots as underscores), passed as its argv in that order; result is what
// the handler prints after recording its argv and stdin, or, when exit is
// set, the handler writes cmStderr to stderr and exits with that status.
type cmHook struct {
	id, subject, phase, effect, policy, visibility, tools string
	fields                                                []string
	result                                                string
	exit                                                  int
	// when, a shell case pattern, limits the result (or the crash) to a
	// payload it matches; on any other the handler abstains.
	when string
}

// cmFieldTypes is the type of each portable field that is not a string
// (draft 0.1, Hooks).
var cmFieldTypes = map[string]string{
	"session.cwd": "path", "transcript.path": "path", "workflow.already_continued": "boolean",
}

// cmFiles returns the author source of package cmPkg holding hooks. Each
// handler appends its argv, each value NUL-terminated, then "--", to
// $LIVE_OUT/<id>.argv, and its stdin on one line to $LIVE_OUT/<id>.stdin.
func cmFiles(hooks []cmHook) map[string]string {
	return matrixFiles(cmPkg, "Probes of the Claude Code table's claims.", hooks)
}

// matrixFiles is cmFiles for the package name, with its description.
func matrixFiles(name, description string, hooks []cmHook) map[string]string {
	k := kit{name: name, description: description}
	for _, h := range hooks {
		var inputs []string
		for _, f := range h.fields {
			typ := cmFieldTypes[f]
			if typ == "" {
				typ = "string"
			}
			inputs = append(inputs, strings.ReplaceAll(f, ".", "_")+"="+typ+"="+f)
		}
		act := "echo '" + h.result + "'"
		if h.exit != 0 {
			act = fmt.Sprintf("echo '%s' >&2; exit %d", cmStderr, h.exit)
		}
		if h.when != "" {
			act = "case \"$in\" in\n" + h.when + ") " + act + " ;;\n*) echo '{\"kind\":\"abstain\"}' ;;\nesac"
		}
		k.hooks = append(k.hooks, kitHook{id: h.id, subject: h.subject, phase: h.phase, effect: h.effect,
			policy: h.policy, visibility: h.visibility, tools: toolList(h.tools), inputs: inputs, env: []string{"PATH", "LIVE_OUT"},
			handler: "#!/bin/sh\nin=$(cat)\n" +
				"printf '%s\\000' \"$@\" -- >> \"$LIVE_OUT/" + h.id + ".argv\"\n" +
				"printf '%s' \"$in\" | tr -d '\\n' >> \"$LIVE_OUT/" + h.id + ".stdin\"\n" +
				"echo >> \"$LIVE_OUT/" + h.id + ".stdin\"\n" + act + "\n"})
	}
	return k.files()
}

// cmRuns returns the argv of each run of hook id, in order, without empty
// values. Values are NUL-terminated: a prompt may hold newlines.
func (w *world) cmRuns(id string) [][]string {
	var runs [][]string
	var cur []string
	for _, v := range strings.Split(w.output(id+".argv"), "\x00") {
		if v == "--" {
			runs = append(runs, cur)
			cur = nil
			continue
		}
		if v != "" {
			cur = append(cur, v)
		}
	}
	return runs
}

// cmPayloads returns the native payload of each run of hook id, in order.
func (w *world) cmPayloads(id string) []map[string]any {
	w.t.Helper()
	var ps []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(w.output(id+".stdin")), "\n") {
		var p map[string]any
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			w.t.Errorf("hook %s: stdin %q is not the native payload: %v", id, line, err)
			continue
		}
		ps = append(ps, p)
	}
	return ps
}

// cmTranscript returns the records of the session transcript Claude Code
// keeps under $CLAUDE_CONFIG_DIR/projects: what an interactive session (or
// a resumed one) shows the user.
func (w *world) cmTranscript() []map[string]any {
	w.t.Helper()
	paths, _ := filepath.Glob(filepath.Join(w.home, ".claude", "projects", "*", "*.jsonl"))
	if len(paths) != 1 {
		w.t.Fatalf("session transcripts: %q, want one", paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		w.t.Fatal(err)
	}
	var recs []map[string]any
	for _, line := range strings.Split(string(b), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) == nil {
			recs = append(recs, r)
		}
	}
	return recs
}

// cmAttachments returns the transcript's attachments of type typ.
func cmAttachments(recs []map[string]any, typ string) []map[string]any {
	var as []map[string]any
	for _, r := range recs {
		if a, _ := r["attachment"].(map[string]any); a != nil && a["type"] == typ {
			as = append(as, a)
		}
	}
	return as
}

// cmPosts counts the model requests that asked for a turn.
func cmPosts(srv *fakemodel.Server) int {
	n := 0
	for _, q := range srv.Requests() {
		if q.Method == "POST" && strings.HasSuffix(q.Path, "/messages") {
			n++
		}
	}
	return n
}

// cmEvents are the rows of the table, with the native event, the portable
// fields its payload holds (providers/claude/2.1.233.cue events.<E>.payload)
// and its tool matcher.
var cmEvents = []struct {
	subject, phase, event, tools string
	fields                       []string
}{
	{"session", "start", "SessionStart", "", []string{"session.id", "session.cwd", "transcript.path"}},
	{"prompt", "before", "UserPromptSubmit", "", []string{"session.id", "session.cwd", "transcript.path", "session.permission_mode", "prompt.text"}},
	{"tool_call", "before", "PreToolUse", "Bash", []string{"session.id", "session.cwd", "transcript.path", "session.permission_mode", "tool.name", "tool.call_id"}},
	{"tool_call", "after", "PostToolUse", "Bash", []string{"session.id", "session.cwd", "transcript.path", "session.permission_mode", "tool.name", "tool.call_id"}},
	{"tool_call", "failure", "PostToolUseFailure", "Bash", []string{"session.id", "session.cwd", "transcript.path", "session.permission_mode", "tool.name", "tool.call_id"}},
	{"workflow", "stop", "Stop", "", []string{"session.id", "session.cwd", "transcript.path", "session.permission_mode", "workflow.last_message", "workflow.already_continued"}},
	{"session", "end", "SessionEnd", "", []string{"session.id", "session.cwd", "transcript.path", "session.end_reason"}},
}

// cmScript is the model's turn in the sessions that need no other tool:
// a shell call that succeeds, one that fails (PostToolUseFailure), and the
// final answer.
var cmScript = fakemodel.Script{
	fakemodel.Run("echo cm-out-$((6*7)); touch cm-ran"),
	fakemodel.Run("exit 7"),
	fakemodel.Say(cmFinal),
}

// TestMatrixClaude runs Claude Code 2.1.233 sessions that prove the table's
// payload fields, its outputs that print nothing, its failure deliveries
// and its native tool names.
func TestMatrixClaude(t *testing.T) {
	t.Parallel()
	harness(t, "claude")
	t.Run("fields", testMatrixClaudeFields)
	t.Run("outputs_nothing", testMatrixClaudeNothing)
	t.Run("failures", testMatrixClaudeFailures)
	t.Run("prompt_fail_closed", testMatrixClaudePromptClosed)
	t.Run("native_tools", testMatrixClaudeTools)
	t.Run("actor", testMatrixClaudeActor)
	t.Run("mcp_tool", testMatrixClaudeMCP)
}

// cmKeys is where the table says Claude Code's payload holds each field.
var cmKeys = map[string]string{
	"session.id": "session_id", "session.cwd": "cwd", "transcript.path": "transcript_path",
	"session.permission_mode": "permission_mode", "prompt.text": "prompt",
	"tool.name": "tool_name", "tool.call_id": "tool_use_id",
	"workflow.last_message": "last_assistant_message", "workflow.already_continued": "stop_hook_active",
	"session.end_reason": "reason",
}

// streamSessionID returns the session id Claude Code's stream-json output
// names, read from the harness's output rather than from any hook.
func streamSessionID(s session) string {
	for _, line := range strings.Split(s.stdout, "\n") {
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

// cmUnchanged asserts that the session of cmScript went on as it does
// without hooks: the prompt reached the model, the shell command ran and
// its output reached the model, the failing command's error did, the model
// was asked exactly three times (no other pass), no hook context reached
// the model, and the user was shown nothing from a hook.
func (w *world) cmUnchanged(s session, prompt string) {
	w.t.Helper()
	if !w.server.Contains(prompt) {
		w.failf(s, "the prompt did not reach the model")
	}
	if !w.exists("cm-ran") || !strings.Contains(toolResult(w.server, callID("claude", 0)), "cm-out-42") {
		w.failf(s, "the shell command ran = %v, its result %q; want true and its output cm-out-42",
			w.exists("cm-ran"), toolResult(w.server, callID("claude", 0)))
	}
	if got := toolResult(w.server, callID("claude", 1)); !strings.Contains(got, "Exit code 7") {
		w.failf(s, "the failing command's result = %q, want its error", got)
	}
	if n := cmPosts(w.server); n != 3 {
		w.failf(s, "model requests = %d, want 3: two tool calls and the answer", n)
	}
	if w.server.Contains("hook additional context") {
		w.failf(s, "hook context reached the model")
	}
	if msgs := w.userMessages(s); len(msgs) != 0 {
		w.failf(s, "the user was shown %+v, want nothing", msgs)
	}
	recs := w.cmTranscript()
	for _, typ := range []string{"hook_system_message", "hook_additional_context", "hook_blocking_error"} {
		if as := cmAttachments(recs, typ); len(as) != 0 {
			w.failf(s, "the transcript holds %d %s attachments, want none: %v", len(as), typ, as)
		}
	}
	if !strings.Contains(s.stdout, cmFinal) {
		w.failf(s, "the session's result does not hold the final answer %s", cmFinal)
	}
}

// testMatrixClaudeFields runs a session with an observer on every native
// event binding every field the table says its payload holds; each handler
// records what it was given. Each value is right: one non-empty session id
// (the one the stream names), the project dir, the transcript Claude wrote,
// the permission mode, the prompt, the tool and the ids the model gave its
// calls, the model's final text; each equals the payload key the table
// names. The observers print nothing: the session goes on unchanged.
func testMatrixClaudeFields(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "claude", cmScript)
	w.StreamJSON = true
	var hooks []cmHook
	for _, e := range cmEvents {
		hooks = append(hooks, cmHook{id: "f-" + e.event, subject: e.subject, phase: e.phase, effect: "observe",
			policy: "report", visibility: "user", tools: e.tools, fields: e.fields, result: `{"kind":"observe"}`})
	}
	w.installSource(cmID, cmPkg, cmFiles(hooks))
	const prompt = "Run the matrix commands, cm-fields-prompt."
	s := w.run(prompt)

	sid := streamSessionID(s)
	if sid == "" {
		w.failf(s, "the stream names no session id")
	}
	projects := filepath.Join(w.home, ".claude", "projects")
	calls := map[string][]string{
		"PreToolUse":         {callID("claude", 0), callID("claude", 1)},
		"PostToolUse":        {callID("claude", 0)},
		"PostToolUseFailure": {callID("claude", 1)},
	}
	var transcript string
	for _, e := range cmEvents {
		id := "f-" + e.event
		runs, payloads := w.cmRuns(id), w.cmPayloads(id)
		want := 1
		if c := calls[e.event]; c != nil {
			want = len(c)
		}
		if len(runs) != want || len(payloads) != want {
			w.failf(s, "%s observer: %d runs (%d payloads), want %d", e.event, len(runs), len(payloads), want)
			continue
		}
		for i, argv := range runs {
			if len(argv) != len(e.fields) {
				w.failf(s, "%s observer run %d: argv %q, want one value per field %q", e.event, i, argv, e.fields)
				continue
			}
			for j, f := range e.fields {
				got := argv[j]
				// The table's key: the bound value is the payload's.
				if pv, ok := payloads[i][cmKeys[f]]; !ok || fmt.Sprint(pv) != got {
					w.failf(s, "%s %s = %q, payload %s = %v (present %v)", e.event, f, got, cmKeys[f], pv, ok)
				}
				bad := ""
				switch f {
				case "session.id":
					if got == "" || got != sid {
						bad = "the session id the stream names, " + sid
					}
				case "session.cwd":
					if !samePath(got, w.work) {
						bad = "the project dir " + w.work
					}
				case "transcript.path":
					if transcript == "" {
						transcript = got
					}
					if got != transcript || filepath.Dir(filepath.Dir(got)) != projects || filepath.Base(got) != sid+".jsonl" {
						bad = "one path " + filepath.Join(projects, "<project>", sid+".jsonl")
					}
				case "session.permission_mode":
					if got != "default" { // -p --allowedTools (finding 8)
						bad = "default"
					}
				case "prompt.text":
					if got != prompt {
						bad = prompt
					}
				case "tool.name":
					if got != "Bash" {
						bad = "Bash"
					}
				case "tool.call_id":
					if got != calls[e.event][i] {
						bad = "the model's call id " + calls[e.event][i]
					}
				case "workflow.last_message":
					if got != cmFinal {
						bad = "the model's final text " + cmFinal
					}
				case "workflow.already_continued":
					if got != "false" {
						bad = "false"
					}
				case "session.end_reason":
					if got != "other" { // a headless run that ended normally (finding 7)
						bad = "other"
					}
				}
				if bad != "" {
					w.failf(s, "%s run %d: bound %s = %q, want %s", e.event, i, f, got, bad)
				}
			}
		}
	}
	// The transcript is the one Claude Code wrote for this session.
	if b, err := os.ReadFile(transcript); err != nil || !strings.Contains(string(b), "cm-fields-prompt") {
		w.failf(s, "transcript.path %q: the file does not hold the session's prompt (%v)", transcript, err)
	}
	w.cmUnchanged(s, prompt)
}

// cmEffects are the effects each row admits (cue/provider.cue
// #Combinations, the rows of the Claude table).
var cmEffects = map[string][]string{
	"SessionStart":       {"observe", "add_context"},
	"UserPromptSubmit":   {"observe", "add_context", "gate"},
	"PreToolUse":         {"observe", "add_context", "gate", "rewrite_input"},
	"PostToolUse":        {"observe", "add_context", "replace_output"},
	"PostToolUseFailure": {"observe", "add_context"},
	"Stop":               {"observe", "continue_workflow"},
	"SessionEnd":         {"observe"},
}

// testMatrixClaudeNothing runs a session in which a hook of every effect
// of every row abstains, and a gate before the prompt and one before each
// tool call allows: each handler ran, and the session went on exactly as
// without hooks (cmUnchanged): abstain and allow print nothing, and a
// portable allow grants nothing, so Claude's ordinary permission flow ran
// the allowed command.
func testMatrixClaudeNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "claude", cmScript)
	w.StreamJSON = true
	var hooks []cmHook
	runs := map[string]int{}
	for _, e := range cmEvents {
		n := 1
		switch e.event {
		case "PreToolUse":
			n = 2
		}
		for _, eff := range cmEffects[e.event] {
			h := cmHook{id: "abstain-" + e.event + "-" + eff, subject: e.subject, phase: e.phase, effect: eff,
				policy: "report", visibility: "user", tools: e.tools, result: `{"kind":"abstain"}`}
			hooks = append(hooks, h)
			runs[h.id] = n
			if eff == "gate" {
				h.id, h.result = "allow-"+e.event, `{"kind":"allow"}`
				hooks = append(hooks, h)
				runs[h.id] = n
			}
		}
	}
	w.installSource(cmID, cmPkg, cmFiles(hooks))
	const prompt = "Run the matrix commands, cm-nothing-prompt."
	s := w.run(prompt)
	for _, h := range hooks {
		if got := len(w.cmRuns(h.id)); got != runs[h.id] {
			w.failf(s, "hook %s ran %d times, want %d", h.id, got, runs[h.id])
		}
	}
	w.cmUnchanged(s, prompt)
}

// testMatrixClaudeFailures runs a session in which hooks crash under
// report and fail_open on every row, with error_visibility user and
// model_and_user. Every action goes on (the prompt reaches the model, the
// commands run, the stop asks for no other pass); the user is shown every
// diagnostic with the handler's stderr; the model reads the
// model_and_user diagnostics, as context, and none of the user ones; no
// handler's stderr reaches the model.
func testMatrixClaudeFailures(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "claude", cmScript)
	w.StreamJSON = true
	type failing struct {
		event string
		hook  cmHook
	}
	var fs []failing
	add := func(event, effect, policy, visibility string, exit int) {
		for _, e := range cmEvents {
			if e.event == event {
				id := fmt.Sprintf("%s-%s-%s", event, policy, visibility)
				fs = append(fs, failing{event, cmHook{id: id, subject: e.subject, phase: e.phase, effect: effect,
					policy: policy, visibility: visibility, tools: e.tools, exit: exit}})
			}
		}
	}
	add("SessionStart", "observe", "report", "user", 21)
	add("SessionStart", "add_context", "fail_open", "user", 22)
	add("SessionStart", "add_context", "fail_open", "model_and_user", 23)
	add("UserPromptSubmit", "add_context", "fail_open", "user", 24)
	add("UserPromptSubmit", "add_context", "fail_open", "model_and_user", 25)
	add("PreToolUse", "observe", "report", "model_and_user", 26)
	add("PostToolUse", "add_context", "fail_open", "user", 27)
	add("PostToolUse", "add_context", "fail_open", "model_and_user", 28)
	add("PostToolUseFailure", "observe", "report", "user", 29)
	add("PostToolUseFailure", "observe", "report", "model_and_user", 30)
	add("PostToolUseFailure", "add_context", "fail_open", "user", 31)
	add("PostToolUseFailure", "add_context", "fail_open", "model_and_user", 32)
	add("Stop", "observe", "report", "user", 33)
	add("Stop", "continue_workflow", "fail_open", "user", 34)
	var hooks []cmHook
	for _, f := range fs {
		hooks = append(hooks, f.hook)
	}
	w.installSource(cmID, cmPkg, cmFiles(hooks))
	const prompt = "Run the matrix commands, cm-failures-prompt."
	s := w.run(prompt)

	msgs := w.userMessages(s)
	recs := w.cmTranscript()
	for _, f := range fs {
		h := f.hook
		diag := fmt.Sprintf("dalo: hook %s:%s/%s failed (%s): handler exited with status %d", cmID, cmPkg, h.id, h.policy, h.exit)
		// The user channel. SessionStart's systemMessage is not a line
		// of the headless stream: Claude keeps it in the transcript as a
		// hook_system_message, the record the stream shows for the other
		// events (finding 36), and the stream carries the hook's answer.
		if f.event == "SessionStart" {
			found := false
			for _, a := range cmAttachments(recs, "hook_system_message") {
				c, _ := a["content"].(string)
				if a["hookEvent"] == "SessionStart" && strings.Contains(c, diag) && strings.Contains(c, "  stderr: "+cmStderr) {
					found = true
				}
			}
			if !found {
				w.failf(s, "%s: the transcript holds no SessionStart hook_system_message with %q and its stderr", h.id, diag)
			}
			if !cmHookResponse(s, "SessionStart", diag) {
				w.failf(s, "%s: the stream holds no SessionStart hook_response with %q", h.id, diag)
			}
		} else {
			says := f.event
			if h.tools != "" {
				says += ":" + h.tools
			}
			says += " says: "
			if _, ok := shown(msgs, says+diag, says+"  stderr: "+cmStderr); !ok {
				w.failf(s, "%s: the user was not shown %q with its stderr (shown: %+v)", h.id, says+diag, msgs)
			}
		}
		// The model channel.
		modelDiag := "[" + cmID + ":" + cmPkg + "/" + h.id + "] This hook failed: "
		switch h.visibility {
		case "model_and_user":
			found := false
			for _, q := range w.server.Requests() {
				if text := modelText(q, modelDiag); text != "" {
					found = true
					if !strings.Contains(text, fmt.Sprintf("status %d", h.exit)) {
						w.failf(s, "%s: the model read %q, want the failure with status %d", h.id, text, h.exit)
					}
					break
				}
			}
			if !found {
				w.failf(s, "%s: the diagnostic %q... did not reach the model", h.id, modelDiag)
			}
		case "user":
			if w.server.Contains(cmPkg+"/"+h.id+"]") || w.server.Contains(diag) {
				w.failf(s, "%s: a user-only diagnostic reached the model", h.id)
			}
		}
	}
	if w.server.Contains(cmStderr) {
		w.failf(s, "a handler's stderr reached the model")
	}
	// report and fail_open leave every action unchanged.
	if !w.server.Contains(prompt) {
		w.failf(s, "the prompt did not reach the model")
	}
	if !w.exists("cm-ran") || !strings.Contains(toolResult(w.server, callID("claude", 0)), "cm-out-42") {
		w.failf(s, "the shell command ran = %v, its result %q; want true and its output", w.exists("cm-ran"), toolResult(w.server, callID("claude", 0)))
	}
	if got := toolResult(w.server, callID("claude", 1)); !strings.Contains(got, "Exit code 7") {
		w.failf(s, "the failing command's result = %q, want its error", got)
	}
	if n := cmPosts(w.server); n != 3 {
		w.failf(s, "model requests = %d, want 3: the failing stop hooks asked for no other pass", n)
	}
	if !strings.Contains(s.stdout, cmFinal) {
		w.failf(s, "the session's result does not hold the final answer %s", cmFinal)
	}
}

// cmHookResponse reports whether the stream holds a hook_response record
// of event whose output holds text.
func cmHookResponse(s session, event, text string) bool {
	for _, line := range strings.Split(s.stdout, "\n") {
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
		if e.tools != "" {
			fields = append(fields, "tool.call_id")
		}
		hooks = append(hooks, cmHook{id: "actor-" + e.event, subject: e.subject, phase: e.phase, effect: "observe",
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
		id := "actor-" + e.event
		runs, payloads := w.cmRuns(id), w.cmPayloads(id)
		if len(runs) == 0 || len(runs) != len(payloads) {
			w.failf(s, "%s observer: %d runs, %d payloads; want at least one each, as many", e.event, len(runs), len(payloads))
			continue
		}
		// The events other than the tool events fire in the main agent
		// only (the table gives them no actor key): once each.
		if e.tools == "" && len(runs) != 1 {
			w.failf(s, "%s observer: %d runs, want 1: it fires in the main agent only", e.event, len(runs))
		}
		var got []string
		for i, argv := range runs {
			if len(argv) < 2 {
				w.failf(s, "%s observer run %d: argv %q", e.event, i, argv)
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
					w.failf(s, "%s: actor.id %q, want the one subagent's %q", e.event, aid, agent)
				}
			default:
				w.failf(s, "%s run %d: actor.kind %q, actor.id %q with payload agent_id %q (present %v), agent_type %v",
					e.event, i, kind, aid, pid, has, payloads[i]["agent_type"])
			}
			if e.tools != "" && len(argv) == 3 {
				got = append(got, kind+" "+argv[2])
			}
		}
		if e.tools != "" {
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(want[e.event], ",") {
				w.failf(s, "%s runs (actor.kind, tool.call_id) = %q, want %q", e.event, got, want[e.event])
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
