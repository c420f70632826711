//go:build unix

package live

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"dalo/internal/fakemodel"
	"dalo/internal/scenario"
)

// Native facts the tables' "unsupported" claims and the SessionEnd user
// channel rest on, proved against the harnesses themselves: the first two
// tests configure a hook by hand in the harness's own hook file (no dalo),
// a small shell script that records when it ran and what it was given and
// answers what the test makes it answer; the last installs a dalo kit and
// looks everywhere Codex could show a failed SessionEnd hook.

const (
	natFinal   = scenario.NativeFinal
	natText    = scenario.NativeText
	natStderr  = scenario.NativeStderr
	natRanFile = "nat-ran"
	// natHookScript is the hand-configured native hook
	// (scenario.NativeHookScript).
	natHookScript = scenario.NativeHookScript
)

// natEvents are the native events natConfigure hooks.
var natEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"}

// natScript is the model's turn: one shell command, then the answer.
var natScript = fakemodel.Script{fakemodel.Run("echo nat-out; touch " + natRanFile), fakemodel.Say(natFinal)}

// natConfigure writes the harness's own hook file, as a user would by
// hand: one natHookScript entry per event of natEvents ($CLAUDE_CONFIG_DIR/
// settings.json, $CODEX_HOME/hooks.json; same shape), each with a 10 s
// timeout.
func (w *world) natConfigure() {
	w.t.Helper()
	w.natConfigureEvents(10, natEvents...)
}

// natAnswer makes the first run of event's hook print stdout, write stderr
// to stderr and exit with status exit (each only when set).
func (w *world) natAnswer(event, stdout, stderr string, exit int) {
	w.t.Helper()
	if err := w.NativeAnswer(event, stdout, stderr, exit); err != nil {
		w.t.Fatal(err)
	}
}

// natTimes returns when each run of event's hook started, in order.
func (w *world) natTimes(event string) []time.Time {
	var ts []time.Time
	for _, l := range strings.Fields(w.output(event + ".time")) {
		if ns, err := strconv.ParseInt(l, 10, 64); err == nil {
			ts = append(ts, time.Unix(0, ns))
		}
	}
	return ts
}

// natPayloads returns the native payload of each run of event's hook.
func (w *world) natPayloads(event string) []map[string]any {
	w.t.Helper()
	ps, err := w.NativePayloads(event)
	if err != nil {
		w.t.Error(err)
	}
	return ps
}

// TestNativeSessionEnd proves that no model request follows SessionEnd
// (the reason session/end's model_and_user failures are unsupported on
// both harnesses): in a session of one shell call and an answer, the hand
// configured SessionEnd hook runs once, after the model's last request
// was received, and answers the context other events carry to the model
// (hookSpecificOutput.additionalContext with a marker); the model is asked
// nothing more, so the marker reaches it nowhere. Claude Code refuses that
// answer outright (it prints a validation error on its stderr); Codex
// ignores it without a word.
func TestNativeSessionEnd(t *testing.T) {
	t.Parallel()
	needs(t, probed...)
	for _, p := range probed {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, p, natScript)
			w.natConfigure()
			w.natAnswer("SessionEnd", `{"hookSpecificOutput":{"hookEventName":"SessionEnd","additionalContext":"`+natText+`"}}`, "", 0)
			s := w.run("Run the command, nat-session-end.")

			turns := natTurns(w.server)
			if len(turns) != 2 || !w.exists(natRanFile) {
				w.failf(s, "model turns = %d, command ran = %v; want 2 (the call, the answer) and true", len(turns), w.exists(natRanFile))
			}
			ends, stops := w.natTimes("SessionEnd"), w.natTimes("Stop")
			if len(ends) != 1 || len(stops) != 1 {
				w.failf(s, "SessionEnd ran %d times, Stop %d; want once each", len(ends), len(stops))
				return
			}
			if ps := w.natPayloads("SessionEnd"); len(ps) != 1 || ps[0]["hook_event_name"] != "SessionEnd" {
				w.failf(s, "SessionEnd payloads %v", ps)
			}
			for i, q := range turns {
				if !q.Time.Before(stops[0]) || !q.Time.Before(ends[0]) {
					w.failf(s, "model request %d received at %v, after Stop (%v) or SessionEnd (%v) ran", i, q.Time, stops[0], ends[0])
				}
			}
			if !stops[0].Before(ends[0]) {
				w.failf(s, "SessionEnd ran at %v, before Stop at %v", ends[0], stops[0])
			}
			t.Logf("last model request %v, Stop %v, SessionEnd %v (+%v)", turns[len(turns)-1].Time.Format(time.StampMicro),
				stops[0].Format(time.StampMicro), ends[0].Format(time.StampMicro), ends[0].Sub(turns[len(turns)-1].Time).Round(time.Millisecond))
			if w.server.Contains(natText) {
				w.failf(s, "SessionEnd's context reached the model")
			}
			switch p {
			case "claude":
				if !strings.Contains(s.stderr, "SessionEnd hook") || !strings.Contains(s.stderr, "validation failed") {
					w.failf(s, "Claude Code did not refuse SessionEnd's additionalContext on its stderr")
				}
			case "codex":
				t.Logf("SessionEnd context on Codex's stdout %v, stderr %v",
					strings.Contains(s.stdout, natText), strings.Contains(s.stderr, natText))
			}
		})
	}
}

