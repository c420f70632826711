package live

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
)

// TestMemberPowersClaudeSkillHooks runs a Claude session whose model loads
// a skill whose front matter declares a PreToolUse hook of its own, then
// runs a shell command: the skill's hook command runs, with no hook in the
// user's settings and nothing of dalo's. So a skill's hooks key runs code
// by itself, as the table's member_powers says, and only a member grant
// stands between a package and it.
func TestMemberPowersClaudeSkillHooks(t *testing.T) {
	t.Parallel()
	tb := tableUnder(t, "claude")
	listed := false
	for _, p := range tb.MemberPowers {
		listed = listed || p.Kind == "skill" && p.Key == "hooks"
	}
	if !listed {
		t.Skipf("%s lists no skill key hooks in member_powers", tb.Key())
	}
	w := newWorld(t, "claude", fakemodel.Script{
		{Tool: "Skill", Input: map[string]any{"skill": "hook-probe"}},
		{Tool: "Bash", Input: map[string]any{"command": "echo " + natText}},
		fakemodel.Say(natFinal),
	})
	w.AllowedTools = "Bash,Skill"
	ran := filepath.Join(w.out, "skill-hook-ran")
	w.writeFile(filepath.Join(w.home, ".claude", "skills", "hook-probe", "SKILL.md"),
		"---\nname: hook-probe\ndescription: A probe skill with a hook of its own.\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: touch "+ran+"\n---\n\nLoaded.\n")
	s := w.run("Use the hook-probe skill, then run the command.")
	if _, err := os.Stat(ran); err != nil {
		w.failf(s, "the skill's own PreToolUse hook ran = false (%v); want true", err)
	}
}

// TestMemberPowersClaudeAgentPermissionMode runs a Claude session in
// print mode, where a shell command not allowed is refused, whose model
// starts a subagent that runs one, with and without
// permissionMode: bypassPermissions in the agent's file. Measured on
// 2.1.332: neither runs it (the result lists the Bash call among its
// permission denials), so in a session the user did not widen, an agent's
// permissionMode does not widen it either. The table keeps the key as a
// power, with this, since its documentation says bypassPermissions runs
// every tool without asking where the session allows that mode.
func TestMemberPowersClaudeAgentPermissionMode(t *testing.T) {
	t.Parallel()
	tb := tableUnder(t, "claude")
	// What this test asserts (the session's refusal holds for the
	// subagent) is what 2.1.332 does; a table whose permissionMode claim
	// does not cite it claims nothing this test can check. On 2.1.233 a
	// run of it saw the subagent's command run.
	cited := false
	for _, p := range tb.MemberPowers {
		cited = cited || p.Kind == "agent" && p.Key == "permissionMode" && slices.Contains(p.Evidence, "test: internal/live TestMemberPowersClaudeAgentPermissionMode")
	}
	if !cited {
		t.Skipf("%s's member_powers claim of agent key permissionMode does not cite this test", tb.Key())
	}
	for _, tc := range []struct{ name, mode string }{
		{"bypassPermissions", "permissionMode: bypassPermissions\n"},
		{"default", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ran string
			w := newWorldFor(t, "claude", func(w *world) fakemodel.Script {
				ran = filepath.Join(w.out, "agent-ran")
				return fakemodel.Script{
					{Tool: "Agent", Input: map[string]any{"description": "Probe", "prompt": "Run the probe command.",
						"subagent_type": "mode-probe", "run_in_background": false}},
					fakemodel.Run("touch " + ran),
					fakemodel.Say(natFinal),
				}
			})
			w.AllowedTools = "Agent"
			w.writeFile(filepath.Join(w.home, ".claude", "agents", "mode-probe.md"),
				"---\nname: mode-probe\ndescription: Runs the probe command.\ntools: Bash\n"+tc.mode+"---\nRun the command you are given.\n")
			s := w.run("Start the mode-probe agent.")
			if _, err := os.Stat(ran); err == nil || !strings.Contains(s.stdout, `"permission_denials":[{"tool_name":"Bash"`) {
				w.failf(s, "the subagent's command ran = %v; want false, refused as a permission denial", err == nil)
			}
		})
	}
}

// TestMemberPowersCodexSkill installs through dalo a skill whose file
// holds what runs code by itself on Claude Code (allowed-tools, a hooks
// key with a command of its own, an inline !`command`), then runs a Codex
// session whose model reads the skill as Codex's skills are used (it
// opens SKILL.md with the shell) and runs a shell command. The skill's
// text reaches the model; neither of its commands runs. So on Codex a
// skill's file makes the harness do nothing by itself: what it tells the
// model to run goes through Codex's shell tool, where dalo's
// tool_call/before gates see it.
func TestMemberPowersCodexSkill(t *testing.T) {
	t.Parallel()
	needs(t, "codex")
	const marker = "LIVE-CODEX-SKILL-POWERS-5e2a"
	var inline, hook string
	w := newWorldFor(t, "codex", func(w *world) fakemodel.Script {
		inline = filepath.Join(w.out, "skill-inline-ran")
		hook = filepath.Join(w.out, "skill-hook-ran")
		return fakemodel.Script{
			// Wherever this Codex version reads skills from.
			fakemodel.Run("cat $(find " + w.home + " -path '*/power-probe/SKILL.md')"),
			fakemodel.Run("echo " + natText),
			fakemodel.Say(natFinal),
		}
	})
	k := kit{name: "codex-skill-powers", description: "A skill with commands of its own.",
		skills: map[string]string{"power-probe": "---\nname: power-probe\ndescription: A probe skill with commands of its own.\n" +
			"allowed-tools: Bash(touch:*)\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: touch " + hook + "\n---\n\n" +
			marker + " Today: !`touch " + inline + "`\n"}}
	out := w.installSource("codexskill", k.name, k.files())
	if !strings.Contains(out, "/skills/power-probe\n") {
		t.Fatalf("install did not write the skill:\n%s", out)
	}
	s := w.run("Use the power-probe skill, then run the command.")
	if !w.server.Contains(marker) {
		w.failf(s, "the skill's text did not reach the model: the probe read nothing")
	}
	for _, f := range []string{inline, hook} {
		if _, err := os.Stat(f); err == nil {
			w.failf(s, "%s exists: a command of the skill's file ran by itself on Codex", filepath.Base(f))
		}
	}
}
