package scenario

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"dalo/internal/fakemodel"
	"dalo/plan"
)

// A skill whose body holds an inline shell command (!`...`): Claude Code
// runs the command when the skill loads, before the model reads the
// skill, and gives the model its output. No PreToolUse hook sees it; the
// event PreSkillShellCommand does, where dalo installs its tool_call/
// before gates too (the table's rows' also).

// skillShellEvent is the native event that sees a skill's shell command.
const skillShellEvent = "PreSkillShellCommand"

// skillShellBody is the SKILL.md of skill name, whose inline command
// creates ran (a path) and prints NativeText.
func skillShellBody(name, ran string) string {
	return "---\nname: " + name + "\ndescription: A skill with an inline shell command.\nallowed-tools: Bash(touch:*)\n---\n\n" +
		"The marker: !`touch " + ran + " && echo " + NativeText + "`\n"
}

// skillScript is the model's turn: load skill name, then answer.
func skillScript(name string) func(*World) fakemodel.Script {
	return func(*World) fakemodel.Script {
		return fakemodel.Script{{Tool: "Skill", Input: map[string]any{"skill": name}}, fakemodel.Say(NativeFinal)}
	}
}

// hasSkillShellEvent reports whether the world's table knows the event
// that sees a skill's shell command (mapped, or listed unmapped); where it
// does not, the scenarios below have nothing to prove and say so.
func hasSkillShellEvent(w *World) (bool, error) {
	tb, err := w.table()
	if err != nil {
		return false, err
	}
	_, used := tb.Events[skillShellEvent]
	_, listed := tb.Unmapped.Events[skillShellEvent]
	if !used && !listed {
		w.logf("%s has no native event %s: nothing to try", tb.Key(), skillShellEvent)
	}
	return used || listed, nil
}

// writeShellSkill writes the user's own skill shell-probe into the
// harness's configuration home and returns the file its command creates.
func writeShellSkill(w *World) (string, error) {
	ran := filepath.Join(w.Out, "skill-shell-ran")
	return ran, w.WriteFile(filepath.Join(w.ConfigHome(), "skills", "shell-probe", "SKILL.md"), skillShellBody("shell-probe", ran))
}

// skillShell loads a skill of the user's whose body holds an inline shell
// command, with native hooks on PreToolUse, PostToolUse and
// PreSkillShellCommand: the command runs and its output reaches the
// model; PreToolUse and PostToolUse see the Skill call only, never the
// command; PreSkillShellCommand sees it, as tool Bash with the command as
// tool_input.command.
var skillShell = &Scenario{
	Name: "skill-shell", Test: "TestNativeClaudeSkillShell", Harnesses: []string{"claude"},
	Script: skillScript("shell-probe"),
	Play: func(w *World, c *Check) error {
		if ok, err := hasSkillShellEvent(w); !ok {
			return err
		}
		w.AllowedTools = "Bash,Skill"
		ran, err := writeShellSkill(w)
		if err != nil {
			return err
		}
		if err := w.NativeHooks(3, "PreToolUse", "PostToolUse", skillShellEvent); err != nil {
			return err
		}
		s, err := w.Run("Use the shell-probe skill.")
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}
		if !fileExists(ran) || !w.Server.Contains(NativeText) {
			c.Failf("the skill's shell command ran = %v, its output reached the model = %v; want true, true", fileExists(ran), w.Server.Contains(NativeText))
		}
		for _, e := range []string{"PreToolUse", "PostToolUse"} {
			if ps := w.nativePayloads(c, e); len(ps) != 1 || ps[0]["tool_name"] != "Skill" {
				c.Failf("%s payloads %v: want one, for the Skill call (none for the skill's shell command)", e, ps)
			}
		}
		ps := w.nativePayloads(c, skillShellEvent)
		if len(ps) != 1 || ps[0]["tool_name"] != "Bash" {
			c.Failf("%s payloads %v: want one, tool_name Bash", skillShellEvent, ps)
			return nil
		}
		if in, _ := ps[0]["tool_input"].(map[string]any); in == nil || !strings.Contains(fmt.Sprint(in["command"]), "skill-shell-ran") {
			c.Failf("%s tool_input %v: want the skill's command", skillShellEvent, ps[0]["tool_input"])
		}
		return nil
	},
}

// skillShellDenials are the two ways Claude Code reads a PreToolUse deny,
// each tried on PreSkillShellCommand: exit 2 with the reason on stderr,
// and hookSpecificOutput.permissionDecision "deny".
var skillShellDenials = []struct {
	name, stdout, stderr string
	exit                 int
}{
	{"exit2", "", NativeStderr, 2},
	{"permission_decision", `{"hookSpecificOutput": {"hookEventName": "` + skillShellEvent + `", "permissionDecision": "deny", "permissionDecisionReason": "` + NativeStderr + `"}}`, "", 0},
}

