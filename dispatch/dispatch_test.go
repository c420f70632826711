package dispatch_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"dalo/dispatch"
	"dalo/dispatch/dispatchtest"
	"dalo/plan"
)

var versions = map[string]string{"claude": "2.1.233", "codex": "0.147.0"}

// recorded returns a recorded native payload, decoded so that a test can
// change it, and its raw bytes.
func recorded(t *testing.T, provider, file string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "providers", "testdata", "recordings", provider, versions[provider], file+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func getenv(name string) (string, bool) { return os.LookupEnv(name) }

// dispatchEvent installs hooks for event in a fresh store, lets change
// damage it, and dispatches payload.
func dispatchEvent(t *testing.T, provider, event string, payload []byte, hooks []dispatchtest.Hook, change func(home string, p *plan.Plan)) dispatch.Native {
	t.Helper()
	return dispatchWithin(t, dispatchHung, provider, event, payload, hooks, change)
}

// dispatchWithin is dispatchEvent, failing the test when the dispatch
// takes longer than hung: a handler that should have been killed at once
// was not.
func dispatchWithin(t *testing.T, hung time.Duration, provider, event string, payload []byte, hooks []dispatchtest.Hook, change func(home string, p *plan.Plan)) dispatch.Native {
	t.Helper()
	if hungOnce.Load() {
		t.Fatal("not run: an earlier dispatch outlived its handler's limits (see the first failure)")
	}
	home := t.TempDir()
	p, err := dispatchtest.Install(home, provider, map[string][]dispatchtest.Hook{event: hooks})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { writable(home) })
	if change != nil {
		change(home, p)
	}
	type answer struct {
		out dispatch.Native
		err error
	}
	done := make(chan answer, 1)
	go func() {
		out, err := dispatch.Dispatch(dispatch.Request{Home: home, Provider: provider, Event: event, Payload: payload, Getenv: getenv})
		done <- answer{out, err}
	}()
	select {
	case a := <-done:
		if a.err != nil {
			t.Fatal(a.err)
		}
		return a.out
	case <-time.After(hung):
		// A handler dispatch failed to kill (its process group broken,
		// say) holds the dispatch: fail now, not at go test's timeout,
		// and end the handler so that the dispatch ends too. The
		// dispatches after it fail at once: each would wait as long.
		hungOnce.Store(true)
		killHandlers(t, home)
		t.Fatalf("dispatch did not return within %v: a handler outlived its limits", hung)
		return dispatch.Native{}
	}
}

// dispatchHung is how long a dispatch in these tests may take before it
// counts as hung: every handler here ends, or is killed, within seconds.
const dispatchHung = time.Minute

// hungOnce is set once a dispatch hung.
var hungOnce atomic.Bool

// killHandlers kills every process whose working directory is under home:
// the handlers, which run in their staged tool roots, and what they
// started. Only on Linux, where /proc says so.
func killHandlers(t *testing.T, home string) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		cwd, err := os.Readlink(p)
		if err != nil || !strings.HasPrefix(cwd, home+string(filepath.Separator)) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			t.Logf("killing handler process %d in %s", pid, cwd)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// native decodes a native answer on stdout.
type native struct {
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	SystemMessage      string `json:"systemMessage"`
	HookSpecificOutput struct {
		HookEventName            string          `json:"hookEventName"`
		AdditionalContext        string          `json:"additionalContext"`
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
		UpdatedToolOutput        json.RawMessage `json:"updatedToolOutput"`
	} `json:"hookSpecificOutput"`
}

func decode(t *testing.T, out dispatch.Native) native {
	t.Helper()
	var n native
	if len(out.Stdout) > 0 {
		if err := json.Unmarshal(out.Stdout, &n); err != nil {
			t.Fatalf("stdout is not JSON: %v\n%s", err, out.Stdout)
		}
	}
	return n
}

const stderrMarker = "SECRET-STDERR"

// TestTimeoutKillsGroup checks that a timeout kills the handler and what
// it started, and that dispatch returns then: the handler, had it lived,
// would have said so once its child ended (a timed-out handler left
// running still ends with "timed out", only 30 s later). The timeout
// leaves the handler ample time to start its child and say which, even on
// a loaded machine; the check then waits, boundedly, for the child to be
// gone.
func TestTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile, lived := filepath.Join(dir, "pid"), filepath.Join(dir, "lived")
	h := dispatchtest.Hook{
		ID: "slow", Subject: "tool_call", Phase: "before", Effect: "gate", TimeoutMS: 2000, Env: []string{"PATH"},
		Script: "#!/bin/sh\nsleep 30 &\necho $! > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "\nwait\n: > " + lived + "\n",
	}
	out := dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, nil)
	if n := decode(t, out); !strings.Contains(n.SystemMessage, "timed out") {
		t.Fatalf("systemMessage %q", n.SystemMessage)
	}
	if _, err := os.Stat(lived); err == nil {
		t.Fatal("the handler outlived its timeout: dispatch waited for it to end instead of killing it")
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the handler did not start its child within its timeout: %v", err)
	}
	waitGone(t, string(data), "survived the timeout")
}

