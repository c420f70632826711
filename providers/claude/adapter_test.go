package claude_test

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"

	"dalo/dispatch"
	"dalo/dispatch/dispatchtest"
	"dalo/providers/claude"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// rows are the events recorded from Claude Code 2.1.233 with the hook rows
// and effects it supports there (DECISIONS §3 and §4).
var rows = []dispatchtest.Row{
	{Payload: "SessionStart", Event: "SessionStart", Subject: "session", Phase: "start", Effects: []string{"observe", "add_context"}},
	{Payload: "UserPromptSubmit", Event: "UserPromptSubmit", Subject: "prompt", Phase: "before", Effects: []string{"observe", "add_context", "gate"}},
	{Payload: "PreToolUse", Event: "PreToolUse", Subject: "tool_call", Phase: "before", Effects: []string{"observe", "add_context", "gate", "rewrite_input"}},
	{Payload: "PostToolUse", Event: "PostToolUse", Subject: "tool_call", Phase: "after", Effects: []string{"observe", "add_context", "replace_output"}},
	{Payload: "PostToolUseFailure", Event: "PostToolUseFailure", Subject: "tool_call", Phase: "failure", Effects: []string{"observe", "add_context"}},
	{Payload: "Stop", Event: "Stop", Subject: "workflow", Phase: "stop", Effects: []string{"observe", "continue_workflow"}},
	{Payload: "Stop.continued", Event: "Stop", Subject: "workflow", Phase: "stop", Effects: []string{"continue_workflow"}},
	{Payload: "SessionEnd", Event: "SessionEnd", Subject: "session", Phase: "end", Effects: []string{"observe"}},
}

// TestGolden drives the adapter with the recorded payloads: one golden
// native answer per event and result kind, and per failure policy.
func TestGolden(t *testing.T) {
	dispatchtest.Golden(t, claude.Adapter{}, "claude",
		filepath.Join("..", "testdata", "recordings", "claude", "2.1.233"),
		filepath.Join("testdata", "golden"), rows, *update, check)
}

// check holds what Claude Code was seen to accept: never a native allow,
// a rewrite without permissionDecision, hookEventName beside any
// hookSpecificOutput, nothing on stdout for SessionEnd.
func check(t *testing.T, event string, out dispatch.Native) {
	if len(out.Stdout) == 0 {
		return
	}
	if event == "SessionEnd" {
		t.Errorf("stdout on SessionEnd: %s", out.Stdout)
	}
	var n struct {
		HSO map[string]json.RawMessage `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out.Stdout, &n); err != nil {
		t.Fatalf("stdout is not JSON: %v", err)
	}
	if n.HSO == nil {
		return
	}
	if string(n.HSO["hookEventName"]) != `"`+event+`"` {
		t.Errorf("hookEventName %s on %s", n.HSO["hookEventName"], event)
	}
	if d := string(n.HSO["permissionDecision"]); d != "" && d != `"deny"` {
		t.Errorf("permissionDecision %s: Claude keeps its own permission flow", d)
	}
}