// natStopCases are the answers a Stop hook can give the model text with,
// and what each harness did with it: resumes says the model took another
// turn carrying the text (and Stop fired again, with stop_hook_active
// true); refused says the harness rejected the answer (Codex exec prints
// "hook: Stop Failed"); otherwise the text reached the model nowhere and
// the turn ended.
var natStopCases = []struct {
	name, stdout, stderr string
	exit                 int
	resumes, refused     map[string]bool
}{
	{name: "additional_context", stdout: `{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"` + natText + `"}}`,
		resumes: map[string]bool{"claude": true}, refused: map[string]bool{"codex": true}},
	{name: "decision_block", stdout: `{"decision":"block","reason":"` + natText + `"}`,
		resumes: map[string]bool{"claude": true, "codex": true}},
	{name: "exit_2", stderr: natText, exit: 2,
		resumes: map[string]bool{"claude": true, "codex": true}},
	{name: "system_message", stdout: `{"systemMessage":"` + natText + `"}`},
	{name: "plain_stdout", stdout: natText, refused: map[string]bool{"codex": true}},
}

// TestNativeStop proves what a Stop hook can do to get text to the model
// (the reason workflow/stop's report and fail_open failures cannot promise
// model_and_user delivery): on Claude Code every answer that reaches the
// model, additionalContext included, resumes the turn: the model is asked
// once more with the text, and Stop fires again with stop_hook_active
// true; on Codex additionalContext is refused and the only answers that
// reach the model (decision block, exit 2) resume the turn likewise. A
// systemMessage or plain stdout reaches the model on neither.
func TestNativeStop(t *testing.T) {
	t.Parallel()
	needs(t, probed...)
	for _, p := range probed {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			harness(t, p)
			for _, c := range natStopCases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					w := newWorld(t, p, natScript)
					w.natConfigure()
					w.natAnswer("Stop", c.stdout, c.stderr, c.exit)
					s := w.run("Run the command, nat-stop.")

					turns, stops := natTurns(w.server), w.natTimes("Stop")
					ps := w.natPayloads("Stop")
					carried := -1
					for i, q := range turns {
						if q.Contains(natText) && carried < 0 {
							carried = i
							t.Logf("the model read: %q", modelText(q, natText))
						}
					}
					if c.resumes[p] {
						if len(turns) != 3 || carried != 2 || len(stops) != 2 || len(ps) != 2 {
							w.failf(s, "model turns %d, text first carried by request %d, Stop ran %d times; want 3, the third, twice: the turn resumed with the text",
								len(turns), carried, len(stops))
							return
						}
						if !stops[0].Before(turns[2].Time) || !turns[2].Time.Before(stops[1]) {
							w.failf(s, "the third model request (%v) is not between the Stop runs (%v, %v)", turns[2].Time, stops[0], stops[1])
						}
						if ps[0]["stop_hook_active"] != false || ps[1]["stop_hook_active"] != true {
							w.failf(s, "stop_hook_active %v then %v, want false then true", ps[0]["stop_hook_active"], ps[1]["stop_hook_active"])
						}
					} else {
						if len(turns) != 2 || carried >= 0 || len(stops) != 1 {
							w.failf(s, "model turns %d, text carried by request %d, Stop ran %d times; want 2, none, once: the turn ended without the text",
								len(turns), carried, len(stops))
						}
					}
					if p == "codex" {
						failed := strings.Contains(s.stderr, "hook: Stop Failed")
						if failed != c.refused[p] {
							w.failf(s, "codex printed hook: Stop Failed = %v, want %v", failed, c.refused[p])
						}
					}
				})
			}
		})
	}
}

