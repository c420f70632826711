package providers_test

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"slices"
	"testing"

	"dalo/dispatch"
	"dalo/dispatch/dispatchtest"
	"dalo/providers"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenRows are the recorded events of each harness version with the hook
// rows and effects it supports there (docs/design.md §3 and §4).
var goldenRows = map[string][]dispatchtest.Row{
	"claude": {
		{Payload: "SessionStart", Event: "SessionStart", Effects: []string{"observe", "add_context"}},
		{Payload: "UserPromptSubmit", Event: "UserPromptSubmit", Effects: []string{"observe", "add_context", "gate"}},
		{Payload: "PreToolUse", Event: "PreToolUse", Effects: []string{"observe", "add_context", "gate", "rewrite_input"}},
		{Payload: "PostToolUse", Event: "PostToolUse", Effects: []string{"observe", "add_context", "replace_output"}},
		{Payload: "PostToolUseFailure", Event: "PostToolUseFailure", Effects: []string{"observe", "add_context"}},
		{Payload: "Stop", Event: "Stop", Effects: []string{"observe", "continue_workflow"}},
		{Payload: "Stop.continued", Event: "Stop", Effects: []string{"continue_workflow"}},
		{Payload: "SessionEnd", Event: "SessionEnd", Effects: []string{"observe"}},
	},
	// Codex: no failure event, no output replacement.
	"codex": {
		{Payload: "SessionStart", Event: "SessionStart", Effects: []string{"observe", "add_context"}},
		{Payload: "UserPromptSubmit", Event: "UserPromptSubmit", Effects: []string{"observe", "add_context", "gate"}},
		{Payload: "PreToolUse", Event: "PreToolUse", Effects: []string{"observe", "add_context", "gate", "rewrite_input"}},
		{Payload: "PostToolUse", Event: "PostToolUse", Effects: []string{"observe", "add_context"}},
		{Payload: "PostToolUse.exit7", Event: "PostToolUse", Effects: []string{"add_context"}},
		{Payload: "Stop", Event: "Stop", Effects: []string{"observe", "continue_workflow"}},
		{Payload: "Stop.continued", Event: "Stop", Effects: []string{"continue_workflow"}},
		{Payload: "SessionEnd", Event: "SessionEnd", Effects: []string{"observe"}},
	},
	// Gemini CLI: no failure event, no output replacement, no context
	// before a tool call.
	"gemini": {
		{Payload: "SessionStart", Event: "SessionStart", Effects: []string{"observe", "add_context"}},
		{Payload: "BeforeAgent", Event: "BeforeAgent", Effects: []string{"observe", "add_context", "gate"}},
		{Payload: "BeforeTool", Event: "BeforeTool", Effects: []string{"observe", "gate", "rewrite_input"}},
		{Payload: "AfterTool", Event: "AfterTool", Effects: []string{"observe", "add_context"}},
		{Payload: "AfterTool.exit7", Event: "AfterTool", Effects: []string{"add_context"}},
		{Payload: "AfterAgent", Event: "AfterAgent", Effects: []string{"observe", "continue_workflow"}},
		{Payload: "AfterAgent.continued", Event: "AfterAgent", Effects: []string{"continue_workflow"}},
		{Payload: "SessionEnd", Event: "SessionEnd", Effects: []string{"observe"}},
	},
	// GitHub Copilot CLI: context at the top level, no context before a
	// tool call, no rewrite, no replacement, no failure event.
	"copilot": {
		{Payload: "SessionStart", Event: "SessionStart", Effects: []string{"observe", "add_context"}},
		{Payload: "UserPromptSubmit", Event: "UserPromptSubmit", Effects: []string{"observe", "add_context"}},
		{Payload: "PreToolUse", Event: "PreToolUse", Effects: []string{"observe", "gate"}},
		{Payload: "PostToolUse", Event: "PostToolUse", Effects: []string{"observe", "add_context"}},
		{Payload: "Stop", Event: "Stop", Effects: []string{"observe", "continue_workflow"}},
		{Payload: "Stop.continued", Event: "Stop", Effects: []string{"continue_workflow"}},
		{Payload: "SessionEnd", Event: "SessionEnd", Effects: []string{"observe"}},
	},
	// Qwen Code: Claude Code's shape; no SessionEnd headless, no context
	// before a tool call, no rewrite, no replacement, no failure event.
	"qwen": {
		{Payload: "SessionStart", Event: "SessionStart", Effects: []string{"observe", "add_context"}},
		{Payload: "UserPromptSubmit", Event: "UserPromptSubmit", Effects: []string{"observe", "add_context"}},
		{Payload: "PreToolUse", Event: "PreToolUse", Effects: []string{"observe", "gate"}},
		{Payload: "PostToolUse", Event: "PostToolUse", Effects: []string{"observe", "add_context"}},
		{Payload: "Stop", Event: "Stop", Effects: []string{"observe", "continue_workflow"}},
		{Payload: "Stop.continued", Event: "Stop", Effects: []string{"continue_workflow"}},
	},
}

