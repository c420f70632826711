//go:build unix

package live

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"dalo/internal/fakemodel"
)

// The Codex matrix kit: a third author source, one hook per claim of the
// codex@0.147.0 table that the live and probe kits leave to a recording, a
// finding or documentation (issue 6): every payload field bound on every
// event, outputs that print nothing on each row, failures shown to the user
// only on each row, and Codex's native apply_patch tool. Its tests install it
// alone. Every handler records its bound inputs (one line a run, the
// arguments tab-separated) and its stdin in $LIVE_OUT, then fails when its
// stdin holds its crash word ("*" for every run), or answers its kind.
const (
	mxcID  = "mxc"
	mxcPkg = "mxc-kit"

	mxcStderr    = "MXC-HANDLER-STDERR-71d0"
	mxcFinal     = "MXC-FINAL-ANSWER-3e58"
	mxcSkill     = "MXC-CONFIG-HOME-SKILL-0c9b"
	mxcPatchDeny = "MXC-PATCH-DENY-a41f"
)

// An mxcHook is one hook of the matrix kit and its handler (policy report,
// visibility user and a 5 s timeout unless set): inputs are
// name=type=field, each passed as an argument in order; crash is the word
// on stdin that makes the handler exit with status exit; answer is the
// result kind it answers otherwise ("deny" with mxcPatchDeny as reason
// when stdin holds "mxc-denied").
type mxcHook struct {
	id, subject, phase, effect, policy, visibility, tools string
	inputs                                                []string
	crash                                                 string
	exit                                                  int
	answer                                                string
	timeoutMS                                             int
	// sleep makes the handler sleep that many seconds between writing
	// <id>.begin and <id>.end.
	sleep int
}

var (
	mxcCommon = []string{"id=string=session.id", "cwd=path=session.cwd", "tp=path=transcript.path"}
	mxcTool   = append(append([]string{}, mxcCommon...), "mode=string=session.permission_mode", "tool=string=tool.name", "call=string=tool.call_id")
)

// mxcFieldHooks bind every field the table declares for each native event
// (SessionStart's permission_mode is not bindable on session/start: the
// handler's stdin shows it) and answer observe; mxcNothingHooks answer
// abstain or allow on each row and effect that prints nothing.
var mxcFieldHooks = []mxcHook{
	{id: "start-fields", subject: "session", phase: "start", effect: "observe", inputs: mxcCommon, answer: "observe"},
	{id: "prompt-fields", subject: "prompt", phase: "before", effect: "observe",
		inputs: append(append([]string{}, mxcCommon...), "mode=string=session.permission_mode", "text=string=prompt.text"), answer: "observe"},
	{id: "pre-fields", subject: "tool_call", phase: "before", effect: "observe", tools: "Bash", inputs: mxcTool, answer: "observe"},
	{id: "post-fields", subject: "tool_call", phase: "after", effect: "observe", tools: "Bash", inputs: mxcTool, answer: "observe"},
	{id: "stop-fields", subject: "workflow", phase: "stop", effect: "observe",
		inputs: append(append([]string{}, mxcCommon...), "mode=string=session.permission_mode",
			"last=string=workflow.last_message", "again=boolean=workflow.already_continued"), answer: "observe"},
	{id: "end-fields", subject: "session", phase: "end", effect: "observe",
		inputs: append(append([]string{}, mxcCommon...), "reason=string=session.end_reason"), answer: "observe"},
}