// TestFailures runs every failure path under every policy and visibility,
// on both providers, as a PreToolUse gate.
func TestFailures(t *testing.T) {
	lim := plan.DraftLimits
	failures := []struct {
		name    string
		script  string
		timeout int
		change  func(home string, p *plan.Plan)
		payload func(map[string]any)
		diag    string // in the diagnostic
		stderr  bool   // the handler wrote stderrMarker
		// hung, when set, bounds the dispatch (else dispatchHung): a
		// handler killed as soon as it breaks a limit, under a timeout
		// far longer, returns well within it, and one the kill missed
		// fails the test then, naming the fault, instead of holding
		// the package until go test's timeout.
		hung time.Duration
	}{
		{name: "timeout", script: "#!/bin/sh\nexec sleep 120\n", timeout: 200, hung: 20 * time.Second, diag: "timed out after 200 ms"},
		{name: "crash", script: "#!/bin/sh\necho " + stderrMarker + " >&2\nexit 3\n", diag: "exited with status 3", stderr: true},
		{name: "signal", script: "#!/bin/sh\necho " + stderrMarker + " >&2\nkill -9 $$\n", diag: "killed by signal", stderr: true},
		{name: "huge-output", script: "#!/bin/sh\nexec yes\n", timeout: 120000, hung: 20 * time.Second, diag: fmt.Sprintf("handler wrote more than %d bytes to stdout and was killed", lim.ResponseBytes)},
		{name: "invalid-json", script: "#!/bin/sh\nprintf '{\"kind\":'\n", diag: "malformed result: result is not JSON"},
		{name: "two-objects", script: "#!/bin/sh\nprintf '{\"kind\":\"allow\"}{\"kind\":\"allow\"}'\n", diag: "data after its JSON object"},
		{name: "wrong-kind", script: "#!/bin/sh\nprintf '{\"kind\":\"add_context\",\"context\":\"x\"}'\n", diag: "does not match the declared effect"},
		{name: "nul", script: "#!/bin/sh\nprintf '{\"kind\":\"deny\",\"reason\":\"a\\\\u0000b\"}'\n", diag: "contains a NUL"},
		{name: "revoked-grant", script: "#!/bin/sh\nprintf '{\"kind\":\"allow\"}'\n", diag: "is revoked", change: func(home string, p *plan.Plan) {
			os.Remove(filepath.Join(home, "grants", p.Events["PreToolUse"][0].HookGrant.ID+".json"))
		}},
		{name: "regranted", script: "#!/bin/sh\nprintf '{\"kind\":\"allow\"}'\n", diag: "changed since install", change: func(home string, p *plan.Plan) {
			regrant(home, p.Events["PreToolUse"][0].ToolGrant.ID, func(b any) {
				b.(*plan.ToolBinds).Argv = []string{"--approved-again"}
			})
		}},
		{name: "changed-staged-file", script: "#!/bin/sh\nprintf '{\"kind\":\"allow\"}'\n", diag: "staged file changed", change: func(home string, p *plan.Plan) {
			tool := p.Events["PreToolUse"][0].Tool
			os.Chmod(filepath.Join(tool.Root, tool.Entry), 0o755)
			f, _ := os.OpenFile(filepath.Join(tool.Root, tool.Entry), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("# changed\n")
			f.Close()
		}},
		// Same bytes, the approved exec bit gone: a file whose mode
		// changed is not the file approved, and is not run (without the
		// check, exec would fail with another message, or a data file made
		// executable would run).
		{name: "staged-exec-bit", script: "#!/bin/sh\nprintf '{\"kind\":\"allow\"}'\n", diag: "staged file changed", change: func(home string, p *plan.Plan) {
			tool := p.Events["PreToolUse"][0].Tool
			os.Chmod(filepath.Join(tool.Root, tool.Entry), 0o444)
		}},
		{name: "missing-binding", script: "#!/bin/sh\nprintf '{\"kind\":\"allow\"}'\n", diag: "missing runtime binding: the native payload has no transcript.path", payload: func(m map[string]any) {
			m["transcript_path"] = nil
		}},
	}
	for _, provider := range []string{"claude", "codex"} {
		for _, f := range failures {
			for _, policy := range []string{"report", "fail_open", "fail_closed"} {
				for _, vis := range []string{"user", "model_and_user"} {
					t.Run(strings.Join([]string{provider, f.name, policy, vis}, "/"), func(t *testing.T) {
						t.Parallel()
						m := recorded(t, provider, "PreToolUse")
						if f.payload != nil {
							f.payload(m)
						}
						h := dispatchtest.Hook{
							ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate",
							Policy: policy, Visibility: vis, TimeoutMS: f.timeout, Script: f.script,
							Env:      []string{"PATH"},
							Argv:     []string{"${input.transcript}"},
							Inputs:   []plan.PlannedInput{{Name: "transcript", Type: "path", Required: true}},
							Bindings: []plan.PlannedBinding{{Input: "transcript", Field: "transcript.path", Type: "path"}},
						}
						hung := dispatchHung
						if f.hung > 0 {
							hung = f.hung
						}
						out := dispatchWithin(t, hung, provider, "PreToolUse", mustJSON(m), []dispatchtest.Hook{h}, f.change)
						if out.Exit != 0 || len(out.Stderr) != 0 {
							t.Fatalf("exit %d, stderr %q", out.Exit, out.Stderr)
						}
						n := decode(t, out)
						if !strings.Contains(n.SystemMessage, f.diag) || !strings.Contains(n.SystemMessage, "test:pkg/gate") {
							t.Errorf("systemMessage %q does not name the hook and %q", n.SystemMessage, f.diag)
						}
						if f.stderr && !strings.Contains(n.SystemMessage, stderrMarker) {
							t.Errorf("systemMessage %q lacks the handler's stderr", n.SystemMessage)
						}
						hso := n.HookSpecificOutput
						model := hso.AdditionalContext + hso.PermissionDecisionReason + n.Reason
						if strings.Contains(model, stderrMarker) {
							t.Errorf("handler stderr reached the model: %q", model)
						}
						if policy == "fail_closed" {
							if hso.PermissionDecision != "deny" {
								t.Fatalf("fail_closed: permissionDecision %q, want deny\n%s", hso.PermissionDecision, out.Stdout)
							}
							if got := strings.Contains(hso.PermissionDecisionReason, f.diag); got != (vis == "model_and_user") {
								t.Errorf("%s: reason %q (diagnostic shown: %v)", vis, hso.PermissionDecisionReason, got)
							}
							if vis == "user" && !strings.Contains(hso.PermissionDecisionReason, "details were shown to the user") {
								t.Errorf("user: reason %q is not the generic explanation", hso.PermissionDecisionReason)
							}
							return
						}
						if hso.PermissionDecision != "" || hso.UpdatedInput != nil {
							t.Errorf("%s left the action changed: %s", policy, out.Stdout)
						}
						if got := strings.Contains(hso.AdditionalContext, f.diag); got != (vis == "model_and_user") {
							t.Errorf("%s: additionalContext %q", vis, hso.AdditionalContext)
						}
					})
				}
			}
		}
	}
}

// waitGone waits, boundedly, for the process pid (as text) to be gone,
// and kills it and fails the test if it is not.
func waitGone(t *testing.T, pid, what string) {
	t.Helper()
	n, _ := strconv.Atoi(strings.TrimSpace(pid))
	for deadline := time.Now().Add(5 * time.Second); ; {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(n) + "/stat")
		// Gone, or a zombie waiting to be reaped: either way not running.
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(n, syscall.SIGKILL)
			t.Fatalf("the handler's child %d %s", n, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStopFailClosed follows one session's stops: a failing fail_closed
// stop hook asks for another pass at every stop, already continued or
// not, up to plan.FailClosedPasses in a row; past them it asks for none
// and the user is told; a new turn (a stop not already continued), or a
// stop whose hook ran, starts the count again.
func TestStopFailClosed(t *testing.T) {
	for _, provider := range []string{"claude", "codex"} {
		t.Run(provider, func(t *testing.T) {
			broken := filepath.Join(t.TempDir(), "broken")
			h := dispatchtest.Hook{ID: "check", Subject: "workflow", Phase: "stop", Effect: "continue_workflow",
				Policy: "fail_closed", Script: "#!/bin/sh\nif [ -e " + broken + " ]; then exit 1; fi\nprintf '{\"kind\":\"abstain\"}'\n"}
			home := t.TempDir()
			if _, err := dispatchtest.Install(home, provider, map[string][]dispatchtest.Hook{"Stop": {h}}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { writable(home) })
			first, again := mustJSON(recorded(t, provider, "Stop")), mustJSON(recorded(t, provider, "Stop.continued"))
			const pass, refused, quiet = "pass", "refused", "quiet"
			type step struct {
				what    string
				broken  bool // the handler fails
				payload []byte
				want    string
			}
			steps := []step{{"the turn's first stop", true, first, pass}}
			for i := 2; i <= plan.FailClosedPasses; i++ {
				steps = append(steps, step{fmt.Sprintf("continued stop %d", i), true, again, pass})
			}
			steps = append(steps,
				step{"past the bound", true, again, refused},
				step{"still past the bound", true, again, refused},
				step{"a new turn", true, first, pass},
			)
			// Up to the bound again: a stop whose hook ran must reset a
			// full count, not only a short one.
			for i := 2; i <= plan.FailClosedPasses; i++ {
				steps = append(steps, step{fmt.Sprintf("new turn, continued stop %d", i), true, again, pass})
			}
			steps = append(steps,
				step{"the hook runs", false, again, quiet},
				step{"failing again after it ran", true, again, pass},
			)
			for _, st := range steps {
				if st.broken {
					os.WriteFile(broken, nil, 0o644)
				} else {
					os.Remove(broken)
				}
				out, err := dispatch.Dispatch(dispatch.Request{Home: home, Provider: provider, Event: "Stop", Payload: st.payload, Getenv: getenv})
				if err != nil {
					t.Fatal(err)
				}
				n := decode(t, out)
				switch st.want {
				case pass:
					if n.Decision != "block" || !strings.Contains(n.Reason, "[test:pkg/check] This hook failed") || strings.Contains(n.Reason, "status 1") {
						t.Errorf("%s: decision %q reason %q, want another pass with the generic reason", st.what, n.Decision, n.Reason)
					}
				case refused:
					want := fmt.Sprintf("dalo: hook test:pkg/check is fail_closed, but failing fail_closed hooks already asked for %d workflow passes in a row, the most dalo asks for; not asking for another pass", plan.FailClosedPasses)
					if n.Decision != "" || !strings.Contains(n.SystemMessage, want) {
						t.Errorf("%s: decision %q, systemMessage %q, want no pass and %q", st.what, n.Decision, n.SystemMessage, want)
					}
				case quiet:
					if len(out.Stdout) != 0 {
						t.Errorf("%s: %s, want no answer", st.what, out.Stdout)
					}
				}
			}
		})
	}
}

// TestStopFailClosedUnknownContinued: a stop whose payload does not say
// whether it was already continued counts on from what is recorded, so a
// harness that never says cannot loop the agent past the bound.
func TestStopFailClosedUnknownContinued(t *testing.T) {
	h := dispatchtest.Hook{ID: "check", Subject: "workflow", Phase: "stop", Effect: "continue_workflow",
		Policy: "fail_closed", Script: "#!/bin/sh\nexit 1\n"}
	for _, provider := range []string{"claude", "codex"} {
		t.Run(provider, func(t *testing.T) {
			home := t.TempDir()
			if _, err := dispatchtest.Install(home, provider, map[string][]dispatchtest.Hook{"Stop": {h}}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { writable(home) })
			m := recorded(t, provider, "Stop.continued")
			delete(m, plan.Blocking[provider].Continued["Stop"])
			for i := 1; i <= plan.FailClosedPasses+1; i++ {
				out, err := dispatch.Dispatch(dispatch.Request{Home: home, Provider: provider, Event: "Stop", Payload: mustJSON(m), Getenv: getenv})
				if err != nil {
					t.Fatal(err)
				}
				n := decode(t, out)
				if got, want := n.Decision == "block", i <= plan.FailClosedPasses; got != want {
					t.Fatalf("stop %d: another pass = %v, want %v (systemMessage %q)", i, got, want, n.SystemMessage)
				}
			}
		})
	}
}

// TestStopFailClosedUncounted checks the stops whose passes cannot be
// counted: without a session id only a turn's first stop asks for a pass;
// with a count that cannot be written or read, none does, since an
// uncounted pass could be the first of an endless loop.
func TestStopFailClosedUncounted(t *testing.T) {
	h := dispatchtest.Hook{ID: "check", Subject: "workflow", Phase: "stop", Effect: "continue_workflow",
		Policy: "fail_closed", Script: "#!/bin/sh\nexit 1\n"}
	for _, provider := range []string{"claude", "codex"} {
		noSession := func(file string) []byte {
			m := recorded(t, provider, file)
			delete(m, "session_id")
			return mustJSON(m)
		}
		for _, c := range []struct {
			name    string
			payload []byte
			damage  func(home string)
			pass    bool
			why     string
		}{
			{"no session, first stop", noSession("Stop"), nil, true, ""},
			{"no session, continued", noSession("Stop.continued"), nil, false, "the payload names no session"},
			{"unreadable payload", []byte("not json"), nil, false, "does not say whether this stop was already continued"},
			{"unwritable count", mustJSON(recorded(t, provider, "Stop")), func(home string) {
				os.WriteFile(filepath.Join(home, plan.StopsDir), nil, 0o644) // a file where the directory goes
			}, false, "recording the pass count"},
			{"damaged count", mustJSON(recorded(t, provider, "Stop.continued")), func(home string) {
				if err := plan.SetStopPasses(home, provider, "00000000-0000-0000-0000-000000000000", 1); err != nil {
					t.Fatal(err)
				}
				dir := filepath.Join(home, plan.StopsDir, provider)
				ents, _ := os.ReadDir(dir)
				for _, e := range ents {
					os.WriteFile(filepath.Join(dir, e.Name()), []byte("many\n"), 0o600)
				}
			}, false, "not a count"},
		} {
			t.Run(provider+"/"+c.name, func(t *testing.T) {
				var change func(string, *plan.Plan)
				if c.damage != nil {
					change = func(home string, _ *plan.Plan) { c.damage(home) }
				}
				n := decode(t, dispatchEvent(t, provider, "Stop", c.payload, []dispatchtest.Hook{h}, change))
				if got := n.Decision == "block"; got != c.pass {
					t.Errorf("another pass = %v, want %v (systemMessage %q)", got, c.pass, n.SystemMessage)
				}
				if !c.pass && (!strings.Contains(n.SystemMessage, c.why) || !strings.Contains(n.SystemMessage, "not asking for another pass")) {
					t.Errorf("systemMessage %q, want why (%q)", n.SystemMessage, c.why)
				}
			})
		}
	}
}

// TestStopHandlerContinues checks that dalo does not bound the passes a
// handler asks for with its own continue_workflow results: whether to
// continue again is the handler's decision (it reads
// workflow.already_continued), and nothing is counted for it.
func TestStopHandlerContinues(t *testing.T) {
	h := dispatchtest.Hook{ID: "more", Subject: "workflow", Phase: "stop", Effect: "continue_workflow",
		Policy: "fail_closed", Script: "#!/bin/sh\nprintf '{\"kind\":\"continue_workflow\",\"reason\":\"Again.\"}'\n"}
	home := t.TempDir()
	if _, err := dispatchtest.Install(home, "codex", map[string][]dispatchtest.Hook{"Stop": {h}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { writable(home) })
	for i := 0; i < plan.FailClosedPasses+2; i++ {
		out, err := dispatch.Dispatch(dispatch.Request{Home: home, Provider: "codex", Event: "Stop", Payload: mustJSON(recorded(t, "codex", "Stop.continued")), Getenv: getenv})
		if err != nil {
			t.Fatal(err)
		}
		if n := decode(t, out); n.Decision != "block" || !strings.Contains(n.Reason, "Again.") {
			t.Fatalf("stop %d: decision %q reason %q, want the handler's pass", i+1, n.Decision, n.Reason)
		}
	}
	if _, err := os.Stat(filepath.Join(home, plan.StopsDir)); !os.IsNotExist(err) {
		t.Errorf("a handler's own passes were counted in the store (%v)", err)
	}
}

// TestSessionEnd checks that a failure on session end reaches the user
// through a nonzero exit, and that success says nothing.
func TestSessionEnd(t *testing.T) {
	for _, provider := range []string{"claude", "codex"} {
		payload := mustJSON(recorded(t, provider, "SessionEnd"))
		for _, vis := range []string{"user", "model_and_user"} {
			h := dispatchtest.Hook{ID: "bye", Subject: "session", Phase: "end", Effect: "observe", Visibility: vis,
				Script: "#!/bin/sh\necho boom >&2\nexit 4\n"}
			out := dispatchEvent(t, provider, "SessionEnd", payload, []dispatchtest.Hook{h}, nil)
			if out.Exit != 1 || len(out.Stdout) != 0 || !strings.Contains(string(out.Stderr), "exited with status 4") || !strings.Contains(string(out.Stderr), "boom") {
				t.Errorf("%s %s: exit %d stdout %q stderr %q", provider, vis, out.Exit, out.Stdout, out.Stderr)
			}
		}
		h := dispatchtest.Hook{ID: "bye", Subject: "session", Phase: "end", Effect: "observe",
			Script: "#!/bin/sh\nprintf '{\"kind\":\"observe\"}'\n"}
		out := dispatchEvent(t, provider, "SessionEnd", payload, []dispatchtest.Hook{h}, nil)
		if out.Exit != 0 || len(out.Stdout)+len(out.Stderr) != 0 {
			t.Errorf("%s observe: exit %d stdout %q stderr %q", provider, out.Exit, out.Stdout, out.Stderr)
		}
	}
}

// TestProcessContract checks argv, input substitution, cwd, environment
// and stdin of a handler.
func TestProcessContract(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DALO_TEST_DECLARED", "declared-value")
	t.Setenv("DALO_TEST_UNDECLARED", "leak")
	for _, provider := range []string{"claude", "codex"} {
		payload := mustJSON(recorded(t, provider, "Stop.continued"))
		script := "#!/bin/sh\n" +
			"printf '%s\\n' \"$@\" > " + dir + "/args\n" +
			"pwd > " + dir + "/cwd\n" +
			"env > " + dir + "/env\n" +
			"cat > " + dir + "/stdin\n" +
			"printf '{\"kind\":\"abstain\"}'\n"
		h := dispatchtest.Hook{
			ID: "probe", Subject: "workflow", Phase: "stop", Effect: "continue_workflow", Script: script,
			Env:  []string{"PATH", "DALO_TEST_DECLARED", "DALO_TEST_NOT_SET"},
			Argv: []string{"--again", "${input.again}", "${input.optional}", "${input.session}", "literal ${input.again}"},
			Inputs: []plan.PlannedInput{
				{Name: "again", Type: "boolean", Required: true},
				{Name: "optional", Type: "string", Required: false},
				{Name: "session", Type: "string", Required: true},
			},
			Bindings: []plan.PlannedBinding{
				{Input: "again", Field: "workflow.already_continued", Type: "boolean"},
				{Input: "session", Field: "session.id", Type: "string"},
			},
		}
		home := t.TempDir()
		p, err := dispatchtest.Install(home, provider, map[string][]dispatchtest.Hook{"Stop": {h}})
		if err != nil {
			t.Fatal(err)
		}
		out, err := dispatch.Dispatch(dispatch.Request{Home: home, Provider: provider, Event: "Stop", Payload: payload, Getenv: getenv})
		if err != nil || out.Exit != 0 || len(out.Stdout) != 0 {
			t.Fatalf("%s: exit %d stdout %s", provider, out.Exit, out.Stdout)
		}
		read := func(name string) string {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			return string(data)
		}
		wantArgs := "--again\ntrue\n00000000-0000-0000-0000-000000000000\nliteral ${input.again}\n"
		if got := read("args"); got != wantArgs {
			t.Errorf("%s argv:\n%s\nwant (the unbound optional input dropped):\n%s", provider, got, wantArgs)
		}
		if got := strings.TrimSpace(read("cwd")); got != p.Events["Stop"][0].Tool.Root {
			t.Errorf("%s cwd %s, want the staged root", provider, got)
		}
		env := read("env")
		if !strings.Contains(env, "DALO_TEST_DECLARED=declared-value") || strings.Contains(env, "DALO_TEST_UNDECLARED") || strings.Contains(env, "DALO_TEST_NOT_SET") || strings.Contains(env, "DALO_HOME") {
			t.Errorf("%s environment:\n%s", provider, env)
		}
		if got := read("stdin"); got != string(payload) {
			t.Errorf("%s stdin is not the raw payload: %q", provider, got)
		}
	}
}

// TestInterpreters runs a node and a python handler, found on dalo's PATH.
func TestInterpreters(t *testing.T) {
	for _, c := range []struct{ runtime, bin, script string }{
		{"node", "node", `process.stdout.write(JSON.stringify({kind: "add_context", context: "from node " + process.argv[2]}));`},
		// python3 runs with -E -s -B (#Runtimes): the handler says so if not.
		{"python", "python3", "import json, sys\nisolated = sys.flags.ignore_environment and sys.flags.no_user_site and sys.flags.dont_write_bytecode\nprint(json.dumps({'kind': 'add_context', 'context': 'from python ' + sys.argv[1] + ('' if isolated else ' without -E -s -B')}))\n"},
	} {
		if _, err := exec.LookPath(c.bin); err != nil {
			t.Logf("skipping %s: %v", c.runtime, err)
			continue
		}
		h := dispatchtest.Hook{ID: c.runtime, Subject: "prompt", Phase: "before", Effect: "add_context", Runtime: c.runtime,
			Script: c.script, Argv: []string{"${input.cwd}"}, Env: []string{"HOME"},
			Inputs:   []plan.PlannedInput{{Name: "cwd", Type: "path", Required: true}},
			Bindings: []plan.PlannedBinding{{Input: "cwd", Field: "session.cwd", Type: "path"}}}
		n := decode(t, dispatchEvent(t, "codex", "UserPromptSubmit", mustJSON(recorded(t, "codex", "UserPromptSubmit")), []dispatchtest.Hook{h}, nil))
		want := "[test:pkg/" + c.runtime + "] from " + c.runtime + " /tmp/work"
		if n.HookSpecificOutput.AdditionalContext != want {
			t.Errorf("%s: additionalContext %q, want %q (systemMessage %q)", c.runtime, n.HookSpecificOutput.AdditionalContext, want, n.SystemMessage)
		}
	}
}

func result(v string) string { return "#!/bin/sh\nprintf '%s' '" + v + "'\n" }

// TestCompose checks hook order, concurrency and every conflict rule.
func TestCompose(t *testing.T) {
	gate := func(pkg, id, out string) dispatchtest.Hook {
		return dispatchtest.Hook{Package: pkg, ID: id, Subject: "tool_call", Phase: "before", Effect: "gate", Script: result(out)}
	}
	rewrite := func(pkg, id, out string) dispatchtest.Hook {
		h := gate(pkg, id, out)
		h.Effect = "rewrite_input"
		return h
	}
	ctx := func(pkg, id, text string) dispatchtest.Hook {
		h := gate(pkg, id, `{"kind":"add_context","context":"`+text+`"}`)
		h.Effect = "add_context"
		return h
	}
	for _, provider := range []string{"claude", "codex"} {
		pre := mustJSON(recorded(t, provider, "PreToolUse"))

		n := decode(t, dispatchEvent(t, provider, "PreToolUse", pre, []dispatchtest.Hook{
			ctx("s:b", "x", "third"), ctx("s:a", "y", "second"), ctx("s:a", "b", "first"),
		}, nil))
		if want := "[s:a/b] first\n\n[s:a/y] second\n\n[s:b/x] third"; n.HookSpecificOutput.AdditionalContext != want {
			t.Errorf("%s contexts:\n%s\nwant\n%s", provider, n.HookSpecificOutput.AdditionalContext, want)
		}

		n = decode(t, dispatchEvent(t, provider, "PreToolUse", pre, []dispatchtest.Hook{
			gate("s:a", "ok", `{"kind":"allow"}`), gate("s:b", "no", `{"kind":"deny","reason":"Policy failed."}`),
		}, nil))
		if n.HookSpecificOutput.PermissionDecision != "deny" || n.HookSpecificOutput.PermissionDecisionReason != "[s:b/no] Policy failed." ||
			!strings.Contains(n.SystemMessage, "s:a/ok allowed, s:b/no denied") {
			t.Errorf("%s deny and allow: %+v", provider, n)
		}

		n = decode(t, dispatchEvent(t, provider, "PreToolUse", pre, []dispatchtest.Hook{
			rewrite("s:a", "r1", `{"kind":"rewrite_input","input":{"command":"echo one"}}`),
			rewrite("s:b", "r2", `{"kind":"rewrite_input","input":{"command":"echo two"}}`),
		}, nil))
		if n.HookSpecificOutput.PermissionDecision != "deny" || n.HookSpecificOutput.UpdatedInput != nil ||
			!strings.Contains(n.SystemMessage, "conflicting input rewrites by s:a/r1, s:b/r2") {
			t.Errorf("%s two rewrites: %+v", provider, n)
		}

		n = decode(t, dispatchEvent(t, provider, "PreToolUse", pre, []dispatchtest.Hook{
			rewrite("s:a", "r1", `{"kind":"rewrite_input","input":{"command":"echo one","timeout":1}}`),
			rewrite("s:b", "r2", `{"kind":"rewrite_input","input":{"timeout":1,"command":"echo one"}}`),
		}, nil))
		if string(n.HookSpecificOutput.UpdatedInput) != `{"command":"echo one","timeout":1}` || n.SystemMessage != "" {
			t.Errorf("%s agreeing rewrites: %+v", provider, n)
		}

		// Integers beyond 2^53 that float64 would make equal differ.
		n = decode(t, dispatchEvent(t, provider, "PreToolUse", pre, []dispatchtest.Hook{
			rewrite("s:a", "r1", `{"kind":"rewrite_input","input":{"command":"echo one","timeout":9007199254740992}}`),
			rewrite("s:b", "r2", `{"kind":"rewrite_input","input":{"command":"echo one","timeout":9007199254740993}}`),
		}, nil))
		if n.HookSpecificOutput.UpdatedInput != nil || !strings.Contains(n.SystemMessage, "conflicting input rewrites by s:a/r1, s:b/r2") {
			t.Errorf("%s rewrites differing beyond 2^53: %+v", provider, n)
		}

		n = decode(t, dispatchEvent(t, provider, "PreToolUse", pre, []dispatchtest.Hook{
			rewrite("s:a", "r1", `{"kind":"rewrite_input","input":{"command":"echo one"}}`),
			gate("s:b", "no", `{"kind":"deny","reason":"No."}`),
		}, nil))
		if n.HookSpecificOutput.PermissionDecision != "deny" || n.HookSpecificOutput.UpdatedInput != nil ||
			!strings.Contains(n.SystemMessage, "rewrite of s:a/r1 was not applied") {
			t.Errorf("%s rewrite and deny: %+v", provider, n)
		}

		// Matchers: exact native names; empty means every call.
		only := func(id string, names ...string) dispatchtest.Hook {
			h := ctx("s:m", id, id)
			h.ToolNames = names
			return h
		}
		n = decode(t, dispatchEvent(t, provider, "PreToolUse", pre, []dispatchtest.Hook{
			only("all"), only("bash", "Bash"), only("edit", "Edit", "Write"), only("lower", "bash"),
		}, nil))
		if want := "[s:m/all] all\n\n[s:m/bash] bash"; n.HookSpecificOutput.AdditionalContext != want {
			t.Errorf("%s matchers: %q, want %q", provider, n.HookSpecificOutput.AdditionalContext, want)
		}
	}

	// Different replacements leave the output unchanged (Claude only offers them).
	post := mustJSON(recorded(t, "claude", "PostToolUse"))
	repl := func(id, out string) dispatchtest.Hook {
		return dispatchtest.Hook{Package: "s:a", ID: id, Subject: "tool_call", Phase: "after", Effect: "replace_output", Script: result(out)}
	}
	n := decode(t, dispatchEvent(t, "claude", "PostToolUse", post, []dispatchtest.Hook{
		repl("one", `{"kind":"replace_output","output":{"stdout":"a","stderr":"","interrupted":false,"isImage":false}}`),
		repl("two", `{"kind":"replace_output","output":{"stdout":"b","stderr":"","interrupted":false,"isImage":false}}`),
	}, nil))
	if n.HookSpecificOutput.UpdatedToolOutput != nil || !strings.Contains(n.SystemMessage, "conflicting output replacements by s:a/one, s:a/two") {
		t.Errorf("two replacements: %+v", n)
	}
}

// TestUserOnlyDenyReason: where the table marks the deny channel user_only
// (UserPromptSubmit on both: the block reason reaches the user, never the
// model), a fail_closed failure's reason is its user diagnostic, with the
// handler's stderr, beside a handler's own deny reason; where the reason
// reaches the model (PreToolUse on both) it stays the generic text,
// without stderr.
func TestUserOnlyDenyReason(t *testing.T) {
	hook := func(pkg, id, subject, script string) dispatchtest.Hook {
		return dispatchtest.Hook{Package: pkg, ID: id, Subject: subject, Phase: "before", Effect: "gate",
			Policy: "fail_closed", Visibility: "user", Script: script}
	}
	crash := "#!/bin/sh\necho " + stderrMarker + " >&2\nexit 3\n"
	diag := "dalo: hook s:b/crash failed (fail_closed): handler exited with status 3\n  stderr: " + stderrMarker
	generic := "[s:b/crash] This hook failed; the details were shown to the user. The action was blocked (fail_closed)."
	for _, c := range []struct {
		provider, event, subject, want string
	}{
		{"claude", "UserPromptSubmit", "prompt", "[s:a/no] No.\n\n" + diag},
		{"codex", "UserPromptSubmit", "prompt", "[s:a/no] No.\n\n" + diag},
		{"claude", "PreToolUse", "tool_call", "[s:a/no] No.\n\n" + generic},
		{"codex", "PreToolUse", "tool_call", "[s:a/no] No.\n\n" + generic},
	} {
		n := decode(t, dispatchEvent(t, c.provider, c.event, mustJSON(recorded(t, c.provider, c.event)), []dispatchtest.Hook{
			hook("s:a", "no", c.subject, result(`{"kind":"deny","reason":"No."}`)), hook("s:b", "crash", c.subject, crash),
		}, nil))
		reason := n.Reason
		if c.event == "PreToolUse" {
			reason = n.HookSpecificOutput.PermissionDecisionReason
		}
		if reason != c.want {
			t.Errorf("%s %s deny reason:\n%s\nwant\n%s", c.provider, c.event, reason, c.want)
		}
		if n.SystemMessage != diag {
			t.Errorf("%s %s user channel: %q, want %q", c.provider, c.event, n.SystemMessage, diag)
		}
	}
}

// TestParallel checks that hooks of one event run concurrently: each
// handler waits until all four have started, which only happens when they
// run at the same time; run one after another, the first gives up and fails.
func TestParallel(t *testing.T) {
	dir := t.TempDir()
	var hooks []dispatchtest.Hook
	for _, id := range []string{"a", "b", "c", "d"} {
		hooks = append(hooks, dispatchtest.Hook{ID: id, Subject: "prompt", Phase: "before", Effect: "add_context", Env: []string{"PATH"}, TimeoutMS: 20000,
			Script: "#!/bin/sh\ntouch " + dir + "/" + id + "\ni=0\nwhile [ $(ls " + dir + " | wc -l) -lt 4 ]; do\n  i=$((i+1)); [ $i -gt 200 ] && exit 3\n  sleep 0.05\ndone\nprintf '{\"kind\":\"add_context\",\"context\":\"" + id + "\"}'\n"})
	}
	n := decode(t, dispatchEvent(t, "claude", "UserPromptSubmit", mustJSON(recorded(t, "claude", "UserPromptSubmit")), hooks, nil))
	if want := "[test:pkg/a] a\n\n[test:pkg/b] b\n\n[test:pkg/c] c\n\n[test:pkg/d] d"; n.HookSpecificOutput.AdditionalContext != want {
		t.Errorf("contexts %q", n.HookSpecificOutput.AdditionalContext)
	}
}

// TestPlan checks what dispatch does without hooks and with a bad plan.
func TestPlan(t *testing.T) {
	home := t.TempDir()
	req := dispatch.Request{Home: home, Provider: "claude", Event: "PreToolUse", Payload: []byte(`{}`), Getenv: getenv}
	if out, err := dispatch.Dispatch(req); err != nil || out.Exit != 0 || len(out.Stdout)+len(out.Stderr) != 0 {
		t.Errorf("no plan: %+v %v", out, err)
	}
	// A provider or event no table names is an error, not "nothing
	// installed": a misspelt harness entry must not run nothing silently.
	for _, tc := range []struct{ provider, event, want string }{
		{"Claude", "PreToolUse", `unknown provider "Claude": dalo has provider tables for claude, codex`},
		{"claude@2.1.233", "PreToolUse", `unknown provider "claude@2.1.233"`},
		{"../claude", "PreToolUse", `unknown provider "../claude"`},
		{"claude", "pretooluse", `unknown native event "pretooluse" of claude: its events are PostToolUse, PostToolUseFailure, PreSkillShellCommand, PreToolUse, SessionEnd, SessionStart, Stop, UserPromptSubmit`},
		{"codex", "PostToolUseFailure", `unknown native event "PostToolUseFailure" of codex`},
		{"claude", "../plans", `unknown native event "../plans"`},
	} {
		r := req
		r.Provider, r.Event = tc.provider, tc.event
		if out, err := dispatch.Dispatch(r); err == nil || !strings.Contains(err.Error(), tc.want) || len(out.Stdout)+len(out.Stderr) != 0 {
			t.Errorf("%s %s: %+v %v, want the error %q", tc.provider, tc.event, out, err, tc.want)
		}
	}
	// A plan of schema 1 (no index) is refused, not read as "nothing".
	os.MkdirAll(filepath.Join(home, "plans"), 0o755)
	os.WriteFile(filepath.Join(home, "plans", "claude.json"), []byte(`{"schema":1,"provider":"claude","events":{"PreToolUse":[`), 0o644)
	if _, err := dispatch.Dispatch(req); err == nil || !strings.Contains(err.Error(), "reading dispatch plan") {
		t.Errorf("damaged plan: %v", err)
	}
	os.WriteFile(filepath.Join(home, "plans", "claude.json"), []byte(`{"schema":1,"provider":"claude","events":{}}`), 0o644)
	if _, err := dispatch.Dispatch(req); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("schema 1, this dalo reads %d; run 'dalo plugin install' again", plan.Schema)) {
		t.Errorf("schema 1: %v", err)
	}
	os.Remove(filepath.Join(home, "plans", "claude.json"))

	// An index file of another schema, or damaged, is an error too.
	h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Script: result(`{"kind":"allow"}`)}
	if _, err := dispatchtest.Install(home, "claude", map[string][]dispatchtest.Hook{"PreToolUse": {h}}); err != nil {
		t.Fatal(err)
	}
	gen, err := os.Readlink(filepath.Join(home, "plans", "claude.d", plan.Pointer))
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(home, "plans", "claude.d", gen, "PreToolUse.json")
	data, _ := os.ReadFile(name)
	os.WriteFile(name, []byte(strings.Replace(string(data), fmt.Sprintf(`"schema":%d`, plan.Schema), `"schema":3`, 1)), 0o644)
	if _, err := dispatch.Dispatch(req); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("schema 3, this dalo reads %d; run 'dalo plugin install' again", plan.Schema)) {
		t.Errorf("index schema 3: %v", err)
	}
	os.WriteFile(name, data[:len(data)/2], 0o644)
	if _, err := dispatch.Dispatch(req); err == nil || !strings.Contains(err.Error(), "reading dispatch index "+name) {
		t.Errorf("damaged index: %v", err)
	}
}

// TestPayloadErrors checks that an unreadable payload fails every hook
// under its policy.
func TestPayloadErrors(t *testing.T) {
	h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Policy: "fail_closed", Script: result(`{"kind":"allow"}`)}
	for payload, want := range map[string]string{
		`not json`:  "the native payload is not JSON: invalid character 'o' in literal null (expecting 'u') (at byte 2)",
		`null`:      "the native payload is null, not a JSON object",
		`[1]`:       "the native payload is an array, not a JSON object",
		` "x"`:      "the native payload is a string, not a JSON object",
		`{"a": 1`:   "the native payload is not JSON: unexpected end of JSON input",
		`{"a": 1}x`: "the native payload is not JSON: invalid character 'x' after top-level value (at byte 9)",
	} {
		n := decode(t, dispatchEvent(t, "codex", "PreToolUse", []byte(payload), []dispatchtest.Hook{h}, nil))
		if n.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(n.SystemMessage, want) {
			t.Errorf("payload %s: %+v, want the diagnostic %q", payload, n, want)
		}
	}
}