// TestGolden drives the generic dispatcher, with the native protocol each
// provider table puts in the plan, through the recorded payloads: one
// golden native answer per event and result kind, and per failure policy
// (<name>/testdata/golden). The files were made by the per-harness Go
// adapters the tables replaced, and have changed since only where a table's
// protocol did (Claude's UserPromptSubmit block reason, user_only).
func TestGolden(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	for name, rows := range goldenRows {
		tb, ok := ts.Newest(name)
		if !ok {
			t.Fatalf("no table %s", name)
		}
		t.Run(name, func(t *testing.T) {
			dispatchtest.Golden(t, name,
				filepath.Join("testdata", "recordings", name, tb.Version),
				filepath.Join(name, "testdata", "golden"), rows, *update, goldenChecks[name])
		})
	}
}

// hookOutput checks what Claude Code and Gemini CLI were both seen to read
// of a hook's stdout: one JSON object, hookEventName beside any
// hookSpecificOutput, nothing on SessionEnd (its output is ignored). It
// returns the hookSpecificOutput, or nil.
func hookOutput(t *testing.T, event string, out dispatch.Native) map[string]json.RawMessage {
	t.Helper()
	if len(out.Stdout) == 0 {
		return nil
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
	if n.HSO != nil && string(n.HSO["hookEventName"]) != `"`+event+`"` {
		t.Errorf("hookEventName %s on %s", n.HSO["hookEventName"], event)
	}
	return n.HSO
}

var goldenChecks = map[string]func(t *testing.T, event string, out dispatch.Native){
	// What Claude Code was seen to accept: never a native allow, a rewrite
	// without permissionDecision.
	"claude": func(t *testing.T, event string, out dispatch.Native) {
		hso := hookOutput(t, event, out)
		if d := string(hso["permissionDecision"]); d != "" && d != `"deny"` {
			t.Errorf("permissionDecision %s: Claude keeps its own permission flow", d)
		}
	},
	// What Gemini CLI was seen to read: no context before a tool call.
	"gemini": func(t *testing.T, event string, out dispatch.Native) {
		if hso := hookOutput(t, event, out); event == "BeforeTool" && hso["additionalContext"] != nil {
			t.Errorf("additionalContext on BeforeTool, which Gemini CLI drops")
		}
	},
	// Codex's rules: no unknown key, a rewrite always beside
	// permissionDecision "allow", nothing on stdout for SessionEnd.
	"codex": func(t *testing.T, event string, out dispatch.Native) {
		if len(out.Stdout) == 0 {
			return
		}
		keys, ok := codexAllowed[event]
		if !ok {
			t.Fatalf("stdout on %s: %s", event, out.Stdout)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(out.Stdout, &top); err != nil {
			t.Fatalf("stdout is not JSON: %v", err)
		}
		for k, v := range top {
			switch {
			case k == "hookSpecificOutput" && keys.hso != nil:
				var hso map[string]json.RawMessage
				json.Unmarshal(v, &hso)
				for hk := range hso {
					if !slices.Contains(keys.hso, hk) {
						t.Errorf("Codex rejects hookSpecificOutput.%s on %s", hk, event)
					}
				}
				if string(hso["hookEventName"]) != `"`+event+`"` {
					t.Errorf("hookEventName %s on %s", hso["hookEventName"], event)
				}
				if hso["updatedInput"] != nil && string(hso["permissionDecision"]) != `"allow"` {
					t.Errorf("updatedInput without permissionDecision allow is ignored by Codex")
				}
			case !slices.Contains(codexCommon, k) && !slices.Contains(keys.top, k):
				t.Errorf("Codex rejects %s on %s", k, event)
			}
		}
	},
}

// The keys Codex 0.147.0 accepts in a hook's output, by event (it rejects
// unknown ones): the common fields, then the event's own.
var codexCommon = []string{"continue", "stopReason", "suppressOutput", "systemMessage"}

var codexAllowed = map[string]struct{ top, hso []string }{
	"SessionStart":     {nil, []string{"hookEventName", "additionalContext"}},
	"UserPromptSubmit": {[]string{"decision", "reason"}, []string{"hookEventName", "additionalContext"}},
	"PreToolUse":       {nil, []string{"hookEventName", "additionalContext", "permissionDecision", "permissionDecisionReason", "updatedInput"}},
	"PostToolUse":      {[]string{"decision", "reason"}, []string{"hookEventName", "additionalContext", "updatedMCPToolOutput", "updatedToolOutput"}},
	"Stop":             {[]string{"decision", "reason"}, nil},
}
