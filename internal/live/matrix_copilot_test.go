//go:build unix

package live

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
)

// The matrices of GitHub Copilot CLI (providers/copilot/1.0.102.cue) and
// Qwen Code (providers/qwen/0.24.4.cue): live tests that prove each claim
// of both tables through dalo's own install and dispatch. Both harnesses
// read hooks in Claude Code's shape from settings.json; what differs
// between them is each one's bmHarness.

const (
	bmID    = "bm"
	bmPkg   = "bash-matrix"
	bmFinal = "BM-FINAL-ANSWER-6a1e"
)

// A bmEvent is a row of a table, with its native event, the portable
// fields its payload holds and its tool matcher.
type bmEvent struct {
	subject, phase, event, tools string
	fields                       []string
}

// A bmHarness is what the matrix needs to know of a harness: its events
// and where its payload holds each field.
type bmHarness struct {
	events []bmEvent
	keys   map[string]string
}

var bmHarnesses = map[string]bmHarness{
	// Copilot's payloads carry no tool call id, no permission mode, and a
	// transcript path on Stop only (finding 62).
	"copilot": {
		events: []bmEvent{
			{"session", "start", "SessionStart", "", []string{"session.id", "session.cwd"}},
			{"prompt", "before", "UserPromptSubmit", "", []string{"session.id", "session.cwd", "prompt.text"}},
			{"tool_call", "before", "PreToolUse", "Bash", []string{"session.id", "session.cwd", "tool.name"}},
			{"tool_call", "after", "PostToolUse", "Bash", []string{"session.id", "session.cwd", "tool.name"}},
			{"workflow", "stop", "Stop", "", []string{"session.id", "session.cwd", "transcript.path", "workflow.already_continued"}},
			{"session", "end", "SessionEnd", "", []string{"session.id", "session.cwd", "session.end_reason"}},
		},
		keys: map[string]string{"session.id": "session_id", "session.cwd": "cwd", "prompt.text": "prompt", "tool.name": "tool_name",
			"transcript.path": "transcript_path", "workflow.already_continued": "stop_hook_active", "session.end_reason": "reason"},
	},
	// Qwen fires no SessionEnd headless (finding 64).
	"qwen": {
		events: []bmEvent{
			{"session", "start", "SessionStart", "", []string{"session.id", "session.cwd", "transcript.path"}},
			{"prompt", "before", "UserPromptSubmit", "", []string{"session.id", "session.cwd", "prompt.text"}},
			{"tool_call", "before", "PreToolUse", "run_shell_command", []string{"session.id", "session.cwd", "tool.name", "tool.call_id", "session.permission_mode"}},
			{"tool_call", "after", "PostToolUse", "run_shell_command", []string{"session.id", "session.cwd", "tool.name", "tool.call_id"}},
			{"workflow", "stop", "Stop", "", []string{"session.id", "transcript.path", "workflow.last_message", "workflow.already_continued"}},
		},
		keys: map[string]string{"session.id": "session_id", "session.cwd": "cwd", "prompt.text": "prompt", "tool.name": "tool_name",
			"tool.call_id": "tool_call_id", "transcript.path": "transcript_path", "session.permission_mode": "permission_mode",
			"workflow.last_message": "last_assistant_message", "workflow.already_continued": "stop_hook_active"},
	},
}

// TestMatrixCopilot runs GitHub Copilot CLI sessions that prove its table.
func TestMatrixCopilot(t *testing.T) {
	t.Parallel()
	harness(t, "copilot")
	t.Run("session", func(t *testing.T) { testBashMatrixSession(t, "copilot") })
	t.Run("failures", func(t *testing.T) { testBashMatrixFailures(t, "copilot") })
	t.Run("dispatcher_gone_fail_closed", func(t *testing.T) { testBashMatrixGoneClosed(t, "copilot") })
	t.Run("dispatcher_gone_fail_open", func(t *testing.T) { testBashMatrixGoneOpen(t, "copilot") })
	t.Run("hooks_off", func(t *testing.T) { testBashMatrixOff(t, "copilot") })
	t.Run("hooks_off_other_file", testMatrixCopilotOffOtherFile)
	t.Run("remove_restores", func(t *testing.T) { testBashMatrixRemove(t, "copilot") })
	t.Run("instruction", func(t *testing.T) { testBashMatrixInstruction(t, "copilot") })
	t.Run("first_run", testMatrixCopilotFirstRun)
	t.Run("pre_context", func(t *testing.T) { testBashMatrixPreContext(t, "copilot") })
	t.Run("rewrite_input", func(t *testing.T) { testBashMatrixRewrite(t, "copilot") })
	// Copilot's tool result object; the model reads textResultForLlm.
	t.Run("replace_output", func(t *testing.T) {
		testBashMatrixReplace(t, "copilot", `{"textResultForLlm":"`+bmReplaced+`","resultType":"success"}`)
	})
	t.Run("prompt_deny", func(t *testing.T) { testBashMatrixPromptDeny(t, "copilot", true) })
	t.Run("prompt_fail_closed", func(t *testing.T) { testBashMatrixPromptClosed(t, "copilot", true) })
	t.Run("members", func(t *testing.T) { testBashMatrixMembers(t, "copilot") })
	// Copilot CLI shows a hook's messages nowhere.
	t.Run("user_channel", func(t *testing.T) { testBashMatrixUser(t, "copilot") })
}