// TestFailureDiagnosticBounded checks that a malformed result cannot push
// the handler's output into the model's context through its diagnostic:
// under model_and_user the context holds at most a short quote of it.
func TestFailureDiagnosticBounded(t *testing.T) {
	lim := plan.DraftLimits
	huge := "head -c 1048576 /dev/zero | tr '\\000' k\n"
	for _, c := range []struct{ name, script string }{
		{"kind", "#!/bin/sh\nprintf '{\"kind\":\"'\n" + huge + "printf '\"}'\n"},
		{"key", "#!/bin/sh\nprintf '{\"kind\":\"allow\",\"'\n" + huge + "printf '\":1}'\n"},
		{"string", "#!/bin/sh\nprintf '\"'\n" + huge + "printf '\"'\n"},
		{"garbage", "#!/bin/sh\n" + huge},
	} {
		for _, policy := range []string{"report", "fail_closed"} {
			h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Policy: policy,
				Visibility: "model_and_user", Env: []string{"PATH"}, Script: c.script}
			out := dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, nil)
			n := decode(t, out)
			hso := n.HookSpecificOutput
			model := hso.AdditionalContext + hso.PermissionDecisionReason
			if !strings.Contains(model, "malformed result") {
				t.Errorf("%s/%s: model text %.300q lacks the diagnostic", c.name, policy, model)
			}
			if len(model) > 512 || len(model) > lim.ResultTextBytes {
				t.Errorf("%s/%s: %d bytes of model text: %.300q", c.name, policy, len(model), model)
			}
			if len(n.SystemMessage) > 16<<10 {
				t.Errorf("%s/%s: %d bytes of user text", c.name, policy, len(n.SystemMessage))
			}
		}
	}
}