var mxcNothingHooks = []mxcHook{
	{id: "start-observe-abstain", subject: "session", phase: "start", effect: "observe", answer: "abstain"},
	{id: "start-context-abstain", subject: "session", phase: "start", effect: "add_context", answer: "abstain"},
	{id: "end-observe-abstain", subject: "session", phase: "end", effect: "observe", answer: "abstain"},
	{id: "prompt-observe-abstain", subject: "prompt", phase: "before", effect: "observe", answer: "abstain"},
	{id: "prompt-context-abstain", subject: "prompt", phase: "before", effect: "add_context", answer: "abstain"},
	{id: "prompt-gate-abstain", subject: "prompt", phase: "before", effect: "gate", answer: "abstain"},
	{id: "prompt-gate-allow", subject: "prompt", phase: "before", effect: "gate", answer: "allow"},
	{id: "pre-observe-abstain", subject: "tool_call", phase: "before", effect: "observe", tools: "Bash", answer: "abstain"},
	{id: "pre-context-abstain", subject: "tool_call", phase: "before", effect: "add_context", tools: "Bash", answer: "abstain"},
	{id: "pre-gate-allow", subject: "tool_call", phase: "before", effect: "gate", tools: "Bash", answer: "allow"},
	{id: "post-observe-abstain", subject: "tool_call", phase: "after", effect: "observe", tools: "Bash", answer: "abstain"},
	{id: "post-context-abstain", subject: "tool_call", phase: "after", effect: "add_context", tools: "Bash", answer: "abstain"},
	{id: "stop-observe-abstain", subject: "workflow", phase: "stop", effect: "observe", answer: "abstain"},
}

// mxcFailHooks fail under each policy and visibility the table promises on
// a row where no live test made them fail yet; each exits with its own
// status, so that a diagnostic names the hook that failed.
var mxcFailHooks = []mxcHook{
	{id: "start-open-user", subject: "session", phase: "start", effect: "add_context", policy: "fail_open", visibility: "user", crash: "*", exit: 21},
	{id: "start-report-user", subject: "session", phase: "start", effect: "observe", policy: "report", visibility: "user", crash: "*", exit: 22},
	{id: "start-open-model", subject: "session", phase: "start", effect: "add_context", policy: "fail_open", visibility: "model_and_user", crash: "*", exit: 23},
	{id: "prompt-open-user", subject: "prompt", phase: "before", effect: "add_context", policy: "fail_open", visibility: "user", crash: "mxc-prompt-crash", exit: 24},
	{id: "prompt-open-model", subject: "prompt", phase: "before", effect: "add_context", policy: "fail_open", visibility: "model_and_user", crash: "mxc-prompt-crash", exit: 25},
	{id: "prompt-closed-model", subject: "prompt", phase: "before", effect: "gate", policy: "fail_closed", visibility: "model_and_user", crash: "mxc-prompt-closed-crash", exit: 26},
	{id: "pre-report-model", subject: "tool_call", phase: "before", effect: "observe", policy: "report", visibility: "model_and_user", tools: "Bash", crash: "mxc-pre-crash", exit: 27},
	{id: "post-open-user", subject: "tool_call", phase: "after", effect: "add_context", policy: "fail_open", visibility: "user", tools: "Bash", crash: "mxc-post-crash", exit: 28},
	{id: "post-open-model", subject: "tool_call", phase: "after", effect: "add_context", policy: "fail_open", visibility: "model_and_user", tools: "Bash", crash: "mxc-post-crash", exit: 29},
	{id: "stop-open-user", subject: "workflow", phase: "stop", effect: "continue_workflow", policy: "fail_open", visibility: "user", crash: "*", exit: 30},
	{id: "stop-report-user", subject: "workflow", phase: "stop", effect: "observe", policy: "report", visibility: "user", crash: "*", exit: 31},
	{id: "end-report-user", subject: "session", phase: "end", effect: "observe", policy: "report", visibility: "user", crash: "*", exit: 32},
}

// mxcPatchHooks match Codex's native apply_patch tool, or only Bash; the
// SessionEnd hook outlives Codex's 3 s cut.
var mxcPatchHooks = []mxcHook{
	{id: "patch-gate", subject: "tool_call", phase: "before", effect: "gate", policy: "fail_closed", visibility: "user", tools: "apply_patch",
		inputs: []string{"tool=string=tool.name", "call=string=tool.call_id"}, answer: "deny"},
	{id: "patch-after", subject: "tool_call", phase: "after", effect: "observe", tools: "apply_patch",
		inputs: []string{"tool=string=tool.name", "call=string=tool.call_id"}, answer: "observe"},
	{id: "bash-pre", subject: "tool_call", phase: "before", effect: "observe", tools: "Bash", answer: "observe"},
	{id: "bash-post", subject: "tool_call", phase: "after", effect: "observe", tools: "Bash", answer: "observe"},
	{id: "end-slow", subject: "session", phase: "end", effect: "observe", answer: "observe", timeoutMS: 10000, sleep: 6},
}

