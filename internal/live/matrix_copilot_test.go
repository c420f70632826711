//go:build unix

package live

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
	"dalo/internal/scenario"
)

// The matrices of GitHub Copilot CLI (providers/copilot/1.0.102.cue) and
// Qwen Code (providers/qwen/0.24.4.cue): live tests that prove each claim
// of both tables through dalo's own install and dispatch. Both harnesses
// read hooks in Claude Code's shape from settings.json; what differs
// between them is each one's scenario.BashMatrix. The subtests that are
// scenarios (scenario.BashMatrices), which dalo providers verify runs
// too, are played by name; the others need what verify does not do: a
// dalo command between sessions, a deleted dispatcher, another file of
// the user's, a terminal.

const (
	bmID    = scenario.BashMatrixID
	bmPkg   = scenario.BashMatrixPkg
	bmFinal = scenario.BashMatrixFinal
)

// TestMatrixCopilot runs GitHub Copilot CLI sessions that prove its table.
func TestMatrixCopilot(t *testing.T) {
	t.Parallel()
	harness(t, "copilot")
	playSubtests(t, "copilot", "session", "failures", "pre_context", "rewrite_input", "replace_output",
		"prompt_deny", "prompt_fail_closed", "members", "instruction", "dispatcher_gone_fail_closed", "dispatcher_gone_fail_open")
	t.Run("hooks_off", func(t *testing.T) { testBashMatrixOff(t, "copilot") })
	t.Run("hooks_off_other_file", testMatrixCopilotOffOtherFile)
	t.Run("remove_restores", func(t *testing.T) { testBashMatrixRemove(t, "copilot") })
	t.Run("first_run", testMatrixCopilotFirstRun)
	// Copilot CLI shows a hook's messages nowhere.
	t.Run("user_channel", func(t *testing.T) { testBashMatrixUser(t, "copilot") })
}

// TestMatrixQwen runs Qwen Code sessions that prove its table.
func TestMatrixQwen(t *testing.T) {
	t.Parallel()
	harness(t, "qwen")
	playSubtests(t, "qwen", "session", "failures", "tool_failure", "prompt_deny", "prompt_fail_closed", "members", "tools",
		"instruction", "dispatcher_gone_fail_closed", "dispatcher_gone_fail_open")
	t.Run("hooks_off", func(t *testing.T) { testBashMatrixOff(t, "qwen") })
	t.Run("remove_restores", func(t *testing.T) { testBashMatrixRemove(t, "qwen") })
	// Qwen Code shows a hook's messages on Stop only.
	t.Run("user_channel", func(t *testing.T) { testBashMatrixUser(t, "qwen") })
}

// playSubtests runs each of subs as a parallel subtest of t on provider
// that plays the scenario it is.
func playSubtests(t *testing.T, provider string, subs ...string) {
	for _, sub := range subs {
		t.Run(sub, func(t *testing.T) {
			t.Parallel()
			s, h := scenario.Tried(t.Name())
			if s == nil || h != provider {
				t.Fatalf("no scenario of %s is the live test %s", provider, t.Name())
			}
			play(t, provider, s.Name)
		})
	}
}

// bmGoneKit is a kit of one gate on the shell tool under policy that
// denies every command naming "gated" (scenario.BashGateFiles).
func bmGoneKit(p, policy string) map[string]string {
	return scenario.BashGateFiles(shellTool[p], policy)
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
