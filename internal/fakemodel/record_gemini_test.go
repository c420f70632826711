package fakemodel

import (
	"path/filepath"
	"testing"
)

// TestRecordGemini records every hook event of Gemini CLI once, plus the
// AfterAgent that follows a denied one, and the AfterTool of a command
// that fails.
func TestRecordGemini(t *testing.T) {
	r := newRun(t, "gemini", Script{Run("echo recorded-ok"), Run("exit 7"), Say("All done.")})
	r.hooks(geminiEvents)
	r.answer("AfterAgent.1", map[string]any{"decision": "deny", "reason": "again"})
	r.exec("Run the commands you are given.")
	t.Logf("fired: %v", r.fired())
	p := r.payloads()
	dir := filepath.Join(recordingsDir, "gemini", r.version)
	for _, ev := range geminiEvents {
		if len(p[ev]) == 0 {
			t.Errorf("%s did not fire", ev)
			continue
		}
		r.store(dir, ev+".json", p[ev][0])
	}
	if len(p["AfterAgent"]) >= 2 {
		r.store(dir, "AfterAgent.continued.json", p["AfterAgent"][1])
	} else {
		t.Errorf("no second AfterAgent after a deny")
	}
	if len(p["AfterTool"]) >= 2 {
		r.store(dir, "AfterTool.exit7.json", p["AfterTool"][1])
	}
	finding(t, "AfterAgent deny reason sent to the model as the next prompt = %v", r.server.Contains("again"))
}