// mxcHandler returns h's handler script.
func mxcHandler(h mxcHook) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	b.WriteString(`out="$LIVE_OUT/` + h.id + `"` + "\n")
	b.WriteString(`for a in "$@"; do printf '%s\t' "$a"; done >> "$out.argv"; echo >> "$out.argv"` + "\n")
	b.WriteString(`in=$(cat); printf '%s\n' "$in" >> "$out.stdin"` + "\n")
	if h.sleep > 0 {
		fmt.Fprintf(&b, "echo begin > \"$out.begin\"\nsleep %d\necho end > \"$out.end\"\n", h.sleep)
	}
	switch h.crash {
	case "":
	case "*":
		fmt.Fprintf(&b, "echo '%s' >&2; exit %d\n", mxcStderr, h.exit)
	default:
		fmt.Fprintf(&b, "case \"$in\" in *%s*) echo '%s' >&2; exit %d ;; esac\n", h.crash, mxcStderr, h.exit)
	}
	answer := h.answer
	if answer == "" {
		answer = "abstain"
	}
	if answer == "deny" {
		b.WriteString(`case "$in" in *mxc-denied*) echo '{"kind":"deny","reason":"` + mxcPatchDeny + `"}'; exit 0 ;; esac` + "\n")
		answer = "abstain"
	}
	b.WriteString(`echo '{"kind":"` + answer + `"}'` + "\n")
	return b.String()
}

// mxcFiles returns the matrix kit's author source with hooks.
func mxcFiles(hooks ...mxcHook) map[string]string {
	k := kit{name: mxcPkg, description: "One hook per claim of the Codex table a live run had not proved."}
	for _, h := range hooks {
		k.hooks = append(k.hooks, kitHook{id: h.id, subject: h.subject, phase: h.phase, effect: h.effect,
			policy: h.policy, visibility: h.visibility, timeoutMS: h.timeoutMS, tools: toolList(h.tools),
			inputs: h.inputs, env: []string{"PATH", "LIVE_OUT"}, handler: mxcHandler(h)})
	}
	return k.files()
}

// mxcRuns returns the bound inputs of each run of hook id, in order.
func (w *world) mxcRuns(id string) [][]string {
	out := w.output(id + ".argv")
	if out == "" {
		return nil
	}
	var runs [][]string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		runs = append(runs, strings.Split(strings.TrimSuffix(line, "\t"), "\t"))
	}
	return runs
}

// mxcPatchModel returns a model of the harness's own catalog (codex debug
// models) to which Codex offers its native apply_patch as a freeform tool,
// with no tool mode of its own: the catalog changes from version to version
// (gpt-5.4 in 0.147.0's, gone from 0.171.0's; gpt-5.5 in both).
func (w *world) mxcPatchModel() string {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), daloTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness(w.t, "codex"), "debug", "models")
	cmd.Dir = w.work
	cmd.Env = w.Env
	out, err := cmd.Output()
	var catalog struct {
		Models []struct {
			Slug       string `json:"slug"`
			ApplyPatch string `json:"apply_patch_tool_type"`
			ToolMode   string `json:"tool_mode"`
		} `json:"models"`
	}
	if err != nil || json.Unmarshal(out, &catalog) != nil {
		w.t.Fatalf("codex debug models: %v\n%s", err, clip(string(out)))
	}
	for _, m := range catalog.Models {
		if m.ApplyPatch == "freeform" && m.ToolMode == "" {
			return m.Slug
		}
	}
	w.t.Fatalf("codex debug models: no model with a freeform apply_patch and no tool mode\n%s", clip(string(out)))
	return ""
}

// mxcModel points the world's Codex at model, keeping the fake provider:
// the tools Codex offers depend on the model it recognises.
func (w *world) mxcModel(model string) {
	w.writeFile(filepath.Join(w.home, ".codex", "config.toml"), fmt.Sprintf(`model = %q
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
wire_api = "responses"
`, model, w.server.URL))
}

