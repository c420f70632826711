//go:build unix

package live

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
	"dalo/plan"
)

// providers are the harnesses with a table; probed are those the probe
// and native tests (probe_test.go, native_*_test.go) were written for,
// whose claims on Gemini CLI the Gemini matrix proves (gemini_test.go).
var (
	providers = []string{"claude", "codex", "gemini"}
	probed    = []string{"claude", "codex"}
)

// TestSession installs the package and runs a session with no tool call:
// session start observe with bound inputs, prompt context reaching the
// model, a continued workflow stopped by workflow.already_continued, and a
// session end observe.
func TestSession(t *testing.T) {
	t.Parallel()
	needs(t, providers...) // skip once, not per case
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, p, fakemodel.Script{fakemodel.Say("Nothing to run.")})
			w.install()
			// The entries call dalo-hook, built beside dalo, so every hook
			// below ran through it.
			cfg := w.hooksFile()
			if b, err := os.ReadFile(cfg); err != nil || !strings.Contains(string(b), "/dalo-hook dispatch --home "+w.store+" --provider "+p+" --event ") {
				t.Fatalf("%s does not call dalo-hook dispatch from the store (err %v):\n%s", cfg, err, b)
			}
			const agentProbe = "LIVE-CODEX-AGENT-PROBE-0c1d"
			if p == "codex" {
				// Where an agents directory would be, were Codex to read one.
				w.writeFile(filepath.Join(w.home, ".codex", "agents", "probe.md"),
					"---\nname: probe\ndescription: "+agentProbe+" agent\n---\nYou are a probe.\n")
			}
			s := w.run("Say something short.")

			// Members: the skill and the enabled instruction reach the
			// model; the agent on Claude. Codex reads no agent file dalo
			// could install: dalo installs the agent's inline fallback
			// skill (the same skill).
			for _, m := range []string{markSkill, markInstruction} {
				if !w.server.Contains(m) {
					w.failf(s, "member marker %s did not reach the model", m)
				}
			}
			switch p {
			case "claude", "gemini":
				if !w.server.Contains(markAgent) {
					w.failf(s, "agent member: its description %s did not reach the model", markAgent)
				}
			case "codex":
				// The table's SessionEnd clamp (3 s): the end hook asks for
				// 10 s, install writes at most what Codex allows, so Codex
				// has nothing to clamp.
				if strings.Contains(s.stderr, "clamping SessionEnd hook timeout") {
					w.failf(s, "codex clamped the SessionEnd timeout install wrote")
				}
				if w.server.Contains(markAgent) || w.server.Contains(agentProbe) {
					w.failf(s, "codex: an agent description reached the model (dalo's = %v, $CODEX_HOME/agents probe = %v)",
						w.server.Contains(markAgent), w.server.Contains(agentProbe))
				}
			}

			// session/start observe: the handler ran with its bound inputs.
			argv := strings.Split(strings.TrimSuffix(w.output("start.argv"), "\n"), "\n")
			var payload struct {
				SessionID string `json:"session_id"`
				Cwd       string `json:"cwd"`
			}
			if err := json.Unmarshal([]byte(w.output("start.stdin")), &payload); err != nil {
				w.failf(s, "session start handler: stdin is not the native payload: %v", err)
			}
			if len(argv) != 2 || !samePath(argv[0], w.work) || argv[1] == "" || argv[1] != payload.SessionID {
				w.failf(s, "session start handler argv = %q, want [%s <session id %q>]", argv, w.work, payload.SessionID)
			}

			// prompt/before add_context reached the model.
			if !w.server.Contains(markPromptContext) {
				w.failf(s, "prompt add_context %q did not reach the model", markPromptContext)
			}

			// workflow/stop continue_workflow: one more pass, then the
			// handler saw workflow.already_continued = true and abstained.
			if got := w.output("stop.argv"); got != "false\ntrue\n" {
				w.failf(s, "stop handler argv per run = %q, want \"false\\ntrue\\n\" (continue once, then stop)", got)
			}
			if !w.server.Contains(markContinue) {
				w.failf(s, "continue_workflow reason %q did not reach the model", markContinue)
			}

			// session/end observe with its bound input.
			if got := strings.TrimSpace(w.output("end.argv")); got == "" {
				w.failf(s, "session end handler did not run with its bound session.end_reason")
			} else {
				t.Logf("session end reason: %q", got)
			}
		})
	}
}

