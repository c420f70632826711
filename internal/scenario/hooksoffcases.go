package scenario

import (
	"fmt"
	"strings"

	"dalo/providers"
)

// Settings of a harness's hook file, beside dalo's entries, that the
// harness rejects, dropping dalo's entries with the rest: each its own
// scenario (the live test TestHooksOff/<name>) that installs the gate,
// changes the settings as the user would, and checks that doctor says
// the gate is not in force, saying why, and that the gated command runs.

// userHook adds a hook of the user's own to the settings s, beside dalo's
// entries, under event.
func userHook(s map[string]any, event string, group map[string]any) {
	hooks := s["hooks"].(map[string]any)
	list, _ := hooks[event].([]any)
	hooks[event] = append(list, group)
}

// hooksOffCases are the settings, by live test, with what doctor says.
var hooksOffCases = []struct {
	name, harness string
	set           func(settings map[string]any)
	says          string
	// dropScope, when set, is a path of the table's config.drop whose
	// scope says whether the change switches dalo's gate off: only when
	// the whole file is dropped, not only the event's hooks.
	dropScope string
}{
	// Values Claude Code's settings schema rejects: it ignores the whole
	// file, dalo's entries with it.
	{"claude_model", "claude", func(s map[string]any) { s["model"] = 5 }, "model is 5, where Claude Code accepts only string: Claude Code ignores the whole file", ""},
	{"claude_permissions", "claude", func(s map[string]any) { s["permissions"] = "x" }, `permissions is "x", where Claude Code accepts only object`, ""},
	{"claude_disable_number", "claude", func(s map[string]any) { s["disableAllHooks"] = 1 }, "disableAllHooks is 1, where Claude Code accepts only boolean", ""},
	{"claude_disable_string", "claude", func(s map[string]any) { s["disableAllHooks"] = "false" }, `disableAllHooks is "false", where Claude Code accepts only boolean`, ""},
	{"claude_hook_type", "claude", func(s map[string]any) {
		userHook(s, "PreToolUse", map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "nope", "command": "true"}}})
	}, `hooks.PreToolUse[1].hooks[0].type is "nope", where Claude Code accepts only "command", "prompt", "agent", "http" or "mcp_tool"`, ""},
	{"claude_hook_matcher", "claude", func(s map[string]any) {
		userHook(s, "PreToolUse", map[string]any{"matcher": 5, "hooks": []any{map[string]any{"type": "command", "command": "true"}}})
	}, "hooks.PreToolUse[1].matcher is 5, where Claude Code accepts only string", ""},
	// A hook of the user's Claude Code rejects, under another event: as
	// the table's scope of that check says, the whole file is dropped
	// (2.1.233), or only that event's hooks and dalo's gate runs
	// (2.1.332).
	{"claude_hook_other_event", "claude", func(s map[string]any) {
		userHook(s, "PostToolUse", map[string]any{"matcher": 5, "hooks": []any{map[string]any{"type": "command", "command": "true"}}})
	}, "hooks.PostToolUse[0].matcher is 5, where Claude Code accepts only string", "hooks.*.*.matcher"},
	// A malformed entry of the user's in Codex's hooks.json.
	{"codex_hook_timeout", "codex", func(s map[string]any) {
		userHook(s, "SessionStart", map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "true", "timeout": "x"}}})
	}, `hooks.SessionStart[0].hooks[0].timeout is "x", where Codex CLI accepts only number: Codex reads none of the file's hooks`, ""},
	{"codex_event_not_list", "codex", func(s map[string]any) { s["hooks"].(map[string]any)["PostToolUse"] = "bad" },
		`hooks.PostToolUse is "bad", where Codex CLI accepts only array: Codex reads none of the file's hooks`, ""},
}

// hooksOffScenarios are the scenarios of hooksOffCases.
func hooksOffScenarios() []*Scenario {
	var out []*Scenario
	for _, hc := range hooksOffCases {
		out = append(out, &Scenario{
			Name: "hooks-off-" + hc.name, Test: "TestHooksOff/" + hc.name, Harnesses: []string{hc.harness},
			Script: gatedScript,
			Play: func(w *World, c *Check) error {
				if err := w.installGate(); err != nil {
					return err
				}
				settings, err := w.hooksFileJSON()
				if err != nil {
					return err
				}
				hc.set(settings)
				if err := w.writeJSON(w.HooksFile(), settings); err != nil {
					return err
				}
				inForce := false
				if hc.dropScope != "" {
					if inForce, err = dropsEventOnly(w, hc.dropScope); err != nil {
						return err
					}
				}
				if !inForce {
					return hooksOffSession(w, c, w.Root, hc.says)
				}
				return hooksOnSession(w, c, hc.says)
			},
		})
	}
	return out
}

// dropsEventOnly reports whether the world's table says the drop that
// checks path drops only the event's hooks.
func dropsEventOnly(w *World, path string) (bool, error) {
	tb, err := w.table()
	if err != nil {
		return false, err
	}
	for _, d := range tb.Config.Drop {
		for _, ck := range d.Checks {
			if ck.Path == path {
				return d.Scope == providers.DropsEvent, nil
			}
		}
	}
	return false, fmt.Errorf("%s: no drop checks %s", tb.Key(), path)
}

// hooksOnSession checks that doctor (exit 0) says says and the gate is in
// force, and that the harness ran dalo's gate: the gated command did not
// run, and the gate's reason reached the model.
func hooksOnSession(w *World, c *Check, says string) error {
	out, code, err := w.doctorIn(w.Root)
	if err != nil {
		return err
	}
	s, err := w.Run("Run the command you are given.")
	c.Session = s
	if err != nil {
		c.Failf("the session failed: %v", err)
		return nil
	}
	if code != 0 || !strings.Contains(out, says) {
		c.Failf("doctor: exit %d, want 0 saying %q:\n%s", code, says, out)
	}
	if w.Exists("gated-ran") || !w.Server.Contains(MarkGate) {
		c.Failf("the gated command ran = %v, the gate's reason reached the model = %v; want false, true (the setting switches nothing off)",
			w.Exists("gated-ran"), w.Server.Contains(MarkGate))
	}
	return nil
}