// mxcSessionEndTimeout sets the timeout of the SessionEnd entries in
// Codex's hooks.json to seconds, as a user editing the file would.
func (w *world) mxcSessionEndTimeout(seconds int) {
	w.t.Helper()
	w.reviewAll = true // the user reviews their edit of dalo's entry in /hooks
	path := filepath.Join(w.home, ".codex", "hooks.json")
	b, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &doc); err != nil || json.Unmarshal(b, &raw) != nil || len(doc.Hooks["SessionEnd"]) == 0 {
		w.t.Fatalf("%s: no SessionEnd entry (%v):\n%s", path, err, b)
	}
	for _, e := range doc.Hooks["SessionEnd"] {
		for _, h := range e.Hooks {
			h["timeout"] = seconds
		}
	}
	raw["hooks"].(map[string]any)["SessionEnd"] = doc.Hooks["SessionEnd"]
	out, err := json.MarshalIndent(raw, "", "  ")
	if err != nil {
		w.t.Fatal(err)
	}
	w.writeFile(path, string(out))
}

// mxcDiag is the diagnostic dalo shows the user when hook h fails.
func mxcDiag(h mxcHook) string {
	return "dalo: hook " + mxcID + ":" + mxcPkg + "/" + h.id + " failed (" + h.policy + "): handler exited with status " + strconv.Itoa(h.exit)
}

// mxcModelDiag is how the model reads hook h's diagnostic.
func mxcModelDiag(h mxcHook) string {
	return "[" + mxcID + ":" + mxcPkg + "/" + h.id + "] This hook failed: "
}

// mxcRealPath resolves symlinks in p, for comparing paths (a temp dir may be
// reached through a link).
func mxcRealPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return p
	}
	return r
}