// TestTrustSwappedFiles checks that a FIFO or a symlink swapped in for a
// staged file or a grant file fails the hook at once, never blocking the
// dispatch on a read.
func TestTrustSwappedFiles(t *testing.T) {
	swap := func(name string, fifo bool) {
		os.Chmod(filepath.Dir(name), 0o755)
		// Called on the dispatching goroutine: errors, not Fatal.
		if err := os.Remove(name); err != nil {
			t.Error(err)
		}
		var err error
		if fifo {
			err = syscall.Mkfifo(name, 0o644)
		} else {
			err = os.Symlink("/dev/zero", name)
		}
		if err != nil {
			t.Error(err)
		}
	}
	for _, c := range []struct {
		name string
		file func(home string, p *plan.Plan) string
	}{
		{"staged", func(home string, p *plan.Plan) string {
			tool := p.Events["PreToolUse"][0].Tool
			return filepath.Join(tool.Root, tool.Entry)
		}},
		{"grant", func(home string, p *plan.Plan) string {
			return filepath.Join(home, "grants", p.Events["PreToolUse"][0].HookGrant.ID+".json")
		}},
	} {
		for _, fifo := range []bool{true, false} {
			h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Policy: "fail_closed", Script: result(`{"kind":"allow"}`)}
			done := make(chan dispatch.Native, 1)
			go func() {
				done <- dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, func(home string, p *plan.Plan) {
					swap(c.file(home, p), fifo)
				})
			}()
			select {
			case out := <-done:
				n := decode(t, out)
				if n.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(n.SystemMessage, "not run") {
					t.Errorf("%s (fifo %v): %s", c.name, fifo, out.Stdout)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s (fifo %v): dispatch blocked", c.name, fifo)
			}
		}
	}
}

