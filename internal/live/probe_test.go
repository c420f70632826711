//go:build unix

package live

import (
	"os"
	"path/filepath"
	"testing"

	"dalo/internal/fakemodel"
	"dalo/internal/scenario"
)

// probeFailure is how the model reads a failed probe hook's diagnostic.
var probeFailure = scenario.ProbeFailure

// TestProbeContext installs the probe kit and runs a session with two
// shell calls (the scenario "probe-context"): context from session start,
// from before and after a tool call and from a node handler reaches the
// model; the prompt observer receives the prompt text and the permission
// mode; the tool observer receives each call's tool name and id; a hook
// matching only tools the model does not call never runs.
func TestProbeContext(t *testing.T) {
	t.Parallel()
	needs(t, probed...)
	for _, p := range probed {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			play(t, p, "probe-context")
		})
	}
}

// TestProbeFailures runs a session in which each probe hook with
// error_visibility = "model_and_user" fails once (the scenario
// "probe-failures"): under report and fail_open the action goes on and
// the model reads the diagnostic as context; under fail_closed the tool
// call is blocked, or the stop answered with another pass, and the model
// reads the diagnostic as the reason. The handler's stderr never reaches
// the model.
func TestProbeFailures(t *testing.T) {
	t.Parallel()
	needs(t, probed...)
	for _, p := range probed {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			play(t, p, "probe-failures")
		})
	}
}

// TestProbeTrust runs a session whose model calls the shell once, gated by
// a fail_closed hook (visibility user) whose grant was revoked, or whose
// staged handler was changed, after install: the handler does not run, and
// the policy applies: the command is blocked and the model reads the
// generic reason. (TestProbeContext runs the same hook intact: the handler
// runs and the command with it.)
func TestProbeTrust(t *testing.T) {
	t.Parallel()
	needs(t, probed...)
	for _, p := range probed {
		for _, c := range []string{"revoked", "changed"} {
			t.Run(p+"/"+c, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, p, fakemodel.Script{fakemodel.Run("touch guarded"), fakemodel.Say("Done.")})
				w.installSource(probeID, probePkg, probeFiles())
				switch c {
				case "revoked":
					w.dalo("plugin", "revoke", probeID+":"+probePkg, "--hook", "guarded")
				case "changed":
					w.tamper("guarded.sh", "#!/bin/sh\necho ran >> \"$LIVE_OUT/tampered.ran\"\necho '{\"kind\":\"abstain\"}'\n")
				}
				s := w.run("Run the commands you are given.")
				if w.output("guarded.ran") != "" || w.output("tampered.ran") != "" {
					w.failf(s, "%s: the handler ran (guarded.ran %q, tampered.ran %q)", c, w.output("guarded.ran"), w.output("tampered.ran"))
				}
				if w.exists("guarded") {
					w.failf(s, "%s fail_closed gate: the command ran", c)
				}
				if !w.server.Contains("[" + probeID + ":" + probePkg + "/guarded] This hook failed; the details were shown to the user. The action was blocked (fail_closed).") {
					w.failf(s, "%s fail_closed gate: the generic reason did not reach the model", c)
				}
				// The other hooks of the event still ran.
				if !w.server.Contains(markStartContext) {
					w.failf(s, "%s: the other hooks' context did not reach the model", c)
				}
			})
		}
	}
}

// tamper replaces the staged copy of the handler named name (read-only in
// the store) with content.
func (w *world) tamper(name, content string) {
	w.t.Helper()
	paths, err := filepath.Glob(filepath.Join(w.store, "staged", "*", name))
	if err != nil || len(paths) != 1 {
		w.t.Fatalf("staged copies of %s: %q (%v), want exactly one", name, paths, err)
	}
	path := paths[0]
	if err := os.Chmod(filepath.Dir(path), 0o700); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Chmod(path, 0o700); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o700); err != nil {
		w.t.Fatal(err)
	}
}

// TestProbeClaudeWrite runs a Claude session whose model calls the Write
// tool twice: a fail_closed gate matching Write (and apply_patch) runs on
// each call with the bound tool.name Write and denies the one whose path
// holds "file-denied"; the hooks matching only Bash do not run.
func TestProbeClaudeWrite(t *testing.T) {
	t.Parallel()
	harness(t, "claude")
	w := newWorldFor(t, "claude", func(w *world) fakemodel.Script {
		return fakemodel.Script{
			{Tool: "Write", Input: map[string]any{"file_path": filepath.Join(w.work, "file-denied.txt"), "content": "no\n"}},
			{Tool: "Write", Input: map[string]any{"file_path": filepath.Join(w.work, "written.txt"), "content": "yes\n"}},
			fakemodel.Say("Done."),
		}
	})
	w.AllowedTools = "Bash,Write"
	w.installSource(probeID, probePkg, probeFiles())
	s := w.run("Write the files you are given.")

	if got := w.output("file-gate.argv"); got != "Write\nWrite\n" {
		w.failf(s, "Write gate runs (bound tool.name) = %q, want \"Write\\nWrite\\n\"", got)
	}
	if w.exists("file-denied.txt") || !w.exists("written.txt") {
		w.failf(s, "Write gate: denied file written = %v, allowed file written = %v; want false, true",
			w.exists("file-denied.txt"), w.exists("written.txt"))
	}
	if !w.server.Contains(markFileDeny) {
		w.failf(s, "Write gate: the deny reason %s did not reach the model", markFileDeny)
	}
	if pre, post := w.output("pre.argv"), w.output("post.argv"); pre != "" || post != "" {
		w.failf(s, "hooks matching only Bash ran on Write calls: before %q, after %q", pre, post)
	}
}

// TestProbeCodexShellPatch runs a Codex session whose model applies a patch
// through its shell tool (Codex 0.147.0 offers gpt-5, the model these
// tests name and one it does not know, no apply_patch tool: finding 37;
// TestMatrixCodex/apply_patch drives the native tool with a model of Codex's catalog). Codex
// intercepts the patch and applies it itself: PreToolUse fires with
// tool_name Bash, so a hook matching apply_patch does not run, and
// PostToolUse does not fire at all.
func TestProbeCodexShellPatch(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex", fakemodel.Script{
		fakemodel.Run("apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: patched.txt\n+patched\n*** End Patch\nEOF\n"),
		fakemodel.Say("Done."),
	})
	w.installSource(probeID, probePkg, probeFiles())
	s := w.run("Apply the patch you are given.")
	if !w.exists("patched.txt") {
		w.failf(s, "the patch was not applied")
	}
	if got, want := w.output("pre.argv"), "Bash "+callID("codex", 0)+"\n"; got != want {
		w.failf(s, "before observer (matcher Bash) per run = %q, want %q", got, want)
	}
	if got := w.output("file-gate.argv"); got != "" {
		w.failf(s, "the hook matching apply_patch ran: %q", got)
	}
	if got := w.output("post.argv"); got != "" {
		w.failf(s, "after observer (matcher Bash) ran: %q; Codex 0.147.0 fired no PostToolUse for an intercepted patch before", got)
	}
}