// skillShellDeny loads the skill of skillShell, in a world of its own per
// way of denying, with a native hook on PreSkillShellCommand that denies:
// the command does not run, its output never reaches the model, and the
// reason does.
var skillShellDeny = &Scenario{
	Name: "skill-shell-deny", Test: "TestNativeClaudeSkillShellDeny", Harnesses: []string{"claude"},
	Script: skillScript("shell-probe"),
	Play: func(w *World, c *Check) error {
		if ok, err := hasSkillShellEvent(w); !ok {
			return err
		}
		for _, d := range skillShellDenials {
			sub, err := NewWorld(w.Machine, filepath.Join(w.Root, d.name), skillScript("shell-probe"))
			if err != nil {
				return err
			}
			sub.Logf = w.Logf
			err = skillShellDenied(sub, c, d.name, d.stdout, d.stderr, d.exit)
			sub.Close()
			if err != nil {
				return err
			}
		}
		return nil
	},
}

// skillShellDenied is one way of skillShellDeny, named name, in w.
func skillShellDenied(w *World, c *Check, name, stdout, stderr string, exit int) error {
	w.AllowedTools = "Bash,Skill"
	ran, err := writeShellSkill(w)
	if err != nil {
		return err
	}
	if err := w.NativeHooks(3, skillShellEvent); err != nil {
		return err
	}
	if err := w.NativeAnswer(skillShellEvent, stdout, stderr, exit); err != nil {
		return err
	}
	s, err := w.Run("Use the shell-probe skill.")
	c.Session = s
	if err != nil {
		c.Failf("%s: the session failed: %v", name, err)
		return nil
	}
	if ps := w.nativePayloads(c, skillShellEvent); len(ps) != 1 {
		c.Failf("%s: %s payloads %v: want one", name, skillShellEvent, ps)
	}
	if fileExists(ran) || w.Server.Contains(NativeText) {
		c.Failf("%s: the skill's shell command ran = %v, its output reached the model = %v; want false, false", name, fileExists(ran), w.Server.Contains(NativeText))
	}
	if !w.Server.Contains(NativeStderr) {
		c.Failf("%s: the deny reason %q did not reach the model", name, NativeStderr)
	}
	return nil
}

// skillShellGate installs, through dalo, a package holding a skill whose
// inline shell command would create a file, and a fail_closed Bash gate
// that denies any command naming that file; the model loads the skill.
// On a table that installs tool_call/before gates on PreSkillShellCommand
// too (rows' also), dalo's gate runs there, sees the command as tool Bash,
// and denies it: the file never appears, the command's output never
// reaches the model, the gate's reason does.
var skillShellGate = &Scenario{
	Name: "skill-shell-gate", Test: "TestSkillShellGate/%s", Harnesses: []string{"claude"},
	Script: skillScript("shell-gated"),
	Play: func(w *World, c *Check) error {
		tb, err := w.table()
		if err != nil {
			return err
		}
		if len(tb.AlsoEvents(plan.SubjectToolCall, plan.PhaseBefore, plan.EffectGate)) == 0 {
			w.logf("%s installs tool_call/before gates on no further event: nothing to try", tb.Key())
			return nil
		}
		w.AllowedTools = "Bash,Skill"
		w.StreamJSON = true
		ran := filepath.Join(w.Out, "skill-gated-ran")
		k := Kit{Name: "skill-gate-kit", Description: "A skill with an inline command, and a gate.",
			Skills: map[string]string{"shell-gated": skillShellBody("shell-gated", ran)},
			Hooks: []KitHook{{ID: "skill-gate", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailClosed,
				Tools: []string{"Bash"}, Env: []string{"PATH", "LIVE_OUT"}, Inputs: []string{"tool=string=tool.name"},
				Handler: "#!/bin/sh\nin=$(cat)\necho \"$1\" >> \"$LIVE_OUT/skill-gate.ran\"\n" +
					"case \"$in\" in *skill-gated-ran*) echo '{\"kind\":\"deny\",\"reason\":\"" + NativeStderr + "\"}'; exit 0 ;; esac\necho '{\"kind\":\"abstain\"}'\n"}}}
		out, err := w.InstallSource("skillgate", k.Name, k.Files())
		if err != nil {
			return err
		}
		if !strings.Contains(out, skillShellEvent) {
			c.Failf("install does not say it installed the gate on %s:\n%s", skillShellEvent, out)
		}
		s, err := w.Run("Use the shell-gated skill.")
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}
		if fileExists(ran) || w.Server.Contains(NativeText) {
			c.Failf("the skill's shell command ran = %v, its output reached the model = %v; want false, false", fileExists(ran), w.Server.Contains(NativeText))
		}
		if got := strings.Fields(w.Output("skill-gate.ran")); !slices.Contains(got, "Bash") {
			c.Failf("dalo's gate ran with tool names %q; want Bash, for the skill's command", got)
		}
		if !w.Server.Contains(NativeStderr) {
			c.Failf("the gate's reason %q did not reach the model", NativeStderr)
		}
		return nil
	},
}