// natKit is an author source whose two hooks fail under report with
// error_visibility user: on session/end its handler records its stdin,
// writes natStderr to stderr and exits 9; on workflow/stop it writes
// natStopStderr and exits 8, a failure Codex's app server shows (finding
// 37), so that the session shows where a failure would appear.
var natKit = map[string]string{
	"plugins/nat-kit/PLUGIN.toml": `schema_version = 1

[plugin]
name = "nat-kit"
description = "A session end observer whose handler fails."

[[tool]]
schema_version = 1
id = "end-fail"
entry = "end-fail.sh"
runtime = "executable"
argv = []
cwd = "tool_root"
availability = "required"
env = ["PATH", "LIVE_OUT"]
capabilities = ["filesystem_write"]

[[hook]]
schema_version = 1
id = "end-fail"
tool = "end-fail"
subject = "session"
phase = "end"
effect = "observe"
requirement = "required"
timeout_ms = 2000
failure_policy = "report"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"

[[tool]]
schema_version = 1
id = "stop-fail"
entry = "stop-fail.sh"
runtime = "executable"
argv = []
cwd = "tool_root"
availability = "required"
env = ["PATH"]
capabilities = []

[[hook]]
schema_version = 1
id = "stop-fail"
tool = "stop-fail"
subject = "workflow"
phase = "stop"
effect = "observe"
requirement = "required"
timeout_ms = 2000
failure_policy = "report"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
`,
	"plugins/nat-kit/end-fail.sh": "#!/bin/sh\ncat >> \"$LIVE_OUT/end-fail.stdin\"\necho >> \"$LIVE_OUT/end-fail.stdin\"\n" +
		"echo '" + natStderr + "' >&2\nexit 9\n",
	"plugins/nat-kit/stop-fail.sh": "#!/bin/sh\ncat > /dev/null\necho '" + natStopStderr + "' >&2\nexit 8\n",
}

// natStopStderr is what natKit's Stop handler writes to stderr.
const natStopStderr = "NAT-STOP-HANDLER-STDERR-71fe"

// natEndDiag is the diagnostic dalo renders for the user when natKit's
// hook fails.
const natEndDiag = "dalo: hook nat:nat-kit/end-fail failed (report): handler exited with status 9"