// TestStderrDrain checks that stderr still arriving just after the handler
// exits (here from a process that left its group, holding the pipe) is
// kept, and that such a process cannot hold the dispatch: the drain is
// bounded.
func TestStderrDrain(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	// A wide drain and a late write well inside it: the old 10 ms cut-off
	// loses LATE, the drain keeps it, and a loaded machine cannot turn
	// one into the other. The handler exits only once the writer has left
	// its process group (it wrote its pid after setsid), so the group kill
	// cannot take the writer with it; the writer closes stderr after LATE,
	// so the drain ends at end of file, not at its deadline.
	defer dispatch.SetPipeDrain(10 * time.Second)()
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Env: []string{"PATH"},
		Script: "#!/bin/sh\necho EARLY >&2\nsetsid sh -c 'echo $$ > " + pidFile + "; sleep 0.3; echo LATE >&2; exec sleep 30 2>&-' >/dev/null </dev/null &\nwhile [ ! -s " + pidFile + " ]; do sleep 0.01; done\nexit 3\n"}
	t.Cleanup(func() {
		if data, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	n := decode(t, dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, nil))
	if !strings.Contains(n.SystemMessage, "exited with status 3") || !strings.Contains(n.SystemMessage, "EARLY") || !strings.Contains(n.SystemMessage, "LATE") {
		t.Errorf("systemMessage %q", n.SystemMessage)
	}
}

