package fakemodel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordCodex records every hook event of Codex once, plus the Stop
// that follows a blocked Stop, and checks where it loads skills from.
func TestRecordCodex(t *testing.T) {
	r := newRun(t, "codex", Script{Run("echo recorded-ok"), Run("exit 7"), Say("All done.")})
	r.hooks(codexEvents)
	r.answer("Stop.1", map[string]any{"decision": "block", "reason": "again"})
	writeFile(t, filepath.Join(r.home, ".agents", "skills", "agentsskill", "SKILL.md"),
		"---\nname: agentsskill\ndescription: SKILLDESC-codex-agents marker skill\n---\nBody.\n")
	writeFile(t, filepath.Join(r.cfg, "skills", "codexhomeskill", "SKILL.md"),
		"---\nname: codexhomeskill\ndescription: SKILLDESC-codex-codexhome marker skill\n---\nBody.\n")
	r.exec("Run the commands you are given.")
	t.Logf("fired: %v", r.fired())

	p := r.payloads()
	dir := filepath.Join(recordingsDir, "codex", r.version)
	for _, ev := range codexEvents {
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
	finding(t, "PostToolUse fired %d times for echo + exit 7", len(p["PostToolUse"]))
	finding(t, "skill in $HOME/.agents/skills/agentsskill/SKILL.md: description sent to model = %v", r.server.Contains("SKILLDESC-codex-agents"))
	finding(t, "skill in $CODEX_HOME/skills/codexhomeskill/SKILL.md: description sent to model = %v", r.server.Contains("SKILLDESC-codex-codexhome"))
	finding(t, "Stop block reason sent to model inside <hook_prompt ...>again</hook_prompt> = %v", r.server.Contains(">again</hook_prompt>"))
	finding(t, "turn_id equal on first and continued Stop = %v", field(t, p["Stop"][0], "turn_id") == field(t, p["Stop"][1], "turn_id"))
	if len(p["PostToolUse"]) >= 2 {
		r.store(dir, "PostToolUse.exit7.json", p["PostToolUse"][1])
	}
}

// TestRecordCodexTrust runs the hooks without --dangerously-bypass-hook-trust.
func TestRecordCodexTrust(t *testing.T) {
	r := newRun(t, "codex", Script{Run("echo a"), Say("ok")})
	var args []string
	for _, a := range r.args {
		if a != "--dangerously-bypass-hook-trust" {
			args = append(args, a)
		}
	}
	r.args = args
	r.hooks(codexEvents)
	r.exec("hello")
	finding(t, "without --dangerously-bypass-hook-trust: hooks fired %v, run finished with %q", r.fired(), strings.TrimSpace(r.stdout))
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.Contains(strings.ToLower(line), "hook") || strings.Contains(strings.ToLower(line), "trust") {
			finding(t, "stderr: %s", line)
		}
	}
	cfg, _ := os.ReadFile(filepath.Join(r.cfg, "config.toml"))
	finding(t, "config.toml after the run:\n%s", cfg)
}

// TestRecordCodexOutputs checks the native hook outputs of docs/design.md §4.
func TestRecordCodexOutputs(t *testing.T) {
	recordVersion(t, "codex") // skip the whole table, not each case
	t.Run("add_context", func(t *testing.T) {
		r := newRun(t, "codex", Script{Run("echo a"), Run("exit 7"), Say("ok")})
		r.hooks(codexEvents)
		evs := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"}
		for _, ev := range evs {
			r.answer(ev, addContext(ev))
		}
		r.exec("hello")
		for _, ev := range evs {
			finding(t, "%s additionalContext reached the model = %v", ev, r.server.Contains("CTX-"+ev+"-marker"))
		}
	})
	t.Run("deny", func(t *testing.T) {
		r := newRun(t, "codex", Script{Run("touch denied"), Say("ok")})
		r.hooks(codexEvents)
		r.answer("PreToolUse", pre(map[string]any{"permissionDecision": "deny", "permissionDecisionReason": "DENY-REASON-marker"}))
		r.exec("hello")
		finding(t, "PreToolUse deny: command ran = %v, reason reached the model = %v, PostToolUse fired = %v",
			r.exists("denied"), r.server.Contains("DENY-REASON-marker"), len(r.payloads()["PostToolUse"]) > 0)
	})
	for _, c := range []struct {
		name     string
		decision string
	}{{"rewrite_alone", ""}, {"rewrite_allow", "allow"}} {
		t.Run(c.name, func(t *testing.T) {
			r := newRun(t, "codex", Script{Run("touch original"), Say("ok")})
			r.hooks(codexEvents)
			out := map[string]any{"updatedInput": map[string]any{"command": "touch rewritten"}}
			if c.decision != "" {
				out["permissionDecision"] = c.decision
			}
			r.answer("PreToolUse", pre(out))
			r.exec("hello")
			finding(t, "PreToolUse updatedInput with permissionDecision=%q: original ran = %v, rewritten ran = %v",
				c.decision, r.exists("original"), r.exists("rewritten"))
		})
	}
	t.Run("replace_output", func(t *testing.T) {
		r := newRun(t, "codex", Script{Run("echo orig$((40+2))out"), Say("ok")})
		r.hooks(codexEvents)
		r.answer("PostToolUse", map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName":     "PostToolUse",
			"updatedToolOutput": "REPLACED-OUT-marker",
		}})
		r.exec("hello")
		finding(t, "PostToolUse updatedToolOutput: replacement reached the model = %v, original output reached the model = %v",
			r.server.Contains("REPLACED-OUT-marker"), r.server.Contains("orig42out"))
	})
	t.Run("session_end_output", func(t *testing.T) {
		r := newRun(t, "codex", Script{Say("ok")})
		r.hooks(codexEvents)
		r.answer("SessionEnd", addContext("SessionEnd"))
		r.exec("hello")
		finding(t, "SessionEnd additionalContext: reached the model = %v (%d requests)", r.server.Contains("CTX-SessionEnd-marker"), len(r.server.Requests()))
	})
}
