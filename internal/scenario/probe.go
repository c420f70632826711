package scenario

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"dalo/internal/fakemodel"
	"dalo/plan"
)

// The probe scenarios install the probe kit alone (ProbeFiles) on the
// harnesses it is written for.
var probeHarnesses = []string{"claude", "codex"}

// probeContext runs a session with two shell calls: context from session
// start, from before and after a tool call and from a node handler
// reaches the model; the prompt observer receives the prompt text and the
// permission mode; the tool observer receives each call's tool name and
// id; a fail_closed gate that abstains lets its command run; a hook
// matching only tools the model does not call never runs.
var probeContext = &Scenario{
	Name: "probe-context", Test: "TestProbeContext/%s", Harnesses: probeHarnesses,
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{
			fakemodel.Run("echo pre-ctx; touch guarded"),
			fakemodel.Run("echo post-ctx-out"),
			fakemodel.Say("Done."),
		}
	},
	Play: func(w *World, c *Check) error {
		if _, err := w.InstallSource(ProbeID, ProbePkg, ProbeFiles()); err != nil {
			return err
		}
		const prompt = "Run the probe commands, probe-prompt-text."
		s, err := w.Run(prompt)
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}
		for _, ctx := range []struct{ what, mark string }{
			{"session start add_context", MarkStartContext},
			{"tool call before add_context", MarkPreContext},
			{"tool call after add_context", MarkPostContext},
			{"node handler add_context", MarkNodeContext},
		} {
			if !w.Server.Contains(ctx.mark) {
				c.Failf("%s: %s did not reach the model", ctx.what, ctx.mark)
			}
		}
		if v := strings.TrimSpace(w.Output("node.ran")); !strings.HasPrefix(v, "v") {
			c.Failf("node handler: node.ran = %q, want the node version it ran under", v)
		}

		// prompt/before observe with bound prompt.text and
		// session.permission_mode.
		argv := strings.Split(strings.TrimSuffix(w.Output("prompt.argv"), "\n"), "\n")
		var payload struct {
			Mode string `json:"permission_mode"`
		}
		if err := json.Unmarshal([]byte(w.Output("prompt.stdin")), &payload); err != nil {
			c.Failf("prompt observer: stdin is not the native payload: %v", err)
		}
		if len(argv) != 2 || argv[0] != prompt || argv[1] == "" || argv[1] != payload.Mode {
			c.Failf("prompt observer argv = %q, want [%q <permission mode %q>]", argv, prompt, payload.Mode)
		}
		w.logf("permission mode: %q", payload.Mode)

		// tool_call/before and tool_call/after observe with bound
		// tool.name and tool.call_id: the ids the fake model gave its calls.
		want := "Bash " + CallID(w.Harness, 0) + "\nBash " + CallID(w.Harness, 1) + "\n"
		for _, f := range []string{"pre.argv", "post.argv"} {
			if got := w.Output(f); got != want {
				c.Failf("tool call observer %s per run = %q, want %q", f, got, want)
			}
		}

		// The fail_closed gate that abstains let the command run.
		if w.Output("guarded.ran") == "" || !w.Exists("guarded") {
			c.Failf("guarded gate: handler ran = %v, command ran = %v; want true, true", w.Output("guarded.ran") != "", w.Exists("guarded"))
		}

		// matcher.tool_names: the gate for Write and apply_patch never ran.
		if got := w.Output("file-gate.argv"); got != "" {
			c.Failf("a hook matching only Write and apply_patch ran on shell calls: %q", got)
		}
		return nil
	},
}

// ProbeFailure is how the model reads the diagnostic of a failed probe
// hook with error_visibility = "model_and_user": as context, or as a
// reason, under the hook's source.
func ProbeFailure(hook string) string {
	return "[" + ProbeID + ":" + ProbePkg + "/" + hook + "] This hook failed: "
}

// probeFailures runs a session in which each probe hook with
// error_visibility = "model_and_user" fails once: under report and
// fail_open the action goes on and the model reads the diagnostic as
// context (session start, prompt, before and after a tool call); under
// fail_closed the tool call is blocked, or the stop answered with another
// pass, and the model reads the diagnostic as the reason. The handler's
// stderr never reaches the model.
var probeFailures = &Scenario{
	Name: "probe-failures", Test: "TestProbeFailures/%s", Harnesses: probeHarnesses,
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{
			fakemodel.Run("touch pre-open-crash"),
			fakemodel.Run("touch pre-closed-crash"),
			fakemodel.Run("echo post-report-crash"),
			fakemodel.Say("Done."),
		}
	},
	Play: func(w *World, c *Check) error {
		if _, err := w.InstallSource(ProbeID, ProbePkg, ProbeFiles()); err != nil {
			return err
		}
		for _, f := range []string{"crash-start", "crash-stop"} {
			if err := w.WriteFile(filepath.Join(w.Work, f), ""); err != nil {
				return err
			}
		}
		const prompt = "Run the probe commands, prompt-report-crash."
		s, err := w.Run(prompt)
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}
		for _, h := range []struct{ hook, what, tail string }{
			{"start-report", "session start, report", ""},
			{"prompt-report", "prompt before, report", ""},
			{"pre-open", "tool call before, fail_open", ""},
			{"pre-closed", "tool call before, fail_closed", " The action was blocked (fail_closed)."},
			{"post-report", "tool call after, report", ""},
			{"stop-closed", "workflow stop, fail_closed", " Another pass was requested (fail_closed)."},
		} {
			// The diagnostic names the failure, not a generic text.
			status := fmt.Sprintf("status %d", ProbeExit[h.hook])
			found := false
			for _, q := range w.Server.Requests() {
				if text := ModelText(q, ProbeFailure(h.hook)); text != "" {
					found = true
					if !strings.Contains(text, status) || !strings.Contains(text, h.tail) {
						c.Failf("%s, model_and_user: the model read %q, want the failure (%s) and %q", h.what, text, status, h.tail)
					}
					break
				}
			}
			if !found {
				c.Failf("%s, model_and_user: the diagnostic %q... did not reach the model", h.what, ProbeFailure(h.hook))
			}
		}
		if w.Server.Contains(MarkProbeStderr) {
			c.Failf("a handler's stderr reached the model")
		}
		// report and fail_open leave the action unchanged; fail_closed blocks.
		if !w.Server.Contains("prompt-report-crash") {
			c.Failf("prompt before, report: the prompt did not reach the model")
		}
		if !w.Exists("pre-open-crash") || w.Exists("pre-closed-crash") {
			c.Failf("fail_open command ran = %v, fail_closed command ran = %v; want true, false",
				w.Exists("pre-open-crash"), w.Exists("pre-closed-crash"))
		}
		if !w.Server.Contains("post-report-crash") {
			c.Failf("tool call after, report: the command's output did not reach the model")
		}
		// The fail_closed stop, failing at every stop, asked for as many
		// passes as dalo asks for in a row: the three tool calls, the end
		// of the turn, and the passes.
		posts := 0
		for _, q := range w.Server.Requests() {
			if q.Method == "POST" {
				posts++
			}
		}
		if want := 4 + plan.FailClosedPasses; posts != want {
			c.Failf("model requests = %d, want %d: three tool calls, the answer and %d more passes", posts, want, plan.FailClosedPasses)
		}
		return nil
	},
}