// TestToolCalls installs the package and runs a session whose model calls
// the shell once per case: a rewrite, a deny, a crashing fail_closed gate, a
// crashing fail_open gate, an output to replace and a failing command.
func TestToolCalls(t *testing.T) {
	t.Parallel()
	needs(t, providers...) // skip once, not per case
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, p, fakemodel.Script{
				fakemodel.Run("touch original"),
				fakemodel.Run("touch denied"),
				fakemodel.Run("touch crash-closed"),
				fakemodel.Run("touch crash-open"),
				fakemodel.Run("printf 'orig%sout' 42"), // not $((...)): Gemini CLI refuses it
				fakemodel.Run("exit 7"),
				fakemodel.Say("All done."),
			})
			w.streamJSON = p == "claude"
			installed := w.install()
			s := w.run("Run the commands you are given.")

			// rewrite_input: the rewritten command ran, the original did not.
			if w.exists("original") || !w.exists("rewritten") {
				w.failf(s, "rewrite_input: original ran = %v, rewritten ran = %v; want false, true", w.exists("original"), w.exists("rewritten"))
			}

			// gate deny: the command did not run and the reason reached the model.
			if w.exists("denied") {
				w.failf(s, "gate deny: the denied command ran")
			}
			if !w.server.Contains(markDenyReason) {
				w.failf(s, "gate deny: reason %q did not reach the model", markDenyReason)
			}

			// fail_closed gate whose handler crashes: the tool is blocked,
			// the model reads the generic reason, never the handler's stderr.
			if w.exists("crash-closed") {
				w.failf(s, "fail_closed gate crashed, yet the command ran")
			}
			if !w.server.Contains("This hook failed; the details were shown to the user. The action was blocked (fail_closed).") {
				w.failf(s, "fail_closed gate crashed: the generic reason did not reach the model")
			}
			if w.server.Contains(markClosedStderr) {
				w.failf(s, "fail_closed gate crashed: its stderr reached the model")
			}

			// fail_open gate whose handler crashes: the tool runs.
			if !w.exists("crash-open") {
				w.failf(s, "fail_open gate crashed, and the command did not run")
			}
			if w.server.Contains(markOpenStderr) {
				w.failf(s, "fail_open gate crashed: its stderr reached the model")
			}

			// The user channel (systemMessage): Claude's stream shows the
			// user each diagnostic with the handler's stderr, and headless
			// Gemini CLI prints it on stderr. Codex 0.147.0 exec prints it
			// nowhere, not even with --json: logged.
			for _, c := range []struct{ hook, policy, mark string }{
				{"guard", "fail_closed", markClosedStderr},
				{"lenient", "fail_open", markOpenStderr},
			} {
				diag := "dalo: hook " + srcID + ":" + pkgName + "/" + c.hook + " failed (" + c.policy + "): handler exited with status 3"
				switch p {
				case "codex":
					t.Logf("user channel: handler stderr %s in harness stdout = %v, stderr = %v, files under home %q",
						c.mark, strings.Contains(s.stdout, c.mark), strings.Contains(s.stderr, c.mark), w.homeFiles(c.mark))
					continue
				case "gemini":
					if want := "Hook system message: " + diag + "\n  stderr: " + c.mark; !strings.Contains(s.stderr, want) {
						w.failf(s, "%s gate crashed: Gemini CLI did not show the user %q", c.policy, want)
					}
					continue
				}
				if m, ok := shown(w.userMessages(s), "PreToolUse:Bash says: "+diag, "PreToolUse:Bash says:   stderr: "+c.mark); !ok {
					w.failf(s, "%s gate crashed: the user was not shown %q with its stderr %s", c.policy, diag, c.mark)
				} else {
					t.Logf("user channel, %s: %q", c.policy, m.text)
				}
			}

			switch p {
			case "claude":
				// replace_output: the model saw the replacement only.
				if !w.server.Contains(markReplaced) || w.server.Contains("orig42out") {
					w.failf(s, "replace_output: replacement reached the model = %v, real output reached the model = %v; want true, false",
						w.server.Contains(markReplaced), w.server.Contains("orig42out"))
				}
				// tool_call/failure add_context reached the model.
				if !w.server.Contains(markFailureContext) {
					w.failf(s, "failure add_context %q did not reach the model", markFailureContext)
				}
			case "codex", "gemini":
				// Not offered on Codex nor Gemini CLI: install omits both optional
				// hooks, visibly, and the model sees the real output.
				for _, h := range []string{"replace", "failure-context"} {
					if !regexp.MustCompile(`(?m)^  omitted: hook ` + regexp.QuoteMeta(h) + ` `).MatchString(installed) {
						t.Errorf("install on codex did not say hook %s is omitted:\n%s", h, installed)
					}
				}
				if !w.server.Contains("orig42out") || w.server.Contains(markReplaced) || w.server.Contains(markFailureContext) {
					w.failf(s, "codex: real output reached the model = %v, replacement = %v, failure context = %v; want true, false, false",
						w.server.Contains("orig42out"), w.server.Contains(markReplaced), w.server.Contains(markFailureContext))
				}
			}
		})
	}
}