// TestMatrixQwen runs Qwen Code sessions that prove its table.
func TestMatrixQwen(t *testing.T) {
	t.Parallel()
	harness(t, "qwen")
	t.Run("session", func(t *testing.T) { testBashMatrixSession(t, "qwen") })
	t.Run("failures", func(t *testing.T) { testBashMatrixFailures(t, "qwen") })
	t.Run("dispatcher_gone_fail_closed", func(t *testing.T) { testBashMatrixGoneClosed(t, "qwen") })
	t.Run("dispatcher_gone_fail_open", func(t *testing.T) { testBashMatrixGoneOpen(t, "qwen") })
	t.Run("hooks_off", func(t *testing.T) { testBashMatrixOff(t, "qwen") })
	t.Run("remove_restores", func(t *testing.T) { testBashMatrixRemove(t, "qwen") })
	t.Run("instruction", func(t *testing.T) { testBashMatrixInstruction(t, "qwen") })
	t.Run("tool_failure", func(t *testing.T) {
		testBashMatrixToolFailure(t, "qwen", []string{"session.id", "session.cwd", "transcript.path", "tool.name", "tool.call_id", "session.permission_mode"})
	})
	// Headless, Qwen Code shows the reason of a denied prompt nowhere.
	t.Run("prompt_deny", func(t *testing.T) { testBashMatrixPromptDeny(t, "qwen", false) })
	t.Run("prompt_fail_closed", func(t *testing.T) { testBashMatrixPromptClosed(t, "qwen", false) })
	t.Run("members", func(t *testing.T) { testBashMatrixMembers(t, "qwen") })
	// Qwen Code shows a hook's messages on Stop only.
	t.Run("user_channel", func(t *testing.T) { testBashMatrixUser(t, "qwen", "Stop") })
	t.Run("tools", testMatrixQwenTools)
}

