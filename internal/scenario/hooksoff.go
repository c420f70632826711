package scenario

import (
	"bytes"
	"context"
	"dalo/plan"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"dalo/internal/fakemodel"
	"dalo/providers"
)

// The gate kit: one required fail_closed gate that denies every shell
// command naming "gated". The hooks-off scenarios install it and then
// switch the harness's hooks off as its user would.
const (
	GateKit    = "gate-kit"
	GateSource = "gates"
	MarkGate   = "LIVE-GATE-REASON-5e1a"
)

// GateKitFiles is the gate kit's source.
func GateKitFiles() map[string]string {
	return Kit{Name: GateKit, Description: "A required gate that denies gated commands.", Hooks: []KitHook{{
		ID: plan.EffectGate, Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailClosed,
		Tools:   []string{"Bash"},
		Handler: "#!/bin/sh\ncase \"$(cat)\" in\n*gated*) printf '{\"kind\":\"deny\",\"reason\":\"" + MarkGate + "\"}' ;;\n*) printf '{\"kind\":\"abstain\"}' ;;\nesac\n",
	}}}.Files()
}

func gatedScript(*World) fakemodel.Script {
	return fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")}
}

// installGate installs the gate kit, and doctor finds it in force.
func (w *World) installGate() error {
	if _, err := w.InstallSource(GateSource, GateKit, GateKitFiles()); err != nil {
		return err
	}
	_, err := w.Dalo("doctor")
	return err
}

// doctorIn runs dalo doctor in dir and returns what it printed and its
// exit status.
func (w *World) doctorIn(dir string) (string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DaloTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.Machine.Dalo, "doctor")
	cmd.Dir = dir
	cmd.Env = w.Env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), ee.ExitCode(), nil
	}
	return out.String(), 0, err
}

// hooksFileJSON returns the harness's hook file, decoded.
func (w *World) hooksFileJSON() (map[string]any, error) {
	var m map[string]any
	b, err := os.ReadFile(w.HooksFile())
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	return m, err
}

// writeJSON writes v to file as indented JSON.
func (w *World) writeJSON(file string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return w.WriteFile(file, string(b)+"\n")
}

// hooksOffSession runs the gated command in w, whose hooks its user
// switched off, and checks that doctor (run in dir) said the gate is not
// in force, saying says, and that the harness ran the gated command
// without the gate.
func hooksOffSession(w *World, c *Check, dir, says string) error {
	out, code, err := w.doctorIn(dir)
	if err != nil {
		return err
	}
	s, err := w.Run("Run the command you are given.")
	c.Session = s
	if err != nil {
		c.Failf("%s: the session failed: %v", says, err)
		return nil
	}
	if code != 1 || !strings.Contains(out, says) || !strings.Contains(out, "NOT in force") {
		c.Failf("doctor with the hooks off (%s): exit %d, want 1 saying it and NOT in force:\n%s", says, code, out)
	}
	if !w.Exists("gated-ran") || w.Server.Contains(MarkGate) {
		c.Failf("hooks off (%s): the gated command ran = %v, the gate's reason reached the model = %v; want true, false (the harness runs no dalo entry)",
			says, w.Exists("gated-ran"), w.Server.Contains(MarkGate))
	}
	return nil
}

