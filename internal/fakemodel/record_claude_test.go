package fakemodel

import (
	"path/filepath"
	"testing"
)

// addContext is the add_context answer of a Claude or Codex hook for event.
func addContext(event string) map[string]any {
	return map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": event, "additionalContext": "CTX-" + event + "-marker",
	}}
}

func pre(fields map[string]any) map[string]any {
	fields["hookEventName"] = "PreToolUse"
	return map[string]any{"hookSpecificOutput": fields}
}

// TestRecordClaude records every hook event of Claude Code once, plus the
// Stop that follows a blocked Stop, and checks where it loads skills and
// subagents from.
func TestRecordClaude(t *testing.T) {
	r := newRun(t, "claude", Script{Run("echo recorded-ok"), Run("exit 7"), Say("All done.")})
	r.hooks(claudeEvents)
	r.answer("Stop.1", map[string]any{"decision": "block", "reason": "again"})
	writeFile(t, filepath.Join(r.cfg, "skills", "homeskill", "SKILL.md"),
		"---\nname: homeskill\ndescription: SKILLDESC-claude-home marker skill\n---\nBody.\n")
	writeFile(t, filepath.Join(r.cfg, "agents", "homeagent.md"),
		"---\nname: homeagent\ndescription: AGENTDESC-claude-home marker agent\n---\nYou are a test agent.\n")
	r.exec("Run the commands you are given.")
	t.Logf("fired: %v", r.fired())

	p := r.payloads()
	dir := filepath.Join(recordingsDir, "claude", r.version)
	for _, ev := range claudeEvents {
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
	finding(t, "prompt_id equal on first and continued Stop = %v", field(t, p["Stop"][0], "prompt_id") == field(t, p["Stop"][1], "prompt_id"))
	finding(t, "skill in $HOME/.claude/skills/homeskill/SKILL.md: description sent to model = %v", r.server.Contains("SKILLDESC-claude-home"))
	finding(t, "agent in $HOME/.claude/agents/homeagent.md: description sent to model = %v", r.server.Contains("AGENTDESC-claude-home"))
	finding(t, "Stop block reason sent to model as a user message \"Stop hook feedback:\\nagain\" = %v", r.server.Contains("Stop hook feedback:\nagain"))
}

// TestRecordClaudeConfigDir checks whether CLAUDE_CONFIG_DIR replaces
// $HOME/.claude for settings.json, skills and agents.
func TestRecordClaudeConfigDir(t *testing.T) {
	r := newRun(t, "claude", Script{Run("echo a"), Say("ok")})
	r.cfg = filepath.Join(r.root, "cfg")
	r.env = append(r.env, "CLAUDE_CONFIG_DIR="+r.cfg)
	r.hooks(claudeEvents)
	// A settings.json in $HOME/.claude too, whose hook leaves a marker.
	writeFile(t, filepath.Join(r.home, ".claude", "settings.json"), `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch home-settings-hook-ran"}]}]}}`)
	writeFile(t, filepath.Join(r.cfg, "skills", "cfgskill", "SKILL.md"),
		"---\nname: cfgskill\ndescription: SKILLDESC-claude-cfg marker skill\n---\nBody.\n")
	writeFile(t, filepath.Join(r.cfg, "agents", "cfgagent.md"),
		"---\nname: cfgagent\ndescription: AGENTDESC-claude-cfg marker agent\n---\nYou are a test agent.\n")
	r.exec("hello")
	p := r.payloads()
	finding(t, "settings.json in $CLAUDE_CONFIG_DIR (none in $HOME/.claude): hooks fired %v", r.fired())
	if len(p["SessionStart"]) > 0 {
		finding(t, "transcript_path with CLAUDE_CONFIG_DIR: %s", field(t, p["SessionStart"][0], "transcript_path"))
	}
	finding(t, "$HOME/.claude/settings.json hook also ran with CLAUDE_CONFIG_DIR set = %v", r.exists("home-settings-hook-ran"))
	finding(t, "skill in $CLAUDE_CONFIG_DIR/skills/cfgskill/SKILL.md: description sent to model = %v", r.server.Contains("SKILLDESC-claude-cfg"))
	finding(t, "agent in $CLAUDE_CONFIG_DIR/agents/cfgagent.md: description sent to model = %v", r.server.Contains("AGENTDESC-claude-cfg"))
}

// TestRecordClaudeOutputs checks the native hook outputs of docs/design.md §4.
func TestRecordClaudeOutputs(t *testing.T) {
	recordVersion(t, "claude") // skip the whole table, not each case
	t.Run("add_context", func(t *testing.T) {
		r := newRun(t, "claude", Script{Run("echo a"), Run("exit 7"), Say("ok")})
		r.hooks(claudeEvents)
		evs := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure"}
		for _, ev := range evs {
			r.answer(ev, addContext(ev))
		}
		r.exec("hello")
		for _, ev := range evs {
			finding(t, "%s additionalContext reached the model = %v", ev, r.server.Contains("CTX-"+ev+"-marker"))
		}
	})
	t.Run("deny", func(t *testing.T) {
		r := newRun(t, "claude", Script{Run("touch denied"), Say("ok")})
		r.hooks(claudeEvents)
		r.answer("PreToolUse", pre(map[string]any{"permissionDecision": "deny", "permissionDecisionReason": "DENY-REASON-marker"}))
		r.exec("hello")
		finding(t, "PreToolUse deny: command ran = %v, reason reached the model = %v, PostToolUse fired = %v",
			r.exists("denied"), r.server.Contains("DENY-REASON-marker"), len(r.payloads()["PostToolUse"]) > 0)
	})
	for _, c := range []struct {
		name     string
		decision string
	}{{"rewrite_alone", ""}, {"rewrite_allow", "allow"}, {"rewrite_ask", "ask"}} {
		t.Run(c.name, func(t *testing.T) {
			r := newRun(t, "claude", Script{Run("touch original"), Say("ok")})
			r.hooks(claudeEvents)
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
		r := newRun(t, "claude", Script{Run("echo orig$((40+2))out"), Say("ok")})
		r.hooks(claudeEvents)
		r.answer("PostToolUse", map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName":     "PostToolUse",
			"updatedToolOutput": map[string]any{"stdout": "REPLACED-OUT-marker", "stderr": "", "interrupted": false, "isImage": false},
		}})
		r.exec("hello")
		finding(t, "PostToolUse updatedToolOutput: replacement reached the model = %v, original output reached the model = %v",
			r.server.Contains("REPLACED-OUT-marker"), r.server.Contains("orig42out"))
	})
	t.Run("session_end_output", func(t *testing.T) {
		r := newRun(t, "claude", Script{Say("ok")})
		r.hooks(claudeEvents)
		r.answer("SessionEnd", addContext("SessionEnd"))
		r.exec("hello")
		n := len(r.server.Requests())
		finding(t, "SessionEnd additionalContext: reached the model = %v (%d requests)", r.server.Contains("CTX-SessionEnd-marker"), n)
	})
}