// testBashMatrixSession runs one session with an observer binding every
// field the table names on every event, context on each event that takes
// it, a gate that denies the first shell command, and a stop hook that
// continues the workflow once. Each bound value is right: one session id,
// the project, the prompt, the shell tool's hook name, a transcript, false
// then true; each context, the denial's reason and the continuation's
// reach the model; the denied command does not run, the other does.
func testBashMatrixSession(t *testing.T, p string) {
	t.Parallel()
	h := bmHarnesses[p]
	shell := shellTool[p]
	w := newWorld(t, p, fakemodel.Script{
		fakemodel.Run("touch bm-denied"),
		fakemodel.Run("echo bm-out-42; touch bm-ran"),
		fakemodel.Say(bmFinal),
	})
	const (
		startCtx  = "BM-START-CONTEXT-1b7e"
		promptCtx = "BM-PROMPT-CONTEXT-7c20"
		postCtx   = "BM-POST-CONTEXT-3f9d"
		denyWhy   = "BM-DENY-REASON-5e02"
		again     = "BM-CONTINUE-REASON-0a4b"
	)
	var hooks []cmHook
	for _, e := range h.events {
		hooks = append(hooks, cmHook{id: "f-" + e.event, subject: e.subject, phase: e.phase, effect: "observe",
			tools: e.tools, fields: e.fields, result: `{"kind":"observe"}`})
	}
	hooks = append(hooks,
		cmHook{id: "start-context", subject: "session", phase: "start", effect: "add_context",
			result: `{"kind":"add_context","context":"` + startCtx + `"}`},
		cmHook{id: "prompt-context", subject: "prompt", phase: "before", effect: "add_context",
			result: `{"kind":"add_context","context":"` + promptCtx + `"}`},
		cmHook{id: "gate", subject: "tool_call", phase: "before", effect: "gate", policy: "fail_closed", tools: shell,
			when: "*bm-denied*", result: `{"kind":"deny","reason":"` + denyWhy + `"}`},
		cmHook{id: "post-context", subject: "tool_call", phase: "after", effect: "add_context", tools: shell,
			when: "*bm-ran*", result: `{"kind":"add_context","context":"` + postCtx + `"}`},
		cmHook{id: "stop", subject: "workflow", phase: "stop", effect: "continue_workflow",
			when: `*'"stop_hook_active":false'*`, result: `{"kind":"continue_workflow","reason":"` + again + `"}`})
	w.installSource(bmID, bmPkg, matrixFiles(bmPkg, "Probes of the "+p+" table's claims.", hooks))
	if b, err := os.ReadFile(w.hooksFile()); err != nil || !strings.Contains(string(b), "/dalo-hook dispatch --home "+w.store+" --provider "+p+" --event PreToolUse") {
		t.Fatalf("%s does not call dalo-hook dispatch from the store (err %v):\n%s", w.hooksFile(), err, b)
	}
	const prompt = "Run the matrix commands, bm-fields-prompt."
	s := w.run(prompt)

	for _, m := range []string{startCtx, promptCtx, postCtx, denyWhy, again} {
		if !w.server.Contains(m) {
			w.failf(s, "%s did not reach the model", m)
		}
	}
	if w.exists("bm-denied") || !w.exists("bm-ran") {
		w.failf(s, "the denied command ran = %v, the allowed one ran = %v; want false, true", w.exists("bm-denied"), w.exists("bm-ran"))
	}
	var sid string
	for _, e := range h.events {
		id := "f-" + e.event
		runs, payloads := w.cmRuns(id), w.cmPayloads(id)
		if len(runs) == 0 || len(runs) != len(payloads) {
			w.failf(s, "%s observer: %d runs, %d payloads; want at least one of each, as many", e.event, len(runs), len(payloads))
			continue
		}
		for i, run := range runs {
			if e.event == "UserPromptSubmit" && i > 0 && payloads[i]["prompt"] == "" {
				// Qwen Code fires it again, with an empty prompt, after a
				// tool result (finding 64): the empty value is no argument.
				continue
			}
			if len(run) != len(e.fields) {
				w.failf(s, "%s run %d: argv %q, want one value per field %v", e.event, i, run, e.fields)
				continue
			}
			for j, f := range e.fields {
				got, key := run[j], h.keys[f]
				if want := fmt.Sprint(payloads[i][key]); key == "" || got != want {
					w.failf(s, "%s run %d: %s = %q, want the payload's %q: %q", e.event, i, f, got, key, want)
				}
				switch f {
				case "session.id":
					if sid == "" {
						sid = got
					}
					if got != sid {
						w.failf(s, "%s: session.id %q, want the session's %q", e.event, got, sid)
					}
				case "session.cwd":
					if !samePath(got, w.work) {
						w.failf(s, "%s: session.cwd %q, want the project %s", e.event, got, w.work)
					}
				case "tool.name":
					if got != shell {
						w.failf(s, "%s: tool.name %q, want %s", e.event, got, shell)
					}
				case "transcript.path":
					if !strings.HasPrefix(got, w.configHome()+string(filepath.Separator)) {
						w.failf(s, "%s: transcript.path %q is not under the configuration home %s", e.event, got, w.configHome())
					}
				case "workflow.already_continued":
					if want := fmt.Sprint(i > 0); got != want {
						w.failf(s, "%s run %d: workflow.already_continued %q, want %s", e.event, i, got, want)
					}
				case "tool.call_id":
					if got == "" {
						w.failf(s, "%s: no tool.call_id", e.event)
					}
				}
			}
		}
		switch e.event {
		case "UserPromptSubmit":
			if runs[0][2] != prompt {
				w.failf(s, "prompt.text %q, want %q", runs[0][2], prompt)
			}
		case "PreToolUse":
			if len(runs) != 2 {
				w.failf(s, "PreToolUse observer: %d runs, want 2 (both commands)", len(runs))
			}
		case "Stop":
			if len(runs) != 2 {
				w.failf(s, "Stop observer: %d runs, want 2 (continued once)", len(runs))
			}
		}
	}
	// The model's call id is the same before and after the call.
	if p == "qwen" {
		pre, post := w.cmRuns("f-PreToolUse"), w.cmRuns("f-PostToolUse")
		if len(pre) == 2 && len(post) == 1 && pre[1][3] != post[0][3] {
			w.failf(s, "tool.call_id before %q and after %q the call differ", pre[1][3], post[0][3])
		}
	}
	if p == "copilot" {
		if got := w.cmRuns("f-SessionEnd"); len(got) == 1 && got[0][2] != "complete" {
			w.failf(s, "session.end_reason %q, want complete", got[0][2])
		}
	}
}