// TestMatrixCodex drives Codex 0.147.0 through the claims of its table that
// rested on a recording, a finding or documentation only.
func TestMatrixCodex(t *testing.T) {
	t.Parallel()
	harness(t, "codex")

	// fields_and_nothing: one app-server session in which a hook on every
	// native event binds every field the table declares for it, and hooks on
	// every row answer abstain, observe or allow. Each field is what the
	// session had; each action goes on as without hooks: no hook run shows
	// the user anything or adds context, the prompt and the command's
	// output reach the model, the turn ends after the answer.
	t.Run("fields_and_nothing", func(t *testing.T) {
		t.Parallel()
		const prompt = "Run the matrix command, mxc-prompt-text."
		w := newWorld(t, "codex", fakemodel.Script{
			fakemodel.Run("echo mxc-out-$((40+2))"),
			fakemodel.Say(mxcFinal),
		})
		w.installSource(mxcID, mxcPkg, mxcFiles(append(append([]mxcHook{}, mxcFieldHooks...), mxcNothingHooks...)...))
		// config.skills[1]: a skill the user put in $CODEX_HOME/skills.
		w.writeFile(filepath.Join(w.home, ".codex", "skills", "mxc-skill", "SKILL.md"),
			"---\nname: mxc-skill\ndescription: "+mxcSkill+"\n---\n\nA skill in the Codex config home.\n")
		a := w.appServer(prompt)

		// The session: one id, the project dir, a transcript file named
		// for the session, the permission mode Codex runs in.
		var sessionID string
		for _, h := range mxcFieldHooks {
			runs := w.mxcRuns(h.id) // one run each: one shell call
			if len(runs) != 1 || len(runs[0]) != len(h.inputs) {
				w.failApp(a, "%s: bound inputs per run = %q, want one run of %d inputs", h.id, runs, len(h.inputs))
				continue
			}
			got := map[string]string{}
			for i, in := range h.inputs {
				got[strings.SplitN(in, "=", 3)[2]] = runs[0][i]
			}
			t.Logf("%s: %q", h.id, got)
			if sessionID == "" {
				sessionID = got["session.id"]
			}
			if got["session.id"] == "" || got["session.id"] != sessionID {
				w.failApp(a, "%s: session.id = %q, want the session's id %q on every event", h.id, got["session.id"], sessionID)
			}
			if mxcRealPath(t, got["session.cwd"]) != mxcRealPath(t, w.work) {
				w.failApp(a, "%s: session.cwd = %q, want the project dir %q", h.id, got["session.cwd"], w.work)
			}
			tp := got["transcript.path"]
			if fi, err := os.Stat(tp); err != nil || !fi.Mode().IsRegular() || !strings.Contains(filepath.Base(tp), sessionID) ||
				!strings.HasPrefix(mxcRealPath(t, tp), mxcRealPath(t, filepath.Join(w.home, ".codex"))+string(filepath.Separator)) {
				w.failApp(a, "%s: transcript.path = %q (%v), want a file in $CODEX_HOME named for session %s", h.id, tp, err, sessionID)
			}
			if m, ok := got["session.permission_mode"]; ok && m != "bypassPermissions" {
				w.failApp(a, "%s: session.permission_mode = %q, want bypassPermissions (no approvals, no sandbox)", h.id, m)
			}
			switch h.id {
			case "prompt-fields":
				if got["prompt.text"] != prompt {
					w.failApp(a, "prompt.text = %q, want %q", got["prompt.text"], prompt)
				}
			case "pre-fields", "post-fields":
				if got["tool.name"] != "Bash" || got["tool.call_id"] != callID("codex", 0) {
					w.failApp(a, "%s: tool.name, tool.call_id = %q, %q; want Bash, %s", h.id, got["tool.name"], got["tool.call_id"], callID("codex", 0))
				}
			case "stop-fields":
				if got["workflow.last_message"] != mxcFinal || got["workflow.already_continued"] != "false" {
					w.failApp(a, "workflow.last_message, already_continued = %q, %q; want %q, false",
						got["workflow.last_message"], got["workflow.already_continued"], mxcFinal)
				}
			case "end-fields":
				if got["session.end_reason"] == "" {
					w.failApp(a, "session.end_reason is empty")
				}
			}
		}
		// SessionStart's permission_mode, which no row binds: the key the
		// table names is in its payload, with the same mode.
		var start struct {
			Mode *string `json:"permission_mode"`
		}
		if err := json.Unmarshal([]byte(w.output("start-fields.stdin")), &start); err != nil || start.Mode == nil || *start.Mode != "bypassPermissions" {
			w.failApp(a, "SessionStart payload permission_mode = %v (%v), want bypassPermissions", start.Mode, err)
		}

		// Outputs that print nothing: each hook ran once, and no hook run
		// of any event showed anything or added context.
		for _, h := range mxcNothingHooks {
			if n := len(w.mxcRuns(h.id)); n != 1 {
				w.failApp(a, "%s (%s): ran %d times, want 1", h.id, h.answer, n)
			}
		}
		events := map[string]bool{}
		for _, r := range a.runs {
			events[r.EventName] = true
			if r.Status != "completed" || len(r.Entries) != 0 {
				w.failApp(a, "%s hook run: status %q, entries %+v; want completed with nothing shown or added", r.EventName, r.Status, r.Entries)
			}
			// dalo's entries run in Codex's turn, which waits for them
			// (no async: true); a Codex that says so says "sync".
			if r.ExecutionMode != "" && r.ExecutionMode != "sync" {
				w.failApp(a, "%s hook run: execution mode %q, want sync: Codex does not wait for an async hook", r.EventName, r.ExecutionMode)
			}
		}
		for _, e := range []string{"sessionStart", "userPromptSubmit", "preToolUse", "postToolUse", "stop"} {
			if !events[e] {
				w.failApp(a, "no %s hook run", e)
			}
		}
		// The harness went on as without hooks: the prompt and the
		// command's output reached the model, which answered once more.
		if !w.server.Contains(prompt) || !w.server.Contains("mxc-out-42") {
			w.failApp(a, "prompt reached the model = %v, command output reached it = %v; want true, true",
				w.server.Contains(prompt), w.server.Contains("mxc-out-42"))
		}
		if n := len(w.server.Requests()); n != 2 {
			w.failApp(a, "model requests = %d, want 2: the shell call and the answer", n)
		}
		// config.skills[1]: the skill in $CODEX_HOME/skills reached the model.
		if !w.server.Contains(mxcSkill) {
			w.failApp(a, "the skill in $CODEX_HOME/skills did not reach the model")
		}
	})

	// user_failures: one app-server session of two turns. The first
	// prompt's fail_closed gate (model_and_user) fails: the prompt is
	// blocked, its hook run shows the user the diagnostic as feedback and a
	// warning. In the second turn hooks fail under fail_open and report on
	// session start, the prompt, after the tool call and on stop: each
	// action goes on; a diagnostic with visibility user is shown the user
	// as a warning of that event's hook run and never reaches the model;
	// one with model_and_user reaches both.
	t.Run("user_failures", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, "codex", fakemodel.Script{
			fakemodel.Run("touch mxc-pre-crash; echo mxc-post-crash-$((40+2))"),
			fakemodel.Say("Done."),
		})
		w.installSource(mxcID, mxcPkg, mxcFiles(mxcFailHooks...))
		a := w.appServer("Please handle mxc-prompt-closed-crash now.", "Run the matrix commands, mxc-prompt-crash.")

		event := map[string]string{"session/start": "sessionStart", "prompt/before": "userPromptSubmit",
			"tool_call/before": "preToolUse", "tool_call/after": "postToolUse", "workflow/stop": "stop", "session/end": "sessionEnd"}
		for _, h := range mxcFailHooks {
			if h.subject == "session" && h.phase == "end" {
				continue // below
			}
			ev := event[h.subject+"/"+h.phase]
			var found bool
			for _, r := range a.event(ev) {
				if text, ok := r.Entry("warning", mxcDiag(h), "  stderr: "+mxcStderr); ok {
					found = true
					t.Logf("user channel, %s: %q", ev, text)
				}
			}
			if !found {
				w.failApp(a, "%s (%s, %s): no %s hook run showed the user a warning %q with the handler's stderr", h.id, h.policy, h.visibility, ev, mxcDiag(h))
			}
			toModel := w.server.Contains(mxcModelDiag(h))
			switch {
			case h.id == "prompt-closed-model":
				// A blocked prompt asks the model nothing.
			case h.visibility == "user" && toModel:
				w.failApp(a, "%s, user: its diagnostic reached the model", h.id)
			case h.visibility == "model_and_user":
				status := fmt.Sprintf("status %d", h.exit)
				var text string
				for _, q := range w.server.Requests() {
					if text = modelText(q, mxcModelDiag(h)); text != "" {
						break
					}
				}
				if !strings.Contains(text, status) {
					w.failApp(a, "%s, model_and_user: the model read %q, want the diagnostic naming %s", h.id, text, status)
				}
			}
		}
		if w.server.Contains(mxcStderr) {
			w.failApp(a, "a handler's stderr reached the model")
		}

		// The blocked prompt: its run is blocked with the diagnostic as
		// feedback, and nothing of it reached the model.
		closed := mxcFailHooks[slices.IndexFunc(mxcFailHooks, func(h mxcHook) bool { return h.id == "prompt-closed-model" })]
		prompts := a.event("userPromptSubmit")
		if len(prompts) != 2 || prompts[0].Status != "blocked" || prompts[1].Status == "blocked" {
			w.failApp(a, "userPromptSubmit hook runs = %+v, want 2: the first blocked, the second not", prompts)
		} else if text, ok := prompts[0].Entry("feedback", mxcDiag(closed), "  stderr: "+mxcStderr); !ok {
			w.failApp(a, "blocked prompt: the user was not shown the diagnostic as feedback")
		} else {
			t.Logf("user channel, blocked prompt (feedback): %q", text)
		}
		if w.server.Contains("mxc-prompt-closed-crash") {
			w.failApp(a, "the blocked prompt reached the model")
		}

		// fail_open and report leave each action unchanged: the second
		// prompt reached the model, the command ran and its output reached
		// the model, and Stop asked for no other pass.
		if !w.server.Contains("mxc-prompt-crash") || !w.exists("mxc-pre-crash") || !w.server.Contains("mxc-post-crash-42") {
			w.failApp(a, "prompt reached the model = %v, command ran = %v, its output reached the model = %v; want true, true, true",
				w.server.Contains("mxc-prompt-crash"), w.exists("mxc-pre-crash"), w.server.Contains("mxc-post-crash-42"))
		}
		if n := len(w.server.Requests()); n != 2 {
			w.failApp(a, "model requests = %d, want 2: the shell call and the answer (no other pass after Stop)", n)
		}

		// SessionEnd: the handler ran and failed; Codex's app server sends
		// no hook run for it (finding 35), so its user channel stays the
		// documented one. Logged, so that a change shows.
		if len(w.mxcRuns("end-report-user")) != 1 {
			w.failApp(a, "end-report-user: ran %d times, want 1", len(w.mxcRuns("end-report-user")))
		}
		t.Logf("sessionEnd hook runs: %+v; handler stderr on the server's stderr: %v",
			a.event("sessionEnd"), strings.Contains(a.stderr, mxcStderr))
	})

	// apply_patch: a codex exec session with a model Codex knows
	// (mxcPatchModel), to which it offers its native apply_patch tool (a
	// freeform tool; to the unknown "gpt-5" it offers none, finding 32). Two patches: a gate
	// matching apply_patch runs on each with tool.name apply_patch and
	// denies the one adding mxc-denied.txt; an after hook matching
	// apply_patch runs on the applied one; hooks matching only Bash run on
	// neither. Its SessionEnd hook sleeps past Codex's 3 s cut: Codex warns
	// it clamps the timeout, and the handler is stopped before it ends.
	t.Run("apply_patch", func(t *testing.T) {
		t.Parallel()
		patch := func(name string) string {
			return "*** Begin Patch\n*** Add File: " + name + "\n+patched\n*** End Patch\n"
		}
		w := newWorld(t, "codex", fakemodel.Script{
			{Tool: "apply_patch", Input: patch("mxc-denied.txt")},
			{Tool: "apply_patch", Input: patch("mxc-patched.txt")},
			fakemodel.Say("Done."),
		})
		model := w.mxcPatchModel()
		w.mxcModel(model)
		w.installSource(mxcID, mxcPkg, mxcFiles(mxcPatchHooks...))
		// dalo writes the SessionEnd entry's timeout already cut to the
		// clamp; the user raises it to see Codex cut it.
		w.mxcSessionEndTimeout(10)
		s := w.run("Apply the patches you are given.")
		ended := time.Now()

		var tools []string
		for _, tl := range w.server.Requests()[0].JSON["tools"].([]any) {
			m, _ := tl.(map[string]any)
			tools = append(tools, fmt.Sprint(m["type"], ":", m["name"]))
		}
		sort.Strings(tools)
		t.Logf("tools offered to %s: %v", model, tools)
		if !slices.Contains(tools, "custom:apply_patch") {
			w.failf(s, "Codex offered %s no freeform apply_patch tool: %v", model, tools)
		}

		want := [][]string{{"apply_patch", callID("codex", 0)}, {"apply_patch", callID("codex", 1)}}
		if got := w.mxcRuns("patch-gate"); fmt.Sprint(got) != fmt.Sprint(want) {
			w.failf(s, "apply_patch gate: bound tool.name, tool.call_id per run = %q, want %q", got, want)
		}
		if w.exists("mxc-denied.txt") || !w.exists("mxc-patched.txt") {
			w.failf(s, "denied patch applied = %v, allowed patch applied = %v; want false, true", w.exists("mxc-denied.txt"), w.exists("mxc-patched.txt"))
		}
		if !w.server.Contains(mxcPatchDeny) {
			w.failf(s, "the deny reason %s did not reach the model", mxcPatchDeny)
		}
		if got := w.mxcRuns("patch-after"); fmt.Sprint(got) != fmt.Sprint(want[1:]) {
			w.failf(s, "apply_patch after hook: bound tool.name, tool.call_id per run = %q, want %q", got, want[1:])
		}
		if pre, post := w.output("bash-pre.argv"), w.output("bash-post.argv"); pre != "" || post != "" {
			w.failf(s, "hooks matching only Bash ran on apply_patch calls: before %q, after %q", pre, post)
		}

		// timeout.clamps.SessionEnd: Codex cut the 10 s SessionEnd hook to
		// 3 s; the handler began and was stopped before its 6 s sleep ended.
		if !strings.Contains(s.stderr, "clamping SessionEnd hook timeout to 3s") {
			w.failf(s, "Codex did not warn that it clamps the SessionEnd hook timeout to 3s")
		}
		// Timed from when the handler began (its begin file), not from
		// the session's start, so that a loaded machine's slower turns
		// cannot fail it: cut at 3 s, the session ended before the
		// handler's 6 s sleep would have, and the handler never ended.
		begin, err := os.Stat(filepath.Join(w.out, "end-slow.begin"))
		if err != nil {
			w.failf(s, "the SessionEnd handler did not run: %v", err)
			return
		}
		if d := ended.Sub(begin.ModTime()); d >= 6*time.Second {
			w.failf(s, "the session ended %v after the SessionEnd handler began, want it cut at 3 s", d.Round(time.Millisecond))
		}
		time.Sleep(time.Until(begin.ModTime().Add(7 * time.Second)))
		if w.output("end-slow.end") != "" {
			w.failf(s, "the SessionEnd handler ran past Codex's 3 s cut to its end")
		}
	})

	// mcp_tool: a codex exec session with a user's MCP server (cmsrv)
	// whose tool the model calls. A gate whose matcher names the tool as
	// hooks see it (mcp__cmsrv__probe, the table's pattern
	// mcp__<server>__<tool>) runs on that call given that name, and
	// abstains, so the tool runs and its answer reaches the model; an after
	// hook naming it runs after it. Only where the table under test admits
	// the name (tool_patterns).
	t.Run("mcp_tool", func(t *testing.T) {
		t.Parallel()
		const tool = "mcp__cmsrv__probe"
		if tb := tableUnder(t, "codex"); !tb.KnowsTool(tool) {
			t.Skipf("%s admits no MCP tool name in a matcher", tb.Key())
		}
		w := newWorld(t, "codex", fakemodel.Script{
			{Tool: "probe", Namespace: "mcp__cmsrv", Input: map[string]any{"text": "mxc-mcp-call"}},
			fakemodel.Say(mxcFinal),
		})
		w.codexMCPServer()
		w.installSource(mxcID, mxcPkg, mxcFiles(
			mxcHook{id: "mcp-gate", subject: "tool_call", phase: "before", effect: "gate", policy: "fail_closed", tools: tool,
				inputs: []string{"tool=string=tool.name", "call=string=tool.call_id"}, answer: "abstain"},
			mxcHook{id: "mcp-after", subject: "tool_call", phase: "after", effect: "observe", tools: tool,
				inputs: []string{"tool=string=tool.name"}, answer: "observe"},
			mxcHook{id: "bash-pre", subject: "tool_call", phase: "before", effect: "observe", tools: "Bash", answer: "observe"}))
		s := w.run("Call the probe tool, mxc-mcp.")
		if got, want := w.mxcRuns("mcp-gate"), [][]string{{tool, callID("codex", 0)}}; fmt.Sprint(got) != fmt.Sprint(want) {
			w.failf(s, "MCP gate: bound tool.name, tool.call_id per run = %q, want %q", got, want)
		}
		if got := w.mxcRuns("mcp-after"); fmt.Sprint(got) != fmt.Sprint([][]string{{tool}}) {
			w.failf(s, "MCP after hook: bound tool.name per run = %q, want one run given %s", got, tool)
		}
		if got := w.output("bash-pre.argv"); got != "" {
			w.failf(s, "a hook matching only Bash ran on the MCP call: %q", got)
		}
		if got := toolOutput(w.server, callID("codex", 0)); !strings.Contains(got, cmMCPOut+" mxc-mcp-call") {
			w.failf(s, "the MCP tool's answer did not reach the model: %q", got)
		}
	})
}