// TestStdoutHeldOpen: a handler that answers, starts a daemon that keeps
// its stdout and leaves its group, and exits has answered: its result
// counts, and dispatch does not wait for its timeout.
func TestStdoutHeldOpen(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Env: []string{"PATH"}, TimeoutMS: 30000,
		Script: "#!/bin/sh\nprintf '{\"kind\":\"deny\",\"reason\":\"No.\"}'\nsetsid sh -c 'echo $$ > " + pidFile + "; exec sleep 60' </dev/null &\nwhile [ ! -s " + pidFile + " ]; do sleep 0.01; done\nexit 0\n"}
	t.Cleanup(func() {
		if data, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	start := time.Now()
	n := decode(t, dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, nil))
	if n.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(n.HookSpecificOutput.PermissionDecisionReason, "No.") || n.SystemMessage != "" {
		t.Errorf("answer %+v, want the handler's deny and no failure", n)
	}
	// Well under the 30 s timeout: the drain, not the timeout, ended it.
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("dispatch took %v: it waited for the timeout", d)
	}
}

// TestInterpreterFromRules checks that a handler runs with the
// interpreter of the rules' #Runtimes built into dalo (plan.Runtimes),
// found on dalo's PATH, and that a missing one fails the hook under its
// policy.
func TestInterpreterFromRules(t *testing.T) {
	payload := mustJSON(recorded(t, "claude", "PreToolUse"))
	h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Policy: "fail_closed",
		Runtime: "python", Script: "print('{\"kind\":\"deny\",\"reason\":\"From python.\"}')\n"}
	if _, err := exec.LookPath("python3"); err == nil {
		n := decode(t, dispatchEvent(t, "claude", "PreToolUse", payload, []dispatchtest.Hook{h}, nil))
		if n.HookSpecificOutput.PermissionDecision != "deny" || n.HookSpecificOutput.PermissionDecisionReason != "[test:pkg/gate] From python." {
			t.Errorf("python handler: %+v", n)
		}
	}
	t.Setenv("PATH", t.TempDir())
	n := decode(t, dispatchEvent(t, "claude", "PreToolUse", payload, []dispatchtest.Hook{h}, nil))
	if n.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(n.SystemMessage, "runtime python: python3 not found on dalo's PATH") {
		t.Errorf("interpreter not found: %+v", n)
	}
}