// testBashMatrixFailures runs a session whose hooks crash (exit 3 with
// text on stderr): a fail_closed gate shown to the user only denies with
// the generic reason, one shown to the model too with its diagnostic, a
// fail_open gate lets the command run; context hooks under report and
// fail_open shown to the model put the diagnostic in front of it; a
// crashing fail_closed stop hook asks for another pass with the generic
// reason, and one shown to the model too with its diagnostic. No handler's stderr reaches the model.
func testBashMatrixFailures(t *testing.T, p string) {
	t.Parallel()
	shell := shellTool[p]
	w := newWorld(t, p, fakemodel.Script{
		fakemodel.Run("touch bm-closed"),
		fakemodel.Run("touch bm-model-closed"),
		fakemodel.Run("touch bm-open"),
		fakemodel.Say(bmFinal),
	})
	hooks := []cmHook{
		{id: "closed", subject: "tool_call", phase: "before", effect: "gate", policy: "fail_closed", visibility: "user", tools: shell, when: "*bm-closed*", exit: 3},
		{id: "model-closed", subject: "tool_call", phase: "before", effect: "gate", policy: "fail_closed", visibility: "model_and_user", tools: shell, when: "*bm-model-closed*", exit: 3},
		{id: "open", subject: "tool_call", phase: "before", effect: "gate", policy: "fail_open", tools: shell, when: "*bm-open*", exit: 3},
		{id: "start-report", subject: "session", phase: "start", effect: "add_context", policy: "report", visibility: "model_and_user", exit: 3},
		{id: "prompt-open", subject: "prompt", phase: "before", effect: "add_context", policy: "fail_open", visibility: "model_and_user", when: "*bm-failures-prompt*", exit: 3},
		{id: "post-report", subject: "tool_call", phase: "after", effect: "add_context", policy: "report", visibility: "model_and_user", tools: shell, when: "*bm-open*", exit: 3},
		{id: "strict-stop", subject: "workflow", phase: "stop", effect: "continue_workflow", policy: "fail_closed", visibility: "user", exit: 3},
		{id: "model-stop", subject: "workflow", phase: "stop", effect: "continue_workflow", policy: "fail_closed", visibility: "model_and_user", exit: 3},
	}
	w.installSource(bmID, bmPkg, matrixFiles(bmPkg, "Probes of the "+p+" table's failures.", hooks))
	s := w.run("Run the commands you are given, bm-failures-prompt.")

	if w.exists("bm-closed") || w.exists("bm-model-closed") || !w.exists("bm-open") {
		w.failf(s, "ran: fail_closed (user) %v, fail_closed (model) %v, fail_open %v; want false, false, true",
			w.exists("bm-closed"), w.exists("bm-model-closed"), w.exists("bm-open"))
	}
	generic := fmt.Sprintf("[%s:%s/closed] This hook failed; the details were shown to the user. The action was blocked (fail_closed).", bmID, bmPkg)
	if !w.server.Contains(generic) {
		w.failf(s, "fail_closed gate (user): the model did not read %q", generic)
	}
	for _, id := range []string{"model-closed", "start-report", "prompt-open", "post-report", "model-stop"} {
		if d := fmt.Sprintf("[%s:%s/%s] This hook failed: handler exited with status 3.", bmID, bmPkg, id); !w.server.Contains(d) {
			w.failf(s, "%s (model_and_user): the model did not read %q", id, d)
		}
	}
	if !w.server.Contains("Another pass was requested (fail_closed).") {
		w.failf(s, "crashing fail_closed stop hook: no pass was asked for with the generic reason")
	}
	if w.server.Contains(cmStderr) {
		w.failf(s, "a handler's stderr reached the model")
	}
}

