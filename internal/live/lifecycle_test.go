//go:build unix

package live

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
	"dalo/internal/scenario"
	"dalo/plan"
)

// providers are the harnesses with a table; probed are those the probe
// and native tests (probe_test.go, native_*_test.go) were written for,
// whose claims on Gemini CLI the Gemini matrix proves (gemini_test.go).
var (
	providers = []string{"claude", "codex", "gemini"}
	probed    = []string{"claude", "codex"}
)

// TestSession installs the package and runs a session with no tool call
// (the scenario "session" of dalo/internal/scenario, which dalo providers
// verify runs too): session start observe with bound inputs, prompt
// context reaching the model, a continued workflow stopped by
// workflow.already_continued, and a session end observe.
func TestSession(t *testing.T) {
	t.Parallel()
	needs(t, providers...) // skip once, not per case
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			play(t, p, "session")
		})
	}
}

// TestToolCalls installs the package and runs a session whose model calls
// the shell once per case (the scenario "tool-calls"): a rewrite, a deny, a
// crashing fail_closed gate, a crashing fail_open gate, an output to
// replace and a failing command.
func TestToolCalls(t *testing.T) {
	t.Parallel()
	needs(t, providers...) // skip once, not per case
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			play(t, p, "tool-calls")
		})
	}
}

// TestGateContext installs a package of a shell gate and three prompt
// context hooks, two of which crash under fail_open and report with
// error_visibility user, and runs one prompt (the scenario "gate-context",
// what TestVerify installs under a table dalo providers verify wrote): the
// gate denies, its reason reaching the model; the context reaches the
// model; the user is shown each crash with its stderr, the model none.
func TestGateContext(t *testing.T) {
	t.Parallel()
	needs(t, providers...) // skip once, not per case
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			play(t, p, "gate-context")
		})
	}
}

// TestPromptGate runs a session per prompt gate outcome (the scenarios
// "prompt-deny" and "prompt-crash"): a deny, and a fail_closed crash.
// Either way the prompt must never reach the model.
func TestPromptGate(t *testing.T) {
	t.Parallel()
	needs(t, providers...) // skip once, not per case
	for _, p := range providers {
		for _, c := range []struct{ name, scenario string }{
			{"deny", "prompt-deny"},
			{"crash_fail_closed", "prompt-crash"},
		} {
			t.Run(p+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				play(t, p, c.scenario)
			})
		}
	}
}

// play runs the named scenario on the harness of the table under test,
// through the real dalo binary, and fails t with each check that failed,
// with what the harness printed.
func play(t *testing.T, provider, name string) {
	t.Helper()
	bin := harness(t, provider)
	s := scenario.Lookup(name)
	if s == nil || s.TestName(provider) != t.Name() {
		t.Fatalf("scenario %q is not the live test %s", name, t.Name())
	}
	root := t.TempDir()
	m := scenario.Machine{Harness: provider, Bin: bin, Dalo: daloBin, Table: targets[provider].key}
	if provider == "copilot" {
		m.Cache = targets[provider].cache()
	}
	r := scenario.Play(s, m, root, t.Logf)
	if r.Err != nil {
		t.Fatalf("%v\nharness stdout:\n%s\nharness stderr:\n%s", r.Err, clip(r.Session.Stdout), clip(r.Session.Stderr))
	}
	for _, f := range r.Failures {
		t.Errorf("%s\nharness stdout:\n%s\nharness stderr:\n%s", f, clip(r.Session.Stdout), clip(r.Session.Stderr))
	}
}

// samePath reports whether a and b name the same directory.
var samePath = scenario.SamePath

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
					t.Logf("user channel, stop: %q", m.Text)
				}
				// The last stop: no pass, and the user reads why.
				bound := fmt.Sprintf("Stop says: dalo: hook %s:%s/strict-stop is fail_closed, but failing fail_closed hooks already asked for %d workflow passes in a row, the most dalo asks for; not asking for another pass",
					srcID, pkgName, plan.FailClosedPasses)
				if m, ok := shown(w.userMessages(s), bound); !ok {
					w.failf(s, "past the bound: the user was not shown %q (shown: %+v)", bound, w.userMessages(s))
				} else {
					t.Logf("user channel, past the bound: %q", m.Text)
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

// What the model server received (scenario's readers).
var (
	callID     = scenario.CallID
	modelText  = scenario.ModelText
	toolResult = scenario.ToolResult
	natTurns   = scenario.Turns
)
