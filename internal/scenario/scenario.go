// Package scenario holds the scenarios that prove a provider table against
// the real harness: each installs the kit (an author source whose hooks
// cover each effect the tables promise) through dalo's own lifecycle in a
// scratch world, runs one headless session of the harness against a fake
// model server on loopback, and checks what the harness did, sent to the
// model, or showed the user. The live suite (dalo/internal/live) runs them
// as its tests, and `dalo providers verify` runs the same ones on a user's
// machine to prove a harness version dalo has no table for: one way to
// prove a table, not two.
package scenario

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"dalo/internal/fakemodel"
	"dalo/plan"
)

// A Scenario is one proof a table's claims can cite. Test is the live test
// it is, with %s for the harness (TestSession/%s): a claim that cites
// `test: internal/live TestSession/claude` is tried by the scenario
// "session" on Claude Code.
type Scenario struct {
	Name string
	Test string
	// Harnesses are the harnesses it is written for.
	Harnesses []string
	// Core says a version on which it fails gets no table at all: a deny
	// that does not stop the action, context that never reaches the
	// model, hooks that never run.
	Core bool
	// Script is what the fake model answers.
	Script func(w *World) fakemodel.Script
	// Play installs, runs a session and checks it, reporting each
	// failed check to c. An error is a step that could not run at all.
	Play func(w *World, c *Check) error
}

// TestName is the live test s is on harness. A Test without %s is one
// harness's test (TestMatrixClaude/fields).
func (s *Scenario) TestName(harness string) string {
	if !strings.Contains(s.Test, "%s") {
		return s.Test
	}
	return fmt.Sprintf(s.Test, harness)
}

// For reports whether s is written for harness.
func (s *Scenario) For(harness string) bool { return slices.Contains(s.Harnesses, harness) }

// A Check collects the failed checks of a scenario, each a sentence a
// user reads as the reason a claim does not hold, and the session they
// were seen in.
type Check struct {
	Failures []string
	Session  Session
}

// Failf records a failed check.
func (c *Check) Failf(format string, args ...any) {
	c.Failures = append(c.Failures, fmt.Sprintf(format, args...))
}

// All is every scenario, in the order verify runs them, as many at once as
// the machine has cores: hooks-off, which runs a session per switch, the
// longest of them, starts beside the first.
var All = append([]*Scenario{session, hooksOff, toolCalls, gateContext, gateCrash, promptDeny, promptCrash, probeContext, probeFailures,
	claudeFields, claudeNothing, claudeFailures, geminiFieldsContext, geminiFailures,
	codexFieldsNothing, codexUserFailures, failClosedStop,
	claudeUserChannel, codexUserChannel, geminiFileTools,
	skillShell, skillShellDeny, skillShellGate, claudeFileToolsGated, claudeNativeTools, claudeActor,
	codexTrust, nativeEvents, geminiFailClosed, geminiModelEvents, claudePromptClosed, geminiPromptClosed,
	dispatcherGone, duplicateKeys}, hooksOffScenarios()...)