// TestNativeCodexSessionEndUser looks for where Codex 0.147.0 shows the
// user a failed SessionEnd hook (dalo's answer to a user-only failure
// there: the diagnostic on stderr and exit 1, as draft 0.1 mandates). It
// installs natKit and ends a session three ways: codex exec with RUST_LOG=
// trace, an app-server session closed by its client, and the interactive
// TUI on a pseudo-terminal quit with Ctrl-C. In each, Codex ran dalo's
// entry and the handler failed; replaying the payload Codex sent through
// the same entry gives exit 1 with the diagnostic and the handler's stderr
// on stderr. Neither the diagnostic nor the stderr is anywhere the user
// could read it: not on Codex's stdout (exec's output, the app server's
// protocol messages: no sessionEnd hook run, the TUI's screen), not on its
// stderr (trace logging included), in no file under the home directory
// (its session rollout, its log database $CODEX_HOME/logs_2.sqlite). The
// kit's Stop failure, in the same sessions, is shown by the app server and
// the TUI.
func TestNativeCodexSessionEndUser(t *testing.T) {
	t.Parallel()
	harness(t, "codex")
	for _, mode := range []string{"exec", "app_server", "tui"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "codex", natScript)
			w.installSource("nat", "nat-kit", natKit)
			var stdout, stderr string
			switch mode {
			case "exec":
				w.Env = append(w.Env, "RUST_LOG=trace")
				s := w.run("Run the command, nat-end-user.")
				stdout, stderr = s.stdout, s.stderr
				if !strings.Contains(stderr, "run_session_end_hooks") {
					t.Errorf("codex exec with RUST_LOG=trace logged no run_session_end_hooks span: the trace did not cover SessionEnd\nstderr:\n%s", clip(stderr))
				}
				// exec prints a status line per event's hooks, Stop's
				// included, but none for SessionEnd.
				if !strings.Contains(stderr, "hook: Stop Completed") || strings.Contains(stderr, "hook: SessionEnd") {
					t.Errorf("codex exec's hook status lines: Stop Completed %v, SessionEnd %v; want true, false",
						strings.Contains(stderr, "hook: Stop Completed"), strings.Contains(stderr, "hook: SessionEnd"))
				}
			case "tui":
				stdout = natScreenText(w.natTUI("Run the command, nat-end-user.", natStopStderr))
				// The same failure on Stop is shown: as the Stop hook's
				// "says:" line (0.147.0), or as a line under the answer
				// marked "Hook" (0.171.0).
				if i := strings.Index(stdout, "nat-kit/stop-fail failed (report)"); i < 0 || !strings.Contains(stdout, natStopStderr) {
					t.Errorf("the TUI did not show the Stop failure\nterminal:\n%s", clip(stdout))
				} else {
					t.Logf("the TUI showed the Stop failure: %q", stdout[max(0, i-60):i])
				}
			case "app_server":
				a := w.appServer("Run the command, nat-end-user.")
				stdout, stderr = a.stdout, a.stderr
				if runs := a.event("sessionEnd"); len(runs) != 0 {
					w.failApp(a, "the app server sent sessionEnd hook runs %+v; the table says Codex shows nothing", runs)
				}
				// The same failure on Stop is shown, as a warning of its run.
				stop := a.event("stop")
				if len(stop) != 1 {
					w.failApp(a, "stop hook runs %+v, want one", stop)
				} else if _, ok := stop[0].Entry("warning", "dalo: hook nat:nat-kit/stop-fail failed (report): handler exited with status 8", natStopStderr); !ok {
					w.failApp(a, "the stop hook run %+v does not show the Stop failure as a warning", stop[0])
				}
			}
			if !w.exists(natRanFile) || len(natTurns(w.server)) != 2 {
				t.Errorf("the session did not run as scripted: command ran %v, model turns %d, want true and 2", w.exists(natRanFile), len(natTurns(w.server)))
			}
			payload := strings.TrimSpace(w.output("end-fail.stdin"))
			if mode == "tui" && payload == "" && w.key != "codex@0.147.0" {
				// Codex 0.171.0's TUI, quit with Ctrl-C, runs no SessionEnd
				// hook its user trusted (it does with the trust bypass, and
				// codex exec and the app server do): nothing of it can show.
				for _, mark := range []string{natStderr, natEndDiag} {
					if strings.Contains(stdout, mark) {
						t.Errorf("the TUI ran no SessionEnd hook, yet showed %s", mark)
					}
				}
				t.Logf("%s TUI: the trusted SessionEnd hook did not run at quit (finding 55)", w.key)
				return
			}
			var p map[string]any
			if err := json.Unmarshal([]byte(payload), &p); err != nil || p["hook_event_name"] != "SessionEnd" {
				t.Fatalf("the SessionEnd handler did not run once on a SessionEnd payload: %q (%v)", payload, err)
			}
			for _, mark := range []string{natStderr, natEndDiag} {
				if strings.Contains(stdout, mark) || strings.Contains(stderr, mark) {
					t.Errorf("%q is on Codex's stdout (%v) or stderr (%v): the table says Codex shows nothing",
						mark, strings.Contains(stdout, mark), strings.Contains(stderr, mark))
				}
			}
			if files := w.homeFiles(natStderr); len(files) != 0 {
				t.Errorf("the handler's stderr is in %q: the table says Codex shows nothing", files)
			}
			if _, err := os.Stat(filepath.Join(w.home, ".codex", "logs_2.sqlite")); err != nil {
				t.Errorf("Codex's log database: %v", err)
			}
			code, errOut := w.natReplay("SessionEnd", payload)
			if code != 1 || !strings.Contains(errOut, natEndDiag) || !strings.Contains(errOut, natStderr) {
				t.Errorf("dalo's SessionEnd entry on the payload Codex sent: exit %d, stderr %q; want 1 with %q and the handler's stderr", code, errOut, natEndDiag)
			}
		})
	}
}