// samePath reports whether a and b name the same directory, whatever
// symbolic links the harness resolved.
func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// TestPromptGate runs a session per prompt gate outcome: a deny, and a
// fail_closed crash. Either way the prompt must never reach the model.
func TestPromptGate(t *testing.T) {
	t.Parallel()
	needs(t, providers...) // skip once, not per case
	for _, p := range providers {
		for _, c := range []struct{ name, prompt, mark string }{
			{"deny", "Please handle the forbidden-prompt now.", markPromptDeny},
			{"crash_fail_closed", "Please handle the crash-prompt now.", markPromptStderr},
		} {
			t.Run(p+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, p, fakemodel.Script{fakemodel.Run("touch ran"), fakemodel.Say("Done.")})
				w.streamJSON = p == "claude"
				w.install()
				s, err := w.runExit(c.prompt)
				t.Logf("%s exit: %v", p, err)
				word := strings.Fields(c.prompt)[3] // forbidden-prompt, crash-prompt
				if w.server.Contains(word) || w.exists("ran") {
					w.failf(s, "blocked prompt: reached the model = %v, the model's command ran = %v; want false, false",
						w.server.Contains(word), w.exists("ran"))
				}
				if w.server.Contains(c.mark) {
					w.failf(s, "blocked prompt: %s reached the model", c.mark)
				}
				// Claude prints the block reason in its result.
				if p == "claude" && c.name == "deny" && !strings.Contains(s.stdout, markPromptDeny) {
					w.failf(s, "denied prompt: the reason %s is not in Claude's result", markPromptDeny)
				}
				// Where the user reads why. Claude shows the user the block
				// reason, as a warning, and never sends it to the model (the
				// table's user_only): the handler's deny reason, or on a crash
				// dalo's diagnostic with the handler's stderr. The
				// systemMessage beside "decision":"block" Claude Code 2.1.233
				// shows nowhere: no "UserPromptSubmit says:" line.
				if p == "claude" {
					parts := []string{"UserPromptSubmit operation blocked by hook:", markPromptDeny}
					if c.name == "crash_fail_closed" {
						parts = []string{"UserPromptSubmit operation blocked by hook:",
							"dalo: hook " + srcID + ":" + pkgName + "/prompt-gate failed (fail_closed): handler exited with status 3",
							"  stderr: " + markPromptStderr}
					}
					msgs := w.userMessages(s)
					if m, ok := shown(msgs, parts...); !ok || m.level != "warning" {
						w.failf(s, "blocked prompt: the user was not shown the block reason %q as a warning (found %v: %+v)", parts[1:], ok, msgs)
					} else {
						t.Logf("user channel, blocked prompt: %q", m.text)
					}
					if strings.Contains(s.stdout, "the details were shown to the user") {
						w.failf(s, "blocked prompt: the user was shown the generic text meant for a model")
					}
					if m, ok := shown(msgs, "UserPromptSubmit says:"); ok {
						w.failf(s, "blocked prompt: Claude now shows a blocking prompt hook's systemMessage (%q): update finding 34 and the table's evidence", m.text)
					}
				} else if p == "gemini" {
					// Gemini CLI shows the user the block reason as a
					// warning on stderr, and never sends it to the model.
					want := "[WARNING] Agent execution blocked: [" + srcID + ":" + pkgName + "/prompt-gate] " + markPromptDeny
					if c.name == "crash_fail_closed" {
						want = "[WARNING] Agent execution blocked: dalo: hook " + srcID + ":" + pkgName + "/prompt-gate failed (fail_closed): handler exited with status 3\n  stderr: " + markPromptStderr
					}
					if !strings.Contains(s.stderr, want) {
						w.failf(s, "blocked prompt: Gemini CLI did not show the user %q", want)
					}
					if strings.Contains(s.stderr, "the details were shown to the user") {
						w.failf(s, "blocked prompt: the user was shown the generic text meant for a model")
					}
				} else {
					t.Logf("user channel: %s in harness stdout = %v, stderr = %v, files under home %q", c.mark,
						strings.Contains(s.stdout, c.mark), strings.Contains(s.stderr, c.mark), w.homeFiles(c.mark))
				}
				// The model gets nothing of a blocked prompt: no request.
				for _, q := range w.server.Requests() {
					if q.Method == "POST" {
						w.failf(s, "blocked prompt: the model was asked (%s %s)", q.Method, q.Path)
						break
					}
				}
				// The session still ends through dalo's session end hook.
				if strings.TrimSpace(w.output("end.argv")) == "" {
					w.failf(s, "session end handler did not run after a blocked prompt")
				}
			})
		}
	}
}