// Lookup returns the scenario named name.
func Lookup(name string) *Scenario {
	for _, s := range All {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Tried returns the scenario that is the live test ref (TestSession/claude)
// and the harness it runs on, or nil.
func Tried(ref string) (*Scenario, string) {
	for _, s := range All {
		for _, h := range s.Harnesses {
			if s.TestName(h) == ref {
				return s, h
			}
		}
	}
	return nil, ""
}

// Cites reports whether a claim's evidence evs cites a live test that is
// a scenario for harness: a claim dalo providers verify tries there.
func Cites(harness string, evs []string) bool {
	for _, e := range evs {
		if ref, ok := strings.CutPrefix(e, "test: internal/live "); ok {
			if s, h := Tried(ref); s != nil && h == harness {
				return true
			}
		}
	}
	return false
}

// Harnesses the kit is written for: the live suite's core three.
var kitHarnesses = []string{"claude", "codex", "gemini"}

// Harnesses the gate and context kit is written for: every harness dalo
// has a table of, so that dalo providers verify proves each.
var verifyHarnesses = []string{"claude", "codex", "gemini", "copilot", "qwen"}

// session installs the kit and runs a session with no tool call: session
// start observe with bound inputs, prompt context reaching the model, a
// continued workflow stopped by workflow.already_continued, and a session
// end observe.
var session = &Scenario{
	Name: "session", Test: "TestSession/%s", Harnesses: kitHarnesses, Core: true,
	Script: func(*World) fakemodel.Script { return fakemodel.Script{fakemodel.Say("Nothing to run.")} },
	Play: func(w *World, c *Check) error {
		if _, err := w.Install(); err != nil {
			return err
		}
		// The entries call dalo-hook, beside dalo, so every hook below
		// ran through it.
		cfg := w.HooksFile()
		if b, err := os.ReadFile(cfg); err != nil || !strings.Contains(string(b), "/dalo-hook dispatch --home "+w.Store+" --provider "+w.Harness+" --event ") {
			return fmt.Errorf("%s does not call dalo-hook dispatch from the store (err %v):\n%s", cfg, err, b)
		}
		const agentProbe = "LIVE-CODEX-AGENT-PROBE-0c1d"
		if w.Harness == "codex" {
			// Where an agents directory would be, were Codex to read one.
			if err := w.WriteFile(filepath.Join(w.Home, ".codex", "agents", "probe.md"),
				"---\nname: probe\ndescription: "+agentProbe+" agent\n---\nYou are a probe.\n"); err != nil {
				return err
			}
		}
		s, err := w.Run("Say something short.")
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}

		// Members: the skill and the enabled instruction reach the
		// model; the agent where the harness reads agents. Codex reads no
		// agent file dalo could install: dalo installs the agent's inline
		// fallback skill (the same skill).
		for _, m := range []string{MarkSkill, MarkInstruction} {
			if !w.Server.Contains(m) {
				c.Failf("member marker %s did not reach the model", m)
			}
		}
		switch w.Harness {
		case "claude", "gemini":
			if !w.Server.Contains(MarkAgent) {
				c.Failf("agent member: its description %s did not reach the model", MarkAgent)
			}
		case "codex":
			// The table's SessionEnd clamp (3 s): the end hook asks for
			// 10 s, install writes at most what Codex allows, so Codex
			// has nothing to clamp.
			if strings.Contains(s.Stderr, "clamping SessionEnd hook timeout") {
				c.Failf("codex clamped the SessionEnd timeout install wrote")
			}
			if w.Server.Contains(MarkAgent) || w.Server.Contains(agentProbe) {
				c.Failf("an agent description reached the model (dalo's = %v, $CODEX_HOME/agents probe = %v)",
					w.Server.Contains(MarkAgent), w.Server.Contains(agentProbe))
			}
		}

		// session/start observe: the handler ran with its bound inputs.
		argv := strings.Split(strings.TrimSuffix(w.Output("start.argv"), "\n"), "\n")
		var payload struct {
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(w.Output("start.stdin")), &payload); err != nil {
			c.Failf("session start handler: stdin is not the native payload: %v", err)
		}
		if len(argv) != 2 || !SamePath(argv[0], w.Work) || argv[1] == "" || argv[1] != payload.SessionID {
			c.Failf("session start handler argv = %q, want [%s <session id %q>]", argv, w.Work, payload.SessionID)
		}

		// prompt/before add_context reached the model.
		if !w.Server.Contains(MarkPromptContext) {
			c.Failf("prompt add_context %q did not reach the model", MarkPromptContext)
		}

		// workflow/stop continue_workflow: one more pass, then the
		// handler saw workflow.already_continued = true and abstained.
		if got := w.Output("stop.argv"); got != "false\ntrue\n" {
			c.Failf("stop handler argv per run = %q, want \"false\\ntrue\\n\" (continue once, then stop)", got)
		}
		if !w.Server.Contains(MarkContinue) {
			c.Failf("continue_workflow reason %q did not reach the model", MarkContinue)
		}

		// session/end observe with its bound input.
		if got := strings.TrimSpace(w.Output("end.argv")); got == "" {
			c.Failf("session end handler did not run with its bound session.end_reason")
		} else {
			w.logf("session end reason: %q", got)
		}
		return nil
	},
}

// toolCalls installs the kit and runs a session whose model calls the
// shell once per case: a rewrite, a deny, a crashing fail_closed gate, a
// crashing fail_open gate, an output to replace and a failing command.
var toolCalls = &Scenario{
	Name: "tool-calls", Test: "TestToolCalls/%s", Harnesses: kitHarnesses, Core: true,
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{
			fakemodel.Run("touch original"),
			fakemodel.Run("touch denied"),
			fakemodel.Run("touch crash-closed"),
			fakemodel.Run("touch crash-open"),
			fakemodel.Run("printf 'orig%sout' 42"), // not $((...)): Gemini CLI refuses it
			fakemodel.Run("exit 7"),
			fakemodel.Say("All done."),
		}
	},
	Play: func(w *World, c *Check) error {
		w.StreamJSON = w.Harness == "claude"
		installed, err := w.Install()
		if err != nil {
			return err
		}
		s, err := w.Run("Run the commands you are given.")
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}

		// rewrite_input: the rewritten command ran, the original did not.
		if w.Exists("original") || !w.Exists("rewritten") {
			c.Failf("rewrite_input: original ran = %v, rewritten ran = %v; want false, true", w.Exists("original"), w.Exists("rewritten"))
		}

		// gate deny: the command did not run and the reason reached the model.
		if w.Exists("denied") {
			c.Failf("gate deny: the denied command ran")
		}
		if !w.Server.Contains(MarkDenyReason) {
			c.Failf("gate deny: reason %q did not reach the model", MarkDenyReason)
		}

		// fail_closed gate whose handler crashes: the tool is blocked,
		// the model reads the generic reason, never the handler's stderr.
		if w.Exists("crash-closed") {
			c.Failf("fail_closed gate crashed, yet the command ran")
		}
		if !w.Server.Contains("This hook failed; the details were shown to the user. The action was blocked (fail_closed).") {
			c.Failf("fail_closed gate crashed: the generic reason did not reach the model")
		}
		if w.Server.Contains(MarkClosedStderr) {
			c.Failf("fail_closed gate crashed: its stderr reached the model")
		}

		// fail_open gate whose handler crashes: the tool runs.
		if !w.Exists("crash-open") {
			c.Failf("fail_open gate crashed, and the command did not run")
		}
		if w.Server.Contains(MarkOpenStderr) {
			c.Failf("fail_open gate crashed: its stderr reached the model")
		}

		// The user channel (systemMessage): Claude's stream shows the
		// user each diagnostic with the handler's stderr, and headless
		// Gemini CLI prints it on stderr. Codex exec prints it nowhere,
		// not even with --json: logged.
		for _, h := range []struct{ hook, policy, mark string }{
			{"guard", plan.PolicyFailClosed, MarkClosedStderr},
			{"lenient", plan.PolicyFailOpen, MarkOpenStderr},
		} {
			diag := "dalo: hook " + SrcID + ":" + PkgName + "/" + h.hook + " failed (" + h.policy + "): handler exited with status 3"
			switch w.Harness {
			case "codex":
				w.logf("user channel: handler stderr %s in harness stdout = %v, stderr = %v",
					h.mark, strings.Contains(s.Stdout, h.mark), strings.Contains(s.Stderr, h.mark))
				continue
			case "gemini":
				if want := "Hook system message: " + diag + "\n  stderr: " + h.mark; !strings.Contains(s.Stderr, want) {
					c.Failf("%s gate crashed: Gemini CLI did not show the user %q", h.policy, want)
				}
				continue
			}
			if m, ok := Shown(UserMessages(s.Stdout), "PreToolUse:Bash says: "+diag, "PreToolUse:Bash says:   stderr: "+h.mark); !ok {
				c.Failf("%s gate crashed: the user was not shown %q with its stderr %s", h.policy, diag, h.mark)
			} else {
				w.logf("user channel, %s: %q", h.policy, m.Text)
			}
		}

		switch w.Harness {
		case "claude":
			// replace_output: the model saw the replacement only.
			if !w.Server.Contains(MarkReplaced) || w.Server.Contains("orig42out") {
				c.Failf("replace_output: replacement reached the model = %v, real output reached the model = %v; want true, false",
					w.Server.Contains(MarkReplaced), w.Server.Contains("orig42out"))
			}
			// tool_call/failure add_context reached the model.
			if !w.Server.Contains(MarkFailureContext) {
				c.Failf("failure add_context %q did not reach the model", MarkFailureContext)
			}
		case "codex", "gemini":
			// Not offered on Codex nor Gemini CLI: install omits both
			// optional hooks, visibly, and the model sees the real output.
			for _, h := range []string{"replace", "failure-context"} {
				if !regexp.MustCompile(`(?m)^  omitted: hook ` + regexp.QuoteMeta(h) + ` `).MatchString(installed) {
					c.Failf("install did not say hook %s is omitted", h)
				}
			}
			if !w.Server.Contains("orig42out") || w.Server.Contains(MarkReplaced) || w.Server.Contains(MarkFailureContext) {
				c.Failf("real output reached the model = %v, replacement = %v, failure context = %v; want true, false, false",
					w.Server.Contains("orig42out"), w.Server.Contains(MarkReplaced), w.Server.Contains(MarkFailureContext))
			}
		}
		return nil
	},
}

