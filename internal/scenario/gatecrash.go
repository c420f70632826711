package scenario

import (
	"fmt"

	"dalo/internal/fakemodel"
)

// The gate crash kit: one required shell gate, fail_closed with
// error_visibility user, whose handler crashes. With gate-context it is
// what a package that guards needs of a harness version: a gate that
// cannot answer still blocks. Claude Code, Codex and Gemini CLI show it in
// tool-calls; GitHub Copilot CLI and Qwen Code, which the kit of
// tool-calls is not written for, here.
const (
	gxSrcID  = "gx"
	gxPkg    = "gate-crash-kit"
	gxStderr = "LIVE-GATE-CRASH-STDERR-5b81"
)

// gxFiles is the gate crash kit's author source.
func gxFiles() map[string]string {
	return map[string]string{
		"plugins/" + gxPkg + "/gate.sh": "#!/bin/sh\necho " + gxStderr + " >&2\nexit 3\n",
		"plugins/" + gxPkg + "/PLUGIN.toml": fmt.Sprintf(`schema_version = 1

[plugin]
name = %q
description = "A required shell gate whose handler crashes."
id = "dalo.%s"

[[tool]]
schema_version = 1
id = "gate"
entry = "gate.sh"
runtime = "executable"
argv = []
cwd = "tool_root"
availability = "required"

[[hook]]
schema_version = 1
id = "gate"
tool = "gate"
subject = "tool_call"
phase = "before"
effect = "gate"
requirement = "required"
timeout_ms = 5000
failure_policy = "fail_closed"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
matcher = { tool_names = ["Bash"] }
`, gxPkg, gxPkg),
	}
}

// gateCrash installs the gate crash kit and runs one prompt whose model
// calls the shell: the command does not run, the model reads the generic
// reason of a failed fail_closed hook, and neither the handler's stderr
// nor dalo's diagnostic reaches it.
var gateCrash = &Scenario{
	Name: "gate-crash", Test: "TestGateCrash/%s", Harnesses: []string{"copilot", "qwen"},
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{fakemodel.Run("touch gx-crashed"), fakemodel.Say("Done.")}
	},
	Play: func(w *World, c *Check) error {
		if _, err := w.InstallSource(gxSrcID, gxPkg, gxFiles()); err != nil {
			return err
		}
		s, err := w.Run("Run the command you are given.")
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}
		if w.Exists("gx-crashed") {
			c.Failf("fail_closed gate crashed, yet the command ran")
		}
		generic := fmt.Sprintf("[%s:%s/gate] This hook failed; the details were shown to the user. The action was blocked (fail_closed).", gxSrcID, gxPkg)
		if !w.Server.Contains(generic) {
			c.Failf("fail_closed gate crashed: the model did not read %q", generic)
		}
		if w.Server.Contains(gxStderr) {
			c.Failf("fail_closed gate crashed: its stderr reached the model")
		}
		if w.Server.Contains("handler exited with status 3") {
			c.Failf("fail_closed gate crashed, error_visibility user: dalo's diagnostic reached the model")
		}
		return nil
	},
}