// TestContextCapped: six hooks each returning context near the plan's
// result_text_bytes. The model gets the first four whole, in hook-identity
// order, within four times result_text_bytes; the user is told that the
// context of the last two was dropped.
func TestContextCapped(t *testing.T) {
	lim := plan.DraftLimits
	text := strings.Repeat("c", lim.ResultTextBytes-100)
	var hooks []dispatchtest.Hook
	for _, id := range []string{"h6", "h5", "h4", "h3", "h2", "h1"} {
		hooks = append(hooks, dispatchtest.Hook{Package: "s:a", ID: id, Subject: "tool_call", Phase: "before", Effect: "add_context",
			Script: result(`{"kind":"add_context","context":"` + text + `"}`)})
	}
	for _, provider := range []string{"claude", "codex"} {
		n := decode(t, dispatchEvent(t, provider, "PreToolUse", mustJSON(recorded(t, provider, "PreToolUse")), hooks, nil))
		got := n.HookSpecificOutput.AdditionalContext
		want := "[s:a/h1] " + text + "\n\n[s:a/h2] " + text + "\n\n[s:a/h3] " + text + "\n\n[s:a/h4] " + text
		if got != want {
			t.Errorf("%s: %d bytes of context, want the first four notes whole (%d bytes)", provider, len(got), len(want))
		}
		if len(got) > 4*lim.ResultTextBytes {
			t.Errorf("%s: %d bytes of context, bound %d", provider, len(got), 4*lim.ResultTextBytes)
		}
		if !strings.Contains(n.SystemMessage, "the model did not get the context of s:a/h5, s:a/h6") {
			t.Errorf("%s: user channel %q does not name the dropped hooks", provider, n.SystemMessage)
		}
	}
}