// bmGoneKit is a kit of one gate on the shell tool under policy that
// denies every command naming "gated".
func bmGoneKit(p, policy string) map[string]string {
	return matrixFiles(bmPkg, "A "+policy+" gate.", []cmHook{{id: "gate", subject: "tool_call", phase: "before", effect: "gate",
		policy: policy, tools: shellTool[p], when: "*gated*", result: `{"kind":"deny","reason":"` + markGate + `"}`}})
}

// testBashMatrixGoneClosed deletes the dispatcher of an installed
// required fail_closed gate: the gated command does not run, and doctor
// says the harness blocks every call meanwhile. On Qwen the block's
// reason, the entry's guard's stderr, reaches the model (exit 2); Copilot
// denies every failed PreToolUse hook, and shows the model no reason.
func testBashMatrixGoneClosed(t *testing.T, p string) {
	t.Parallel()
	w := newWorld(t, p, fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
	w.installSource(bmID, bmPkg, bmGoneKit(p, "fail_closed"))
	s := w.dispatcherGone("blocks every PreToolUse action until it runs again", "NOT in force: its dispatcher")
	if w.exists("gated-ran") {
		w.failf(s, "the dispatcher is gone, and the command the required fail_closed gate guards ran")
	}
	if p == "qwen" && !w.server.Contains("a required fail_closed hook guards PreToolUse, so dalo blocks it") {
		w.failf(s, "the block's reason did not reach the model")
	}
}

// testBashMatrixGoneOpen deletes the dispatcher of an installed fail_open
// gate: the command runs, on Copilot too, which denies a call whose
// PreToolUse hook fails: dalo's entry maps the failure to a pass there
// (events.PreToolUse.failed_command). doctor says the hooks do not run.
func testBashMatrixGoneOpen(t *testing.T, p string) {
	t.Parallel()
	w := newWorld(t, p, fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
	w.installSource(bmID, bmPkg, bmGoneKit(p, "fail_open"))
	// Guarded where a failed command would deny the call.
	cmd := entryCommand(w, w.settings(), "PreToolUse")
	if guarded, denies := strings.Contains(cmd, " || { "), tableUnder(t, p).FailedCommandDenies("PreToolUse"); guarded != denies {
		t.Errorf("dalo's PreToolUse entry on %s is guarded = %v, where a failed command denies = %v: %s", p, guarded, denies, cmd)
	}
	s := w.dispatcherGone("the harness cannot dispatch, so its hooks do not run")
	if !w.exists("gated-ran") {
		w.failf(s, "the dispatcher of a fail_open gate is gone, and the command did not run")
	}
}

// testBashMatrixOff sets disableAllHooks in the settings file dalo's
// entries are in: the harness runs none of them, and doctor says so.
func testBashMatrixOff(t *testing.T, p string) {
	t.Parallel()
	w := newWorld(t, p, fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
	w.installSource(bmID, bmPkg, bmGoneKit(p, "fail_closed"))
	settings := w.settings()
	settings["disableAllHooks"] = true
	w.writeJSON(w.hooksFile(), settings)
	out, code := w.daloExit("doctor")
	if code != 1 || !strings.Contains(out, "sets disableAllHooks to true") || !strings.Contains(out, "NOT in force") {
		t.Errorf("doctor with the hooks off: exit %d, want 1 saying disableAllHooks is set:\n%s", code, out)
	}
	s := w.run("Run the command you are given.")
	if !w.exists("gated-ran") || w.server.Contains(markGate) {
		w.failf(s, "hooks off: the gated command ran = %v, the gate's reason reached the model = %v; want true, false", w.exists("gated-ran"), w.server.Contains(markGate))
	}
}

// testMatrixCopilotOffOtherFile sets disableAllHooks in another hook file
// of Copilot's (hooks/*.json): that switches off that file's hooks only,
// so dalo's gate still denies, and doctor says it is in force.
func testMatrixCopilotOffOtherFile(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "copilot", fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
	w.installSource(bmID, bmPkg, bmGoneKit("copilot", "fail_closed"))
	w.writeFile(filepath.Join(w.configHome(), "hooks", "mine.json"), `{"version": 1, "disableAllHooks": true, "hooks": {}}`+"\n")
	if out, code := w.daloExit("doctor"); code != 0 {
		t.Errorf("doctor with another file's switch on: exit %d, want 0:\n%s", code, out)
	}
	s := w.run("Run the command you are given.")
	if w.exists("gated-ran") || !w.server.Contains(markGate) {
		w.failf(s, "the gated command ran = %v, the gate's reason reached the model = %v; want false, true (another file's switch leaves dalo's entries on)", w.exists("gated-ran"), w.server.Contains(markGate))
	}
}

// testBashMatrixRemove installs into the user's own settings, runs a
// session (the harness reads, and Qwen edits, the file), and removes: the
// settings are the user's bytes again, with only the harness's own edit
// (Qwen's "$version", which it adds to a file without one) kept.
func testBashMatrixRemove(t *testing.T, p string) {
	t.Parallel()
	w := newWorld(t, p, fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
	user := "{\n    \"hooks\":   {\n        \"Notification\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]\n    }\n}\n"
	w.writeFile(w.hooksFile(), user)
	w.installSource(bmID, bmPkg, bmGoneKit(p, "fail_closed"))
	s := w.run("Run the command you are given.")
	if w.exists("gated-ran") || !w.server.Contains(markGate) {
		w.failf(s, "the gate did not deny: the gated command ran = %v, its reason reached the model = %v", w.exists("gated-ran"), w.server.Contains(markGate))
	}
	after, _ := os.ReadFile(w.hooksFile())
	t.Logf("settings after the session:\n%s", after)
	w.dalo("plugin", "remove", bmID+":"+bmPkg, "--provider", w.key)
	got, err := os.ReadFile(w.hooksFile())
	if err != nil {
		t.Fatal(err)
	}
	want := user
	if p == "qwen" {
		// Qwen's own edit of the user's file, as it makes it (finding 64).
		if !strings.Contains(string(after), `"$version": 4`) {
			t.Errorf("Qwen did not add \"$version\" to the settings; the test no longer shows it is tolerated")
		}
		// It indents the member as the file's own.
		want = strings.TrimSuffix(user, "\n}\n") + ",\n    \"$version\": 4\n}\n"
	}
	if string(got) != want {
		t.Errorf("after remove the settings are\n%q\nwant the user's bytes\n%q", got, want)
	}
	if out, code := w.daloExit("doctor"); code != 0 {
		t.Errorf("doctor after remove: exit %d:\n%s", code, out)
	}
}

// testBashMatrixInstruction enables a standing instruction for the
// harness: dalo writes it into the table's instruction file, and it
// reaches the model.
func testBashMatrixInstruction(t *testing.T, p string) {
	t.Parallel()
	w := newWorld(t, p, fakemodel.Script{fakemodel.Say("Done.")})
	src := filepath.Join(w.root, "src-"+srcID)
	writeSource(t, src, sourceFiles)
	w.dalo("source", "add", srcID, src)
	// The user has run the harness before: its configuration home exists.
	if err := os.MkdirAll(w.configHome(), 0o755); err != nil {
		t.Fatal(err)
	}
	w.dalo("instruction", "enable", srcID+":"+pkgName, "instruction:live-context", "--target", p)
	s := w.run("Say something short.")
	if !w.server.Contains(markInstruction) {
		ents, _ := os.ReadDir(w.configHome())
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		w.failf(s, "the enabled instruction %s did not reach the model (configuration home holds %v)", markInstruction, names)
	}
}

// testMatrixCopilotFirstRun installs with a bare --provider copilot in a
// world whose cache is empty, as on a new user's machine: Copilot CLI
// unpacks itself before it prints its two-line version, and dalo finds
// the table of exactly that version.
func testMatrixCopilotFirstRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "copilot", fakemodel.Script{fakemodel.Say("Done.")})
	cache := filepath.Join(w.root, "fresh-cache")
	w.SetEnv("XDG_CACHE_HOME", cache)
	src := filepath.Join(w.root, "src-"+gateSource)
	writeSource(t, src, bmGoneKit("copilot", "fail_closed"))
	w.dalo("source", "add", gateSource, src)
	ref := gateSource + ":" + bmPkg
	w.dalo("plugin", "approve", ref, "--provider", "copilot", "--all", "--yes")
	out := w.dalo("plugin", "install", ref, "--provider", "copilot")
	if !strings.Contains(out, "copilot@1.0.102") {
		t.Errorf("install with a bare --provider copilot did not use copilot@1.0.102:\n%s", out)
	}
	ents, err := os.ReadDir(filepath.Join(cache, "copilot"))
	if err != nil || len(ents) == 0 {
		t.Errorf("Copilot CLI unpacked nothing into the fresh cache (%v): this is no first run", err)
	}
}