// natReplay runs the command of the entry install wrote for event in
// $CODEX_HOME/hooks.json, as Codex runs it (sh -c, the world's env, the
// project dir), with payload on stdin, and returns its exit status and
// stderr.
func (w *world) natReplay(event, payload string) (int, string) {
	w.t.Helper()
	path := filepath.Join(w.home, ".codex", "hooks.json")
	b, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string }
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Hooks[event]) != 1 || len(doc.Hooks[event][0].Hooks) != 1 {
		w.t.Fatalf("%s: want one %s entry (%v):\n%s", path, event, err, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), daloTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", doc.Hooks[event][0].Hooks[0].Command)
	cmd.Dir = w.work
	cmd.Env = w.Env
	cmd.Stdin = strings.NewReader(payload)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		w.t.Fatalf("replaying %s: %v", event, err)
	}
	return 0, stderr.String()
}

// natTUI runs Codex's interactive TUI on a pseudo-terminal (script(1)) with
// prompt, as a user who trusted the project, waits for the model's answer
// and the hooks after it (until the screen shows shown, boundedly), ends
// the session with Ctrl-C (repeated until the TUI exits) and returns the
// bytes the terminal was sent.
func (w *world) natTUI(prompt, shown string) string {
	w.t.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		w.t.Skip("no script(1) to give the TUI a terminal")
	}
	// The user trusted the project already (as codex exec records it,
	// finding 20): the TUI asks otherwise before its first turn.
	cfg := filepath.Join(w.home, ".codex", "config.toml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	w.writeFile(cfg, string(b)+"\n[projects."+strconv.Quote(w.work)+"]\ntrust_level = \"trusted\"\n")
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	// script's terminal has no size unless told one.
	line := "stty rows 40 cols 120; " + harness(w.t, "codex") + " --dangerously-bypass-approvals-and-sandbox " +
		strings.Join(w.codexTrust().flags, " ") + " '" + prompt + "'"
	cmd := w.terminal(ctx, line, 120, 40)
	in, err := cmd.StdinPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The TUI starts by asking the terminal for the cursor position, its
	// colours, its keyboard protocol and its attributes, and waits for
	// the answers a terminal gives.
	asked := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "\x1b[c") && time.Now().Before(asked) {
		time.Sleep(50 * time.Millisecond)
	}
	in.Write([]byte("\x1b[1;1R\x1b]10;rgb:ffff/ffff/ffff\x1b\\\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[?0u\x1b[?62;22c"))
	deadline := time.Now().Add(30 * time.Second)
	for len(natTurns(w.server)) < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	// The hooks after the answer: polled for what they show, not given
	// a fixed second that a loaded machine can miss.
	for !strings.Contains(natScreenText(out.String()), shown) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	for i := 0; i < 4; i++ {
		in.Write([]byte{3})
		select {
		case err := <-done:
			w.t.Logf("codex TUI: %d model turns, exit %v after %d Ctrl-C", len(natTurns(w.server)), err, i+1)
			return out.String()
		case <-time.After(2 * time.Second):
		}
	}
	w.t.Fatalf("codex TUI did not exit on Ctrl-C\nterminal:\n%s", clip(out.String()))
	return ""
}

// natScreenText returns the text of out, the bytes a TUI wrote: a cursor
// move is a space (a TUI may move the cursor between the words of a line
// instead of writing spaces), its other control sequences (CSI, OSC,
// charset selection) are removed, and runs of spaces are one.
func natScreenText(out string) string {
	out = natMove.ReplaceAllString(out, " ")
	out = natControl.ReplaceAllString(out, "")
	return natSpaces.ReplaceAllString(out, " ")
}

var (
	natMove    = regexp.MustCompile("\x1b\\[[0-9;]*[CH]")
	natControl = regexp.MustCompile("\x1b(\\[[0-9;?<=>]*[ -/]*[@-~]|\\][^\x07\x1b]*(\x07|\x1b\\\\)|[()][0-9A-Za-z]|[=>78])")
	natSpaces  = regexp.MustCompile(" {2,}")
)

// A syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