// TestDispatchHoldsStagedTrees: while a dispatch runs, a writer that would
// collect staged trees finds the dispatch lock held, so the trees its
// handlers still check and run in stay; once it ends, the lock is free.
func TestDispatchHoldsStagedTrees(t *testing.T) {
	home := t.TempDir()
	h := dispatchtest.Hook{ID: "slow", Subject: "tool_call", Phase: "before", Effect: "gate",
		Script: "#!/bin/sh\nsleep 0.5\nprintf '{\"kind\":\"allow\"}'\n"}
	if _, err := dispatchtest.Install(home, "claude", map[string][]dispatchtest.Hook{"PreToolUse": {h}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, plan.DispatchLock), nil, 0o644); err != nil {
		t.Fatal(err) // what a writer creates
	}
	payload := mustJSON(recorded(t, "claude", "PreToolUse"))
	done := make(chan error, 1)
	go func() {
		_, err := dispatch.Dispatch(dispatch.Request{Home: home, Provider: "claude", Event: "PreToolUse", Payload: payload, Getenv: getenv})
		done <- err
	}()
	busy := false
	for deadline := time.Now().Add(5 * time.Second); !busy && time.Now().Before(deadline); {
		release, b, err := plan.ExcludeDispatch(home)
		if err != nil {
			t.Fatal(err)
		}
		if busy = b; !busy {
			release()
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !busy {
		t.Fatal("a writer could lock out dispatch while the handler ran")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	release, busy, err := plan.ExcludeDispatch(home)
	if err != nil || busy {
		t.Fatalf("after the dispatch: busy %v, err %v", busy, err)
	}
	release()
}

// TestBlocked: the answer of a dispatcher that cannot run blocks, and
// lets a Stop end only when its payload says, true, that it went on once
// already: a payload that does not say, or cannot be read, blocks.
func TestBlocked(t *testing.T) {
	for _, c := range []struct {
		payload string
		exit    int
	}{
		{`{"stop_hook_active":true}`, 1},
		{`{"stop_hook_active":false}`, 2},
		{`{}`, 2},
		{`{"stop_hook_active":"true"}`, 2},
		{`{"stop_hook_active":null}`, 2},
		{`not json`, 2},
	} {
		out, ok := dispatch.Blocked("claude", "Stop", []byte(c.payload), "why")
		if !ok || out.Exit != c.exit || !strings.HasPrefix(string(out.Stderr), "dalo: why; a required fail_closed hook guards Stop") {
			t.Errorf("%s: %v exit %d stderr %q, want exit %d", c.payload, ok, out.Exit, out.Stderr, c.exit)
		}
	}
	if out, ok := dispatch.Blocked("claude", "PreToolUse", []byte(`{"stop_hook_active":true}`), "why"); !ok || out.Exit != 2 {
		t.Errorf("PreToolUse: %v exit %d, want 2", ok, out.Exit)
	}
	if _, ok := dispatch.Blocked("nosuch", "Stop", nil, "why"); ok {
		t.Error("a provider no table names has a blocking answer")
	}
}