// TestFailClosedStop runs a session whose fail_closed stop hook always
// crashes and whose session end hook (policy report) crashes: every stop,
// already continued or not, asks for another pass with the generic reason,
// up to dalo's bound (plan.FailClosedPasses in a row), and then the
// session ends normally, on Claude Code (whose own cap is higher) and on
// Codex (which has none) alike.
func TestFailClosedStop(t *testing.T) {
	t.Parallel()
	needs(t, providers...)
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, p, fakemodel.Script{fakemodel.Say("Nothing to run.")})
			w.streamJSON = p == "claude"
			w.install()
			w.writeFile(filepath.Join(w.work, "crash-stop"), "")
			w.writeFile(filepath.Join(w.work, "crash-end"), "")
			s := w.run("Say something short.")
			posts := len(natTurns(w.server))
			if want := 1 + plan.FailClosedPasses; posts != want {
				w.failf(s, "model requests = %d, want %d: the first turn and the %d passes the failing stop hook may ask for", posts, want, plan.FailClosedPasses)
			}
			if !w.server.Contains("This hook failed; the details were shown to the user. Another pass was requested (fail_closed).") {
				w.failf(s, "crashed fail_closed stop hook: the generic reason did not reach the model")
			}
			if w.server.Contains(markStopStderr) {
				w.failf(s, "crashed fail_closed stop hook: its stderr reached the model")
			}
			// The other stop hook continued once itself, then saw every
			// later stop already continued.
			if got, want := w.output("stop.argv"), "false\n"+strings.Repeat("true\n", plan.FailClosedPasses); got != want {
				w.failf(s, "stop handler argv per run = %q, want %q: a run per stop", got, want)
			}
			if strings.TrimSpace(w.output("end.argv")) == "" {
				w.failf(s, "the other session end hook did not run beside the crashing one")
			}
			// A failing session end hook under report: dispatch exits 1 with
			// the diagnostic on stderr, which Claude Code passes on to the
			// user's stderr. (Codex 0.147.0 exec prints it nowhere: logged.)
			if (p == "claude" || p == "gemini") && !strings.Contains(s.stderr, markEndStderr) {
				w.failf(s, "crashed session end hook: its diagnostic (with %s) is not on %s's stderr", markEndStderr, p)
			}
			// Headless Gemini CLI prints the stop hook's user channel on
			// stderr: each failure, and on the last stop why no pass.
			if p == "gemini" {
				diag := "Hook system message: dalo: hook " + srcID + ":" + pkgName + "/strict-stop failed (fail_closed): handler exited with status 3\n  stderr: " + markStopStderr
				bound := fmt.Sprintf("dalo: hook %s:%s/strict-stop is fail_closed, but failing fail_closed hooks already asked for %d workflow passes in a row, the most dalo asks for; not asking for another pass",
					srcID, pkgName, plan.FailClosedPasses)
				if n := strings.Count(s.stderr, diag); n != 1+plan.FailClosedPasses || !strings.Contains(s.stderr, bound) {
					w.failf(s, "gemini: the user was shown the stop hook's failure %d times (want %d) and why no more passes = %v", n, 1+plan.FailClosedPasses, strings.Contains(s.stderr, bound))
				}
			}
			// The crashed fail_closed stop hook's diagnostic: Claude's
			// stream shows it the user. (Codex 0.147.0: logged.)
			if p == "claude" {
				diag := "dalo: hook " + srcID + ":" + pkgName + "/strict-stop failed (fail_closed): handler exited with status 3"
				if m, ok := shown(w.userMessages(s), "Stop says: "+diag, "Stop says:   stderr: "+markStopStderr); !ok {
					w.failf(s, "crashed fail_closed stop hook: the user was not shown %q with its stderr %s (shown: %+v)", diag, markStopStderr, w.userMessages(s))
				} else {
					t.Logf("user channel, stop: %q", m.text)
				}
				// The last stop: no pass, and the user reads why.
				bound := fmt.Sprintf("Stop says: dalo: hook %s:%s/strict-stop is fail_closed, but failing fail_closed hooks already asked for %d workflow passes in a row, the most dalo asks for; not asking for another pass",
					srcID, pkgName, plan.FailClosedPasses)
				if m, ok := shown(w.userMessages(s), bound); !ok {
					w.failf(s, "past the bound: the user was not shown %q (shown: %+v)", bound, w.userMessages(s))
				} else {
					t.Logf("user channel, past the bound: %q", m.text)
				}
			}
			for _, m := range []string{markStopStderr, markEndStderr} {
				t.Logf("user channel: %s in harness stdout = %v, stderr = %v, files under home %q", m,
					strings.Contains(s.stdout, m), strings.Contains(s.stderr, m), w.homeFiles(m))
			}
		})
	}
}

