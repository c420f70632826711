//go:build unix

package live

import (
	"testing"

	"dalo/internal/scenario"
)

// providers are the harnesses with a table; probed are those the probe
// and native tests (probe_test.go, native_*_test.go) were written for,
// whose claims on Gemini CLI the Gemini matrix proves (gemini_test.go).
var (
	providers = []string{"claude", "codex", "gemini"}
	// verifiable are the harnesses dalo providers verify proves: its
	// scenario gate-context runs on each.
	verifiable = []string{"claude", "codex", "gemini", "copilot", "qwen"}
	// crashable are the harnesses of the scenario gate-crash.
	crashable = []string{"copilot", "qwen"}
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
	needs(t, verifiable...) // skip once, not per case
	for _, p := range verifiable {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			play(t, p, "gate-context")
		})
	}
}

// TestGateCrash installs a required shell gate, fail_closed with
// error_visibility user, whose handler crashes, and runs one prompt (the
// scenario "gate-crash", for the harnesses the kit of TestToolCalls is not
// written for): the command does not run, the model reads the generic
// reason, never the handler's stderr or dalo's diagnostic.
func TestGateCrash(t *testing.T) {
	t.Parallel()
	needs(t, crashable...) // skip once, not per case
	for _, p := range crashable {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			play(t, p, "gate-crash")
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
	m := scenario.Machine{Harness: provider, Bin: bin, Dalo: daloBin, Table: targets[provider].key, Cache: targets[provider].cache()}
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
			play(t, p, "fail-closed-stop")
		})
	}
}

// TestCodexTrust runs Codex as a user runs it (codex exec without
// --dangerously-bypass-hook-trust). Installed without --trust, dalo's
// entries are not trusted: install says so, doctor exits 1 saying the gate
// will not run, and in the session no dalo handler runs and the command the
// gate would deny runs. Installed again with --trust, which records Codex's
// own hash of each of dalo's entries in its config.toml, doctor says the
// gate is in force, and in the next session it denies the command. It is
// the scenario "codex-trust".
func TestCodexTrust(t *testing.T) {
	t.Parallel()
	harness(t, "codex")
	play(t, "codex", "codex-trust")
}

// What the model server received (scenario's readers).
var (
	callID     = scenario.CallID
	modelText  = scenario.ModelText
	toolResult = scenario.ToolResult
	natTurns   = scenario.Turns
)