// setDotted sets the dotted path key in m to v, making the objects on the
// way.
func setDotted(m map[string]any, key string, v any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

// hooksOff sets, in a world of its own, each switch of the table's
// config.off, each value of it, in the file it names (the user's, or the
// project's); after each the harness runs none of dalo's entries, so the
// gated command runs, and doctor, run where it reads the file, names the
// key and says the gate is not in force. A switch in the machine's own
// /etc, which no variable moves, is never written: not tried. Nor is one
// the harness reads only from a file root owns (Gemini CLI's system
// settings and defaults, wherever a variable moves them): proving it
// needs a root-owned directory chain, which verify never makes on a
// user's machine; the live test TestHooksOff/gemini_root_owned tries
// those, and the claims that rest on them cite it.
var hooksOff = &Scenario{
	Name: "hooks-off", Test: "TestHooksOff/%s", Harnesses: []string{"claude", "codex", "copilot", "gemini", "qwen"},
	Script: gatedScript,
	Play: func(w *World, c *Check) error {
		tb, err := w.table()
		if err != nil {
			return err
		}
		if len(tb.Config.Off) == 0 {
			c.Failf("%s lists no setting that switches its hooks off", tb.Key())
		}
		n := 0
		for _, sw := range tb.Config.Off {
			values := sw.Values
			if sw.Value != nil || sw.Contains != "" {
				values = []any{sw.Value}
			}
			for _, v := range values {
				if sw.Location.Root == "system" && sw.Location.Env == "" {
					w.logf("%s in /%s: not tried, the machine's own file", sw.Key, sw.Location.Path)
					continue
				}
				if sw.Location.RootOwned != nil {
					w.logf("%s in %s: not tried, read only from a file root owns", sw.Key, sw.Location.Env)
					continue
				}
				n++
				sub, err := NewWorld(w.Machine, filepath.Join(w.Root, fmt.Sprintf("off-%d", n)), gatedScript)
				if err != nil {
					return err
				}
				sub.Logf = w.Logf
				err = offSwitch(sub, c, tb, sw, v)
				sub.Close()
				if err != nil {
					return err
				}
			}
		}
		return nil
	},
}

// offSwitch installs the gate in w and sets the switch sw of table tb to v
// where its user would (hooksOff).
func offSwitch(w *World, c *Check, tb *providers.Table, sw providers.Switch, v any) error {
	if err := w.installGate(); err != nil {
		return err
	}
	doctorIn := w.Root
	var file string
	switch sw.Location.Root {
	case "project":
		file, doctorIn = filepath.Join(w.Work, filepath.FromSlash(sw.Location.Path)), w.Work
		// Outside it, doctor reads no project's settings.
		if out, code, err := w.doctorIn(w.Root); err != nil || code != 0 {
			c.Failf("doctor outside the project: exit %d (%v), want 0:\n%s", code, err, out)
		}
		// A harness that reads a project's settings only in a folder its
		// user trusted, and whose table says where it keeps that trust:
		// the scratch project is trusted, as its user would. (Gemini CLI
		// and Qwen Code run headless as the world's headless files set
		// them up.)
		if p := tb.Config.Project; p != nil && p.Trust.Required {
			if _, err := w.TrustProject(); err != nil {
				return err
			}
		}
	case "system":
		file = filepath.Join(w.Root, "system", filepath.Base(sw.Location.Path))
		w.SetEnv(sw.Location.Env, file)
	default:
		var err error
		getenv := func(name string) string {
			for _, e := range w.Env {
				if v, ok := strings.CutPrefix(e, name+"="); ok {
					return v
				}
			}
			return ""
		}
		if file, err = tb.Path(sw.Location, getenv); err != nil {
			return err
		}
	}
	if sw.Contains != "" {
		event, _ := tb.NativeEvent(plan.SubjectToolCall, plan.PhaseBefore)
		cmd, err := w.entryCommand(event)
		if err != nil {
			return err
		}
		v = []any{cmd}
	}
	if err := writeSwitch(w, file, sw.Key, v); err != nil {
		return err
	}
	return hooksOffSession(w, c, doctorIn, sw.Key)
}

// writeSwitch sets key to v in file, a TOML or a JSON file, keeping what
// it holds.
func writeSwitch(w *World, file, key string, v any) error {
	if strings.HasSuffix(file, ".toml") {
		i := strings.LastIndex(key, ".")
		value, err := json.Marshal(v) // a TOML bool, number or basic string
		if err != nil || i < 0 {
			return fmt.Errorf("%s: cannot write %s = %v as TOML (%v)", file, key, v, err)
		}
		b, _ := os.ReadFile(file)
		return w.WriteFile(file, string(b)+fmt.Sprintf("\n[%s]\n%s = %s\n", key[:i], key[i+1:], value))
	}
	m := map[string]any{}
	if b, err := os.ReadFile(file); err == nil {
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("%s: %v", file, err)
		}
	}
	setDotted(m, key, v)
	return w.writeJSON(file, m)
}

// entryCommand returns the command of dalo's entry for event in the
// harness's hook file.
func (w *World) entryCommand(event string) (string, error) {
	s, err := w.hooksFileJSON()
	if err != nil {
		return "", err
	}
	hooks, _ := s["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	for _, g := range groups {
		hs, _ := g.(map[string]any)["hooks"].([]any)
		for _, h := range hs {
			if cmd, _ := h.(map[string]any)["command"].(string); strings.Contains(cmd, "/dispatchers/") && strings.Contains(cmd, " --home ") {
				return cmd, nil
			}
		}
	}
	return "", fmt.Errorf("no dalo entry for %s in %v", event, hooks)
}
