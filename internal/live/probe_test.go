//go:build unix

package live

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
	"dalo/plan"
)

// probeFailure is how the model reads the diagnostic of a failed probe hook
// with error_visibility = "model_and_user": as context, or as a reason,
// under the hook's source.
func probeFailure(hook string) string {
	return "[" + probeID + ":" + probePkg + "/" + hook + "] This hook failed: "
}

// callID is the id the fake model gives its n-th tool call.
func callID(provider string, n int) string {
	if provider == "claude" {
		return fmt.Sprintf("toolu_fake_%d", n)
	}
	return fmt.Sprintf("call_fake_%d", n)
}

// TestProbeContext installs the probe kit and runs a session with two
// shell calls: context from session start, from before and after a tool
// call and from a node handler reaches the model; the prompt observer
// receives the prompt text and the permission mode; the tool observer
// receives each call's tool name and id; a hook matching only tools the
// model does not call never runs.
func TestProbeContext(t *testing.T) {
	t.Parallel()
	needs(t, probed...)
	for _, p := range probed {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, p, fakemodel.Script{
				fakemodel.Run("echo pre-ctx; touch guarded"),
				fakemodel.Run("echo post-ctx-out"),
				fakemodel.Say("Done."),
			})
			w.installSource(probeID, probePkg, probeFiles())
			const prompt = "Run the probe commands, probe-prompt-text."
			s := w.run(prompt)

			for _, c := range []struct{ what, mark string }{
				{"session start add_context", markStartContext},
				{"tool call before add_context", markPreContext},
				{"tool call after add_context", markPostContext},
				{"node handler add_context", markNodeContext},
			} {
				if !w.server.Contains(c.mark) {
					w.failf(s, "%s: %s did not reach the model", c.what, c.mark)
				}
			}
			if v := strings.TrimSpace(w.output("node.ran")); !strings.HasPrefix(v, "v") {
				w.failf(s, "node handler: node.ran = %q, want the node version it ran under", v)
			}

			// prompt/before observe with bound prompt.text and
			// session.permission_mode.
			argv := strings.Split(strings.TrimSuffix(w.output("prompt.argv"), "\n"), "\n")
			var payload struct {
				Mode string `json:"permission_mode"`
			}
			if err := json.Unmarshal([]byte(w.output("prompt.stdin")), &payload); err != nil {
				w.failf(s, "prompt observer: stdin is not the native payload: %v", err)
			}
			if len(argv) != 2 || argv[0] != prompt || argv[1] == "" || argv[1] != payload.Mode {
				w.failf(s, "prompt observer argv = %q, want [%q <permission mode %q>]", argv, prompt, payload.Mode)
			}
			t.Logf("permission mode: %q", payload.Mode)

			// tool_call/before and tool_call/after observe with bound
			// tool.name and tool.call_id: the ids the fake model gave its calls.
			want := "Bash " + callID(p, 0) + "\nBash " + callID(p, 1) + "\n"
			for _, f := range []string{"pre.argv", "post.argv"} {
				if got := w.output(f); got != want {
					w.failf(s, "tool call observer %s per run = %q, want %q", f, got, want)
				}
			}

			// The fail_closed gate that abstains let the command run.
			if w.output("guarded.ran") == "" || !w.exists("guarded") {
				w.failf(s, "guarded gate: handler ran = %v, command ran = %v; want true, true", w.output("guarded.ran") != "", w.exists("guarded"))
			}

			// matcher.tool_names: the gate for Write and apply_patch never ran.
			if got := w.output("file-gate.argv"); got != "" {
				w.failf(s, "a hook matching only Write and apply_patch ran on shell calls: %q", got)
			}
		})
	}
}