// promptDeny and promptCrash run a session per prompt gate outcome: a
// deny, and a fail_closed crash. Either way the prompt must never reach
// the model.
var (
	promptDeny = &Scenario{
		Name: "prompt-deny", Test: "TestPromptGate/%s/deny", Harnesses: kitHarnesses, Core: true,
		Script: promptScript,
		Play: func(w *World, c *Check) error {
			return playPromptGate(w, c, "deny", "Please handle the forbidden-prompt now.", MarkPromptDeny)
		},
	}
	promptCrash = &Scenario{
		Name: "prompt-crash", Test: "TestPromptGate/%s/crash_fail_closed", Harnesses: kitHarnesses,
		Script: promptScript,
		Play: func(w *World, c *Check) error {
			return playPromptGate(w, c, "crash_fail_closed", "Please handle the crash-prompt now.", MarkPromptStderr)
		},
	}
)

func promptScript(*World) fakemodel.Script {
	return fakemodel.Script{fakemodel.Run("touch ran"), fakemodel.Say("Done.")}
}

func playPromptGate(w *World, c *Check, name, prompt, mark string) error {
	w.StreamJSON = w.Harness == "claude"
	if _, err := w.Install(); err != nil {
		return err
	}
	s, err := w.Run(prompt)
	c.Session = s
	w.logf("%s exit: %v", w.Harness, err)
	if s.TimedOut {
		c.Failf("the session failed: %v", err)
		return nil
	}
	word := strings.Fields(prompt)[3] // forbidden-prompt, crash-prompt
	if w.Server.Contains(word) || w.Exists("ran") {
		c.Failf("blocked prompt: reached the model = %v, the model's command ran = %v; want false, false",
			w.Server.Contains(word), w.Exists("ran"))
	}
	if w.Server.Contains(mark) {
		c.Failf("blocked prompt: %s reached the model", mark)
	}
	// Claude prints the block reason in its result.
	if w.Harness == "claude" && name == "deny" && !strings.Contains(s.Stdout, MarkPromptDeny) {
		c.Failf("denied prompt: the reason %s is not in Claude's result", MarkPromptDeny)
	}
	// Where the user reads why. Claude shows the user the block reason,
	// as a warning, and never sends it to the model (the table's
	// user_only): the handler's deny reason, or on a crash dalo's
	// diagnostic with the handler's stderr. The systemMessage beside
	// "decision":"block" Claude Code 2.1.233 shows nowhere: no
	// "UserPromptSubmit says:" line.
	switch w.Harness {
	case "claude":
		parts := []string{"UserPromptSubmit operation blocked by hook:", MarkPromptDeny}
		if name == "crash_fail_closed" {
			parts = []string{"UserPromptSubmit operation blocked by hook:",
				"dalo: hook " + SrcID + ":" + PkgName + "/prompt-gate failed (fail_closed): handler exited with status 3",
				"  stderr: " + MarkPromptStderr}
		}
		msgs := UserMessages(s.Stdout)
		if m, ok := Shown(msgs, parts...); !ok || m.Level != "warning" {
			c.Failf("blocked prompt: the user was not shown the block reason %q as a warning (found %v: %+v)", parts[1:], ok, msgs)
		} else {
			w.logf("user channel, blocked prompt: %q", m.Text)
		}
		if strings.Contains(s.Stdout, "the details were shown to the user") {
			c.Failf("blocked prompt: the user was shown the generic text meant for a model")
		}
		if m, ok := Shown(msgs, "UserPromptSubmit says:"); ok {
			c.Failf("blocked prompt: Claude now shows a blocking prompt hook's systemMessage (%q)", m.Text)
		}
	case "gemini":
		// Gemini CLI shows the user the block reason as a warning on
		// stderr, and never sends it to the model.
		want := "[WARNING] Agent execution blocked: [" + SrcID + ":" + PkgName + "/prompt-gate] " + MarkPromptDeny
		if name == "crash_fail_closed" {
			want = "[WARNING] Agent execution blocked: dalo: hook " + SrcID + ":" + PkgName + "/prompt-gate failed (fail_closed): handler exited with status 3\n  stderr: " + MarkPromptStderr
		}
		if !strings.Contains(s.Stderr, want) {
			c.Failf("blocked prompt: Gemini CLI did not show the user %q", want)
		}
		if strings.Contains(s.Stderr, "the details were shown to the user") {
			c.Failf("blocked prompt: the user was shown the generic text meant for a model")
		}
	default:
		w.logf("user channel: %s in harness stdout = %v, stderr = %v", mark,
			strings.Contains(s.Stdout, mark), strings.Contains(s.Stderr, mark))
	}
	// The model gets nothing of a blocked prompt: no request.
	for _, q := range w.Server.Requests() {
		if q.Method == "POST" {
			c.Failf("blocked prompt: the model was asked (%s %s)", q.Method, q.Path)
			break
		}
	}
	// The session still ends through dalo's session end hook.
	if strings.TrimSpace(w.Output("end.argv")) == "" {
		c.Failf("session end handler did not run after a blocked prompt")
	}
	return nil
}

