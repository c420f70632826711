package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"dalo/internal/fakemodel"
)

const (
	skillShellText   = "NAT-HOOK-TEXT-9b07"
	skillShellReason = "NAT-HANDLER-STDERR-e3a4"
)

// claudeSkillShellGate installs, through dalo, a package holding a skill
// whose inline shell command (!`...`) would create a file, and a
// fail_closed Bash gate that denies any command naming that file; the
// model loads the skill. On a table that maps PreSkillShellCommand (rows
// tool_call/before also), dalo's gate runs there, sees the command as
// tool Bash, and denies it: the file never appears, the command's output
// never reaches the model, the gate's reason does.
var claudeSkillShellGate = &Scenario{
	Name: "claude-skill-shell-gate", Test: "TestSkillShellGate/claude", Harnesses: []string{"claude"},
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{{Tool: "Skill", Input: map[string]any{"skill": "shell-gated"}}, fakemodel.Say("Done.")}
	},
	Play: func(w *World, c *Check) error {
		tb, err := w.table()
		if err != nil {
			return err
		}
		if len(tb.AlsoEvents("tool_call", "before", "gate")) == 0 {
			return fmt.Errorf("%s installs tool_call/before gates on no event beside PreToolUse", tb.Key())
		}
		ran := filepath.Join(w.Out, "skill-gated-ran")
		k := Kit{Name: "skill-gate-kit", Description: "A skill with an inline command, and a gate.",
			Skills: map[string]string{"shell-gated": "---\nname: shell-gated\ndescription: A skill with an inline shell command.\nallowed-tools: Bash(touch:*)\n---\n\n" +
				"The marker: !`touch " + ran + " && echo " + skillShellText + "`\n"}}
		k.Hooks = append(k.Hooks, KitHook{ID: "skill-gate", Subject: "tool_call", Phase: "before", Effect: "gate", Policy: "fail_closed",
			Tools: []string{"Bash"}, Env: []string{"PATH", "LIVE_OUT"}, Inputs: []string{"tool=string=tool.name"},
			Handler: "#!/bin/sh\nin=$(cat)\necho \"$1\" >> \"$LIVE_OUT/skill-gate.ran\"\n" +
				"case \"$in\" in *skill-gated-ran*) echo '{\"kind\":\"deny\",\"reason\":\"" + skillShellReason + "\"}'; exit 0 ;; esac\necho '{\"kind\":\"abstain\"}'\n"})
		out, err := w.InstallSource("skillgate", "skill-gate-kit", k.Files())
		if err != nil {
			return err
		}
		if !strings.Contains(out, "PreSkillShellCommand") {
			c.Failf("install does not say it installed the gate on PreSkillShellCommand:\n%s", out)
		}
		// The model may load skills: --allowedTools Bash,Skill.
		s, err := RunHarness(w.Bin, Args(w.Harness, "Use the shell-gated skill.", "Bash,Skill", true), w.Work, w.Env, SessionTimeout)
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}
		if _, err := os.Stat(ran); err == nil || w.Server.Contains(skillShellText) {
			c.Failf("the skill's shell command ran = %v, its output reached the model = %v; want false, false", err == nil, w.Server.Contains(skillShellText))
		}
		if got := strings.Fields(w.Output("skill-gate.ran")); !slices.Contains(got, "Bash") {
			c.Failf("dalo's gate ran with tool names %q; want Bash, for the skill's command", got)
		}
		if !w.Server.Contains(skillShellReason) {
			c.Failf("the gate's reason %q did not reach the model", skillShellReason)
		}
		return nil
	},
}