// TestProbeFailures runs a session in which each probe hook with
// error_visibility = "model_and_user" fails once: under report and
// fail_open the action goes on and the model reads the diagnostic as
// context (session start, prompt, before and after a tool call); under
// fail_closed the tool call is blocked, or the stop answered with another
// pass, and the model reads the diagnostic as the reason. The handler's
// stderr never reaches the model.
func TestProbeFailures(t *testing.T) {
	t.Parallel()
	needs(t, probed...)
	for _, p := range probed {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, p, fakemodel.Script{
				fakemodel.Run("touch pre-open-crash"),
				fakemodel.Run("touch pre-closed-crash"),
				fakemodel.Run("echo post-report-crash"),
				fakemodel.Say("Done."),
			})
			w.installSource(probeID, probePkg, probeFiles())
			w.writeFile(filepath.Join(w.work, "crash-start"), "")
			w.writeFile(filepath.Join(w.work, "crash-stop"), "")
			const prompt = "Run the probe commands, prompt-report-crash."
			s := w.run(prompt)

			for _, c := range []struct{ hook, what, tail string }{
				{"start-report", "session start, report", ""},
				{"prompt-report", "prompt before, report", ""},
				{"pre-open", "tool call before, fail_open", ""},
				{"pre-closed", "tool call before, fail_closed", " The action was blocked (fail_closed)."},
				{"post-report", "tool call after, report", ""},
				{"stop-closed", "workflow stop, fail_closed", " Another pass was requested (fail_closed)."},
			} {
				if !w.server.Contains(probeFailure(c.hook)) {
					w.failf(s, "%s, model_and_user: the diagnostic %q... did not reach the model", c.what, probeFailure(c.hook))
					continue
				}
				// The diagnostic names the failure, not a generic text.
				status := fmt.Sprintf("status %d", probeExit[c.hook])
				found := false
				for _, q := range w.server.Requests() {
					if text := modelText(q, probeFailure(c.hook)); text != "" {
						found = true
						if !strings.Contains(text, status) || !strings.Contains(text, c.tail) {
							w.failf(s, "%s, model_and_user: the model read %q, want the failure (%s) and %q", c.what, text, status, c.tail)
						}
						break
					}
				}
				if !found {
					w.failf(s, "%s: no model request text holds %q", c.what, probeFailure(c.hook))
				}
			}
			if w.server.Contains(markProbeStderr) {
				w.failf(s, "a handler's stderr reached the model")
			}
			// report and fail_open leave the action unchanged; fail_closed blocks.
			if !w.server.Contains("prompt-report-crash") {
				w.failf(s, "prompt before, report: the prompt did not reach the model")
			}
			if !w.exists("pre-open-crash") || w.exists("pre-closed-crash") {
				w.failf(s, "fail_open command ran = %v, fail_closed command ran = %v; want true, false",
					w.exists("pre-open-crash"), w.exists("pre-closed-crash"))
			}
			if !w.server.Contains("post-report-crash") {
				w.failf(s, "tool call after, report: the command's output did not reach the model")
			}
			// The fail_closed stop, failing at every stop, asked for as
			// many passes as dalo asks for in a row: the three tool calls,
			// the end of the turn, and the passes.
			var posts int
			for _, q := range w.server.Requests() {
				if q.Method == "POST" {
					posts++
				}
			}
			if want := 4 + plan.FailClosedPasses; posts != want {
				w.failf(s, "model requests = %d, want %d: three tool calls, the answer and %d more passes", posts, want, plan.FailClosedPasses)
			}
		})
	}
}

// modelText returns the decoded string of request q that holds substr,
// or "".
func modelText(q fakemodel.Request, substr string) string {
	var find func(v any) string
	find = func(v any) string {
		switch v := v.(type) {
		case string:
			if strings.Contains(v, substr) {
				return v
			}
		case map[string]any:
			for _, e := range v {
				if s := find(e); s != "" {
					return s
				}
			}
		case []any:
			for _, e := range v {
				if s := find(e); s != "" {
					return s
				}
			}
		}
		return ""
	}
	return find(q.JSON)
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
