//go:build unix

package live

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
)

// TestNativeRows proves, with hooks written by hand in the harness's own
// settings (no dalo), what the GitHub Copilot CLI and Qwen Code tables
// mark unsupported: each subtest gives a native answer in the shape the
// harness's hook protocol names for a row and shows that the harness does
// not act on it. Each subtest runs for its table only.
func TestNativeRows(t *testing.T) {
	t.Parallel()
	needs(t, "copilot", "qwen")
	// A hook answering stdout on event, for a session whose model runs
	// command once.
	type nat struct {
		name, harness, event, stdout, command string
		// check fails unless the harness ignored the answer.
		check func(w *world, s session)
	}
	const marker = "NAT-ROW-ANSWER-3d7b"
	for _, c := range []nat{
		// Qwen Code's scheduler logs a PreToolUse hook's additionalContext
		// and gives it to nobody.
		{"qwen_pre_context", "qwen", "PreToolUse",
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"` + marker + `"}}`, "touch nat-ran",
			func(w *world, s session) {
				if w.server.Contains(marker) || !w.exists("nat-ran") {
					w.failf(s, "the context reached the model = %v, the command ran = %v; want false, true", w.server.Contains(marker), w.exists("nat-ran"))
				}
			}},
		// updatedInput is applied from a PermissionRequest hook only.
		{"qwen_rewrite_input", "qwen", "PreToolUse",
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok","updatedInput":{"command":"touch nat-rewritten"}}}`, "touch nat-ran",
			func(w *world, s session) {
				if !w.exists("nat-ran") || w.exists("nat-rewritten") {
					w.failf(s, "the model's command ran = %v, the rewritten one = %v; want true, false", w.exists("nat-ran"), w.exists("nat-rewritten"))
				}
			}},
		// PostToolUse has no output to replace.
		{"qwen_replace_output", "qwen", "PostToolUse",
			`{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"` + marker + `","updatedMCPToolOutput":"` + marker + `"}}`, "echo nat-out-$((6*7))",
			func(w *world, s session) {
				// The model reads what the tool returned, as the hook was
				// given it: Qwen Code's shell now and then returns
				// "Output: (empty)" for an echo on a loaded machine (CI,
				// 2026-12-02), and then the model reads that, not 42.
				gave := w.output("PostToolUse.stdin")
				returned := strings.Contains(gave, "nat-out-42")
				if w.server.Contains(marker) || returned && !w.server.Contains("nat-out-42") {
					w.failf(s, "the model read the replacement = %v, the output = %v (the tool returned it: %v); want false, true\nthe PostToolUse hook was given: %s", w.server.Contains(marker), w.server.Contains("nat-out-42"), returned, clip(gave))
				}
			}},
		// A shell command that exits nonzero is a successful call: its
		// failure hooks, under either spelling, do not run.
		{"copilot_tool_failure", "copilot", "PostToolUseFailure", "", "echo nat-failed; exit 7",
			func(w *world, s session) {
				if got := w.output("PostToolUseFailure.stdin") + w.output("postToolUseFailure.stdin"); got != "" {
					w.failf(s, "a failure hook ran: %s", got)
				}
				var p struct {
					ToolResult struct {
						ResultType string `json:"result_type"`
					} `json:"tool_result"`
				}
				if err := json.Unmarshal([]byte(w.output("PostToolUse.stdin")), &p); err != nil || p.ToolResult.ResultType != "success" {
					w.failf(s, "PostToolUse of the failed command: %q (%v), want a tool_result of result_type success", w.output("PostToolUse.stdin"), err)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, c.harness, fakemodel.Script{fakemodel.Run(c.command), fakemodel.Say(natFinal)})
			script := filepath.Join(w.root, "nat-hook.sh")
			w.writeFile(script, natHookScript)
			events := []string{c.event, "PostToolUse"}
			if c.event == "PostToolUseFailure" {
				events = append(events, "postToolUseFailure")
			}
			hooks := map[string]any{}
			for _, e := range events {
				hooks[e] = []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{
					"type": "command", "command": "sh " + script + " " + w.out + " " + e, "timeout": 10}}}}
			}
			b, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			w.writeFile(w.hooksFile(), string(b)+"\n")
			if c.stdout != "" {
				w.natAnswer(c.event, c.stdout, "", 0)
			}
			s := w.run("Run the command you are given.")
			if strings.TrimSpace(w.output(c.event+".stdin")) == "" && c.event != "PostToolUseFailure" {
				w.failf(s, "the %s hook did not run", c.event)
			}
			c.check(w, s)
		})
	}
}