// A Result is how one scenario ended on one harness.
type Result struct {
	Scenario *Scenario
	Harness  string
	// Failures are the checks that failed; Err is a step that could not
	// run (install refused, the harness did not start).
	Failures []string
	Err      error
	Session  Session
	// Requests are what the model server received.
	Requests []fakemodel.Request
	Elapsed  time.Duration
}

// Held reports whether every check of the scenario held.
func (r Result) Held() bool { return r.Err == nil && len(r.Failures) == 0 }

// Why is what the run showed when it did not hold, in a sentence.
func (r Result) Why() string {
	if r.Err != nil {
		return firstLine(r.Err.Error())
	}
	return strings.Join(r.Failures, "; ")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Play runs s on machine m in a new world under root (made, and left for
// the caller to read or remove) and returns how it ended. logf, when set,
// receives what the scenario logs.
func Play(s *Scenario, m Machine, root string, logf func(string, ...any)) Result {
	start := time.Now()
	r := Result{Scenario: s, Harness: m.Harness}
	w, err := NewWorld(m, root, s.Script)
	if err != nil {
		r.Err = err
		return r
	}
	defer w.Close()
	w.Logf = logf
	var c Check
	r.Err = s.Play(w, &c)
	r.Failures, r.Session, r.Requests, r.Elapsed = c.Failures, c.Session, w.Server.Requests(), time.Since(start)
	return r
}
