//go:build unix

package live

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"dalo/internal/fakemodel"
)

// Codex's headless exec prints none of what hooks show the user (findings
// 27, 28, 34). Its app server (codex app-server, the JSON-RPC protocol over
// stdio its IDE integrations speak) does: each hook run ends in a
// hook/completed notification whose entries are what the run showed, by
// kind: "warning" for a systemMessage, "feedback" for a block reason,
// "context" for added context. These tests read the user channel there.

// A hookRun is the run summary of one hook/completed notification: one
// native event's hooks (dalo's dispatcher) and what they showed.
type hookRun struct {
	EventName string `json:"eventName"`
	Status    string `json:"status"`
	// ExecutionMode is "sync" or "async" (an entry with async: true,
	// Codex 0.148 and later); empty where Codex does not say.
	ExecutionMode string `json:"executionMode"`
	Entries       []struct {
		Kind string `json:"kind"`
		Text string `json:"text"`
	} `json:"entries"`
}

// entry returns the text of run's first entry of kind holding every one of
// parts, or false.
func (r hookRun) entry(kind string, parts ...string) (string, bool) {
next:
	for _, e := range r.Entries {
		if e.Kind != kind {
			continue
		}
		for _, p := range parts {
			if !strings.Contains(e.Text, p) {
				continue next
			}
		}
		return e.Text, true
	}
	return "", false
}

// An appSession is what one codex app-server session sent its client.
type appSession struct {
	runs     []hookRun
	requests []appRequest // what the server asked its client
	items    []appItem    // command executions, as completed
	stdout   string       // the protocol messages, one a line
	stderr   string
}

// An appRequest is one request the app server sent its client.
type appRequest struct {
	Method string
	Params map[string]any
}

// An appItem is a command execution item as the app server completed it:
// the command and its status (completed, failed, declined).
type appItem struct {
	Command string `json:"command"`
	Status  string `json:"status"`
}

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
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness(w.t, "codex"), "app-server")
	cmd.Dir = w.work
	cmd.Env = w.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatalf("codex app-server: %v", err)
	}
	var a appSession
	var lines strings.Builder
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	fail := func(format string, args ...any) {
		w.t.Helper()
		in.Close()
		cmd.Wait()
		w.t.Fatalf("codex app-server: "+format+"\nprotocol:\n%s\nstderr:\n%s", append(args, clip(lines.String()), clip(stderr.String()))...)
	}
	send := func(msg map[string]any) {
		b, err := json.Marshal(msg)
		if err != nil {
			w.t.Fatal(err)
		}
		if _, err := in.Write(append(b, '\n')); err != nil {
			fail("writing %s: %v", msg["method"], err)
		}
	}
	// read reads messages, keeping hook runs, requests and command items,
	// until one satisfies done; it returns that one.
	type message struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	read := func(what string, done func(message) bool) message {
		w.t.Helper()
		for sc.Scan() {
			lines.Write(sc.Bytes())
			lines.WriteByte('\n')
			var m message
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				fail("not a protocol message: %q", sc.Text())
			}
			if m.Error != nil {
				fail("error answer: %s", m.Error)
			}
			switch {
			case m.ID != nil && m.Method != "":
				// A request of the server's: an approval.
				var p map[string]any
				json.Unmarshal(m.Params, &p)
				a.requests = append(a.requests, appRequest{m.Method, p})
				send(map[string]any{"id": m.ID, "result": map[string]any{"decision": th.decision}})
			case m.Method == "hook/completed":
				var p struct{ Run hookRun }
				if err := json.Unmarshal(m.Params, &p); err != nil {
					fail("hook/completed: %v", err)
				}
				a.runs = append(a.runs, p.Run)
			case m.Method == "item/completed":
				var p struct {
					Item struct {
						Type string `json:"type"`
						appItem
					} `json:"item"`
				}
				if err := json.Unmarshal(m.Params, &p); err != nil {
					fail("item/completed: %v", err)
				}
				if p.Item.Type == "commandExecution" {
					a.items = append(a.items, p.Item.appItem)
				}
			}
			if done(m) {
				return m
			}
		}
		if what != "" {
			fail("ended before %s (%v)", what, sc.Err())
		}
		return message{}
	}
	answer := func(id int) func(message) bool {
		return func(m message) bool { return string(m.ID) == strconv.Itoa(id) && m.Method == "" }
	}
	send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{
		"clientInfo": map[string]any{"name": "dalo-live", "version": "0"}}})
	read("the initialize answer", answer(1))
	send(map[string]any{"method": "initialized"})
	send(map[string]any{"id": 2, "method": "thread/start", "params": map[string]any{
		"cwd": w.work, "approvalPolicy": th.policy, "sandbox": th.sandbox,
		"config": w.codexTrust().config}})
	var started struct {
		Thread struct{ ID string } `json:"thread"`
	}
	if err := json.Unmarshal(read("the thread/start answer", answer(2)).Result, &started); err != nil || started.Thread.ID == "" {
		fail("thread/start answer: no thread id (%v)", err)
	}
	for i, prompt := range prompts {
		id := 3 + i
		send(map[string]any{"id": id, "method": "turn/start", "params": map[string]any{
			"threadId": started.Thread.ID,
			"input":    []any{map[string]any{"type": "text", "text": prompt}}}})
		var turn struct {
			Turn struct{ ID string } `json:"turn"`
		}
		interrupted := false
		read(fmt.Sprintf("turn %d completed", i+1), func(m message) bool {
			switch {
			case m.Method == "" && string(m.ID) == strconv.Itoa(id):
				json.Unmarshal(m.Result, &turn)
			case th.interrupt && !interrupted && m.Method == "item/started" && strings.Contains(string(m.Params), `"type":"commandExecution"`):
				interrupted = true
				send(map[string]any{"id": 100 + i, "method": "turn/interrupt", "params": map[string]any{
					"threadId": started.Thread.ID, "turnId": turn.Turn.ID}})
			}
			return m.Method == "turn/completed"
		})
	}
	in.Close()
	read("", func(message) bool { return false })
	cmd.Wait()
	if ctx.Err() != nil {
		w.t.Fatalf("codex app-server: no end within %v\nprotocol:\n%s", sessionTimeout, clip(lines.String()))
	}
	a.stdout, a.stderr = lines.String(), stderr.String()
	w.t.Logf("codex app-server session: %d hook runs, %d model requests", len(a.runs), len(w.server.Requests()))
	return a
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
				if text, ok := blocked.entry("warning", diag, "  stderr: "+markPromptStderr); !ok {
					w.failApp(a, "crashed gate: the user was not shown the diagnostic with its stderr as a warning")
				} else {
					t.Logf("user channel, blocked prompt (warning): %q", text)
				}
				if _, ok := blocked.entry("feedback", "the details were shown to the user"); ok {
					w.failApp(a, "crashed gate: the user was shown the generic text meant for a model")
				}
			}
			if text, ok := blocked.entry("feedback", feedback...); !ok {
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
