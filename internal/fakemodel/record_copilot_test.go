package fakemodel

import (
	"path/filepath"
	"testing"
)

// TestRecordCopilot records every hook event GitHub Copilot CLI's table
// uses once, in the PascalCase shape dalo writes, plus the Stop that
// follows a blocked one.
func TestRecordCopilot(t *testing.T) {
	recordBashLike(t, "copilot", copilotEvents)
}

// TestRecordQwen records every hook event Qwen Code's table uses once,
// plus the Stop that follows a blocked one.
func TestRecordQwen(t *testing.T) {
	recordBashLike(t, "qwen", qwenEvents)
}

// recordBashLike records the events of a harness with Claude Code's hook
// shape: one shell command, a Stop blocked once.
func recordBashLike(t *testing.T, harness string, events []string) {
	r := newRun(t, harness, Script{Run("echo recorded-ok"), Say("All done.")})
	r.hooks(events)
	r.answer("Stop.1", map[string]any{"decision": "block", "reason": "again"})
	r.exec("Run the commands you are given.")
	t.Logf("fired: %v", r.fired())
	p := r.payloads()
	dir := filepath.Join(recordingsDir, harness, r.version)
	for _, ev := range events {
		if len(p[ev]) == 0 {
			t.Errorf("%s did not fire", ev)
			continue
		}
		r.store(dir, ev+".json", p[ev][0])
	}
	if len(p["Stop"]) >= 2 {
		r.store(dir, "Stop.continued.json", p["Stop"][1])
	} else {
		t.Errorf("no second Stop after a block")
	}
	finding(t, "Stop block reason sent to the model as the next prompt = %v", r.server.Contains("again"))
}