// TestRecordClaudeSkillShell records PreSkillShellCommand, which Claude
// Code fires for a skill's inline shell command (!`command` in its
// SKILL.md) when the model loads the skill, on the versions that have it.
func TestRecordClaudeSkillShell(t *testing.T) {
	r := newRun(t, "claude", Script{{Tool: "Skill", Input: map[string]any{"skill": "shell-probe"}}, Say("All done.")})
	r.args = []string{"-p", "PROMPT", "--allowedTools", "Bash,Skill", "--output-format", "json"}
	r.hooks([]string{"PreSkillShellCommand"})
	writeFile(t, filepath.Join(r.cfg, "skills", "shell-probe", "SKILL.md"),
		"---\nname: shell-probe\ndescription: A probe skill with an inline shell command.\nallowed-tools: Bash(echo:*)\n---\n\nThe marker: !`echo recorded-skill-shell`\n")
	r.exec("Use the shell-probe skill.")
	p := r.payloads()["PreSkillShellCommand"]
	finding(t, "PreSkillShellCommand fired %d times", len(p))
	if len(p) == 0 {
		t.Skipf("claude %s fires no PreSkillShellCommand", r.version)
	}
	r.store(filepath.Join(recordingsDir, "claude", r.version), "PreSkillShellCommand.json", p[0])
}
