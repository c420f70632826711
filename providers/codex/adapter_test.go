package codex_test

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"

	"dalo/dispatch"
	"dalo/dispatch/dispatchtest"
	"dalo/providers/codex"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// rows are the events recorded from Codex 0.147.0 with the hook rows and
// effects it supports there (DECISIONS §3 and §4: no failure event, no
// output replacement).
var rows = []dispatchtest.Row{
	{Payload: "SessionStart", Event: "SessionStart", Subject: "session", Phase: "start", Effects: []string{"observe", "add_context"}},
	{Payload: "UserPromptSubmit", Event: "UserPromptSubmit", Subject: "prompt", Phase: "before", Effects: []string{"observe", "add_context", "gate"}},
	{Payload: "PreToolUse", Event: "PreToolUse", Subject: "tool_call", Phase: "before", Effects: []string{"observe", "add_context", "gate", "rewrite_input"}},
	{Payload: "PostToolUse", Event: "PostToolUse", Subject: "tool_call", Phase: "after", Effects: []string{"observe", "add_context"}},
	{Payload: "PostToolUse.exit7", Event: "PostToolUse", Subject: "tool_call", Phase: "after", Effects: []string{"add_context"}},
	{Payload: "Stop", Event: "Stop", Subject: "workflow", Phase: "stop", Effects: []string{"observe", "continue_workflow"}},
	{Payload: "Stop.continued", Event: "Stop", Subject: "workflow", Phase: "stop", Effects: []string{"continue_workflow"}},
	{Payload: "SessionEnd", Event: "SessionEnd", Subject: "session", Phase: "end", Effects: []string{"observe"}},
}

func TestGolden(t *testing.T) {
	dispatchtest.Golden(t, codex.Adapter{}, "codex",
		filepath.Join("..", "testdata", "recordings", "codex", "0.147.0"),
		filepath.Join("testdata", "golden"), rows, *update, check)
}

// allowed are the keys Codex 0.147.0 accepts in a hook's output, by event
// (it rejects unknown ones): the common fields, then the event's own.
var common = []string{"continue", "stopReason", "suppressOutput", "systemMessage"}

var allowed = map[string]struct{ top, hso []string }{
	"SessionStart":     {nil, []string{"hookEventName", "additionalContext"}},
	"UserPromptSubmit": {[]string{"decision", "reason"}, []string{"hookEventName", "additionalContext"}},
	"PreToolUse":       {nil, []string{"hookEventName", "additionalContext", "permissionDecision", "permissionDecisionReason", "updatedInput"}},
	"PostToolUse":      {[]string{"decision", "reason"}, []string{"hookEventName", "additionalContext", "updatedMCPToolOutput", "updatedToolOutput"}},
	"Stop":             {[]string{"decision", "reason"}, nil},
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// check holds Codex's rules: no unknown key, a rewrite always beside
// permissionDecision "allow", nothing on stdout for SessionEnd.
func check(t *testing.T, event string, out dispatch.Native) {
	if len(out.Stdout) == 0 {
		return
	}
	keys, ok := allowed[event]
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
				if !has(keys.hso, hk) {
					t.Errorf("Codex rejects hookSpecificOutput.%s on %s", hk, event)
				}
			}
			if string(hso["hookEventName"]) != `"`+event+`"` {
				t.Errorf("hookEventName %s on %s", hso["hookEventName"], event)
			}
			if hso["updatedInput"] != nil && string(hso["permissionDecision"]) != `"allow"` {
				t.Errorf("updatedInput without permissionDecision allow is ignored by Codex")
			}
		case !has(common, k) && !has(keys.top, k):
			t.Errorf("Codex rejects %s on %s", k, event)
		}
	}
}