// TestCodexTrust runs Codex as a user runs it (codex exec without
// --dangerously-bypass-hook-trust). Installed without --trust, dalo's
// entries are not trusted: install says so, doctor exits 1 saying the gate
// will not run, and in the session no dalo handler runs and the command the
// gate would deny runs. Installed again with --trust, which records Codex's
// own hash of each of dalo's entries in its config.toml, doctor says the
// gate is in force, and in the next session it denies the command.
func TestCodexTrust(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex", fakemodel.Script{fakemodel.Run("touch denied"), fakemodel.Say("Done.")})
	w.untrusted = true
	installed := w.installSource(srcID, pkgName, sourceFiles)
	if !strings.Contains(installed, "runs only hooks you trusted") || !strings.Contains(installed, "--trust") {
		t.Errorf("install on codex did not say Codex will not run the entries until they are trusted:\n%s", installed)
	}
	out, code := w.daloExit("doctor")
	if code != 1 || !strings.Contains(out, "has not trusted dalo's PreToolUse entry") || !strings.Contains(out, "guard on PreToolUse: required, NOT in force") {
		t.Errorf("doctor before --trust: exit %d, want 1 saying the gate will not run:\n%s", code, out)
	}
	s := w.run("Run the commands you are given.")
	if w.output("start.argv") != "" || w.output("stop.argv") != "" || w.server.Contains(markPromptContext) {
		w.failf(s, "untrusted entries: a dalo handler ran")
	}
	if !w.exists("denied") {
		w.failf(s, "untrusted entries: the command the gate would deny did not run, so something gated it")
	}

	// The user records Codex's trust for dalo's entries.
	os.Remove(filepath.Join(w.work, "denied"))
	w.pathHarness()
	w.dalo("plugin", "install", srcID+":"+pkgName, "--provider", "codex", "--trust")
	if out, code := w.daloExit("doctor"); code != 0 || !strings.Contains(out, "is trusted by Codex CLI") {
		t.Errorf("doctor after --trust: exit %d, want 0 saying Codex trusts the entries:\n%s", code, out)
	}
	s = w.run("Run the commands you are given.")
	if w.exists("denied") {
		w.failf(s, "trusted entries: the command the gate denies ran")
	}
	if !w.server.Contains(markDenyReason) {
		w.failf(s, "trusted entries: the gate's reason %q did not reach the model", markDenyReason)
	}
}
