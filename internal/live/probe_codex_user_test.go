//go:build unix

package live

import (
	"testing"

	"dalo/internal/fakemodel"
	"dalo/internal/scenario"
)

// Codex's headless exec prints none of what hooks show the user (findings
// 27, 28, 34). Its app server (codex app-server, the JSON-RPC protocol over
// stdio its IDE integrations speak) does: each hook run ends in a
// hook/completed notification whose entries are what the run showed, by
// kind: "warning" for a systemMessage, "feedback" for a block reason,
// "context" for added context. These tests read the user channel there.

// A hookRun is what one hook/completed notification of the app server
// reports (scenario.HookRun).
type hookRun = scenario.HookRun

// An appSession is what one codex app-server session sent its client.
type appSession struct {
	runs     []hookRun
	requests []appRequest // what the server asked its client
	items    []appItem    // command executions, as completed
	stdout   string       // the protocol messages, one a line
	stderr   string
}

// An appRequest is one request the app server sent its client.
type appRequest = scenario.AppRequest

// An appItem is a command execution item as the app server completed it.
type appItem = scenario.AppItem

// appThread is how an app-server session's thread runs: its approval
// policy and sandbox mode, and the client's decision on every request the
// server sends (an approval).
type appThread struct {
	policy, sandbox, decision string
	// interrupt interrupts each turn (turn/interrupt) when its first
	// command starts, as a user pressing Esc does.
	interrupt bool
}

// asExec is a thread as codex exec runs one: no approvals, no sandbox.
var asExec = appThread{policy: "never", sandbox: "danger-full-access", decision: "decline"}

// event returns the hook runs of the native event (app-server spelling,
// e.g. "userPromptSubmit"), in order.
func (a appSession) event(name string) []hookRun {
	var runs []hookRun
	for _, r := range a.runs {
		if r.EventName == name {
			runs = append(runs, r)
		}
	}
	return runs
}

// appServer runs one codex app-server session in the project dir with a
// thread as exec runs one (asExec). See appServerWith.
func (w *world) appServer(prompts ...string) appSession {
	w.t.Helper()
	return w.appServerWith(asExec, prompts...)
}

// appServerWith runs one codex app-server session in the project dir: it
// starts a thread as th says (with the world's hook trust, codexTrust),
// answers every request the server
// sends with th.decision, and runs one turn per prompt (interrupted if
// th.interrupt says so), each to its
// turn/completed, then closes the server's stdin and waits for it to
// exit. It fails the test on a protocol error or a timeout.
func (w *world) appServerWith(th appThread, prompts ...string) appSession {
	w.t.Helper()
	harness(w.t, "codex")
	a, err := w.AppServerWith(scenario.AppThread{Policy: th.policy, Sandbox: th.sandbox, Decision: th.decision,
		Config: w.codexTrust().config, Interrupt: th.interrupt}, prompts...)
	if err != nil {
		w.t.Fatalf("%v\nprotocol:\n%s\nstderr:\n%s", err, clip(a.Stdout), clip(a.Stderr))
	}
	return appSession{runs: a.Runs, requests: a.Requests, items: a.Items, stdout: a.Stdout, stderr: a.Stderr}
}

// failApp reports a failed check with the app server's protocol messages.
func (w *world) failApp(a appSession, format string, args ...any) {
	w.t.Helper()
	w.t.Errorf(format+"\nprotocol:\n%s\nstderr:\n%s", append(args, clip(a.stdout), clip(a.stderr))...)
}

// TestCodexUserChannel runs the probe kit in a Codex app-server session in
// which three hooks with policy report and error_visibility = "user" fail:
// a prompt observer, a before and an after tool call context hook. Each
// action goes on; the user is shown each diagnostic with the handler's
// stderr as a warning of that event's hook run (dalo's systemMessage); the
// model reads neither. It is the scenario "codex-user-channel".
func TestCodexUserChannel(t *testing.T) {
	t.Parallel()
	harness(t, "codex")
	play(t, "codex", "codex-user-channel")
}

// TestCodexPromptGateUser runs the live kit's prompt gate in a Codex
// app-server session: a prompt it denies, and one on which it crashes under
// fail_closed with error_visibility = "user", each followed by a second
// prompt in the same thread. The blocked turn asks the model nothing; the
// user is shown the block reason as the prompt hook run's feedback (the
// handler's reason, or on the crash dalo's diagnostic with the handler's
// stderr, the table's user_only) and, on the crash, the diagnostic as a
// warning too; no later model request holds the blocked prompt, its reason
// or the stderr.
func TestCodexPromptGateUser(t *testing.T) {
	t.Parallel()
	harness(t, "codex")
	for _, c := range []struct{ name, prompt, word string }{
		{"deny", "Please handle the forbidden-prompt now.", "forbidden-prompt"},
		{"crash_fail_closed", "Please handle the crash-prompt now.", "crash-prompt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "codex", fakemodel.Script{fakemodel.Run("touch ran"), fakemodel.Say("Done.")})
			w.install()
			a := w.appServer(c.prompt, "Now run the command you are given.")

			runs := a.event("userPromptSubmit")
			if len(runs) != 2 {
				w.failApp(a, "want 2 userPromptSubmit hook runs (one a turn), got %d", len(runs))
				return
			}
			blocked := runs[0]
			if blocked.Status != "blocked" {
				w.failApp(a, "the gate's hook run has status %q, want blocked", blocked.Status)
			}
			gate := "[" + srcID + ":" + pkgName + "/prompt-gate] "
			feedback := []string{gate + markPromptDeny}
			if c.name == "crash_fail_closed" {
				diag := "dalo: hook " + srcID + ":" + pkgName + "/prompt-gate failed (fail_closed): handler exited with status 3"
				feedback = []string{diag, "  stderr: " + markPromptStderr}
				if text, ok := blocked.Entry("warning", diag, "  stderr: "+markPromptStderr); !ok {
					w.failApp(a, "crashed gate: the user was not shown the diagnostic with its stderr as a warning")
				} else {
					t.Logf("user channel, blocked prompt (warning): %q", text)
				}
				if _, ok := blocked.Entry("feedback", "the details were shown to the user"); ok {
					w.failApp(a, "crashed gate: the user was shown the generic text meant for a model")
				}
			}
			if text, ok := blocked.Entry("feedback", feedback...); !ok {
				w.failApp(a, "blocked prompt: the user was not shown the block reason %q as feedback (the run showed %+v)", feedback, blocked.Entries)
			} else {
				t.Logf("user channel, blocked prompt (feedback): %q", text)
			}
			if runs[1].Status == "blocked" {
				w.failApp(a, "the second prompt was blocked too")
			}

			// The model: nothing of the blocked turn, then the second
			// prompt without the blocked one, its reason or the stderr.
			if !w.server.Contains("Now run the command you are given.") || !w.exists("ran") {
				w.failApp(a, "second prompt: reached the model = %v, its command ran = %v; want true, true",
					w.server.Contains("Now run the command you are given."), w.exists("ran"))
			}
			for _, mark := range []string{c.word, markPromptDeny, markPromptStderr, "/prompt-gate"} {
				if w.server.Contains(mark) {
					w.failApp(a, "blocked prompt: %q reached the model", mark)
				}
			}
		})
	}
}
