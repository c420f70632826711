//go:build unix

package live

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
	provtables "dalo/providers"
)

// Installed means in force: the routes by which a gate dalo installed could
// be off while dalo said it was installed, each run against the real
// harness. The gate kit holds one required fail_closed gate that denies
// every shell command naming "gated".

const (
	gateKit    = "gate-kit"
	gateSource = "gates"
	markGate   = "LIVE-GATE-REASON-5e1a"
)

// gateKitFiles is the gate kit's source.
func gateKitFiles() map[string]string {
	return kit{name: gateKit, description: "A required gate that denies gated commands.", hooks: []kitHook{{
		id: "gate", subject: "tool_call", phase: "before", effect: "gate", policy: "fail_closed",
		tools:   []string{"Bash"},
		handler: "#!/bin/sh\ncase \"$(cat)\" in\n*gated*) printf '{\"kind\":\"deny\",\"reason\":\"" + markGate + "\"}' ;;\n*) printf '{\"kind\":\"abstain\"}' ;;\nesac\n",
	}}}.files()
}

// installGate installs the gate kit in the world, recording Codex's trust
// for dalo's entries (install --trust, with the harness on PATH, as a user
// who has Codex installed runs it).
func (w *world) installGate() string {
	w.t.Helper()
	w.pathHarness()
	src := filepath.Join(w.root, "src-"+gateSource)
	writeSource(w.t, src, w.nativeShell(gateKitFiles()))
	w.dalo("source", "add", gateSource, src)
	ref := gateSource + ":" + gateKit
	w.dalo("plugin", "approve", ref, "--provider", w.provider, "--all", "--yes")
	args := []string{"plugin", "install", ref, "--provider", w.provider}
	if w.provider == "codex" {
		args = append(args, "--trust")
	}
	out := w.dalo(args...)
	w.dalo("doctor")
	return out
}

// pathHarness puts the directory of the world's harness first on its PATH,
// where a user has it: dalo finds the harness there.
func (w *world) pathHarness() {
	w.t.Helper()
	dir := filepath.Dir(harness(w.t, w.provider))
	for i, e := range w.env {
		if p, ok := strings.CutPrefix(e, "PATH="); ok && !strings.HasPrefix(p, dir+":") {
			w.env[i] = "PATH=" + dir + ":" + p
		}
	}
}

// daloExit runs the dalo binary in the world and returns its output and
// exit status, whatever it is.
func (w *world) daloExit(args ...string) (string, int) {
	w.t.Helper()
	return w.daloExitIn(w.root, args...)
}

// daloExitIn is daloExit with dir as the current directory.
func (w *world) daloExitIn(dir string, args ...string) (string, int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), daloTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, daloBin, args...)
	cmd.Dir = dir
	cmd.Env = w.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	}
	if err != nil {
		w.t.Fatalf("dalo %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), 0
}

// TestDispatcherGone deletes the dispatcher dalo's entries call, as a
// user who removed or moved it would, with variables named s and p set in
// the harness's environment (Gemini CLI replaces $s in its settings by
// its own s, so a guard naming $s would exit 0), and runs a session whose model runs
// a command the required fail_closed gate guards: the harness cannot start
// the dispatcher (the shell's exit 127, which fails open on both
// harnesses), and the entry's guard turns that into the harness's blocking
// exit status with a reason on stderr. The command must not run, and the
// reason reaches the model. On Codex the session runs as a user runs it:
// the entries trusted by install --trust, no bypass flag.
func TestDispatcherGone(t *testing.T) {
	t.Parallel()
	needs(t, providers...)
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, p, fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
			w.untrusted = true // no hook trusted but by install --trust
			// Variables a guard might name, set in the harness's
			// environment: a harness that replaces $name in its settings
			// (Gemini CLI) would rewrite such a guard into another
			// command; this one names none.
			w.env = append(w.env, "s=0", "p=0")
			w.installGate()
			if err := os.RemoveAll(filepath.Join(w.store, "dispatchers")); err != nil {
				t.Fatal(err)
			}
			out, code := w.daloExit("doctor")
			if code != 1 || !strings.Contains(out, "NOT in force: its dispatcher") {
				t.Errorf("doctor with the dispatcher gone: exit %d, want 1 saying the gate is not in force:\n%s", code, out)
			}
			s, err := w.runExit("Run the command you are given.")
			t.Logf("%s exit: %v", p, err)
			if w.exists("gated-ran") {
				w.failf(s, "the dispatcher is gone, and the command the required fail_closed gate guards ran")
			}
			event := map[string]string{"claude": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool"}[p]
			if !w.server.Contains("a required fail_closed hook guards " + event + ", so dalo blocks it") {
				w.failf(s, "the block's reason did not reach the model")
			}
		})
	}
}

// TestDuplicateKeys proves what each harness reads of a hook file holding a
// key twice, with hand-written hooks that each touch a file when they run.
// Claude Code and Gemini CLI keep the last copy of a key; Codex reads none of the file's
// hooks, for a key twice anywhere in it, even inside one hook entry. On
// Codex the hooks are first trusted as the user's review records it, in
// the same file without the duplicate (the trust keys are the hooks'
// places, the hashes their definitions, the same in both), and the hooks
// of each copy run the same command: a Codex that read either copy would
// run it. dalo refuses to edit such a file
// (testdata/script/plugin_install_duplicates.txtar).
func TestDuplicateKeys(t *testing.T) {
	t.Parallel()
	needs(t, providers...)
	hook := func(w *world, name string) string {
		timeout := "10"
		if w.provider == "gemini" {
			timeout = "10000" // milliseconds
		}
		return `{"type": "command", "command": "touch ` + filepath.Join(w.out, name) + `", "timeout": ` + timeout + `}`
	}
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			for _, c := range []struct{ name, doc, once string }{
				// Two copies of "hooks": which is read?
				{"hooks twice",
					`{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [FIRST]}]}, "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [LAST]}]}}`,
					`{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [LAST]}]}}`},
				// A key twice inside the one entry: is the rest read?
				{"matcher twice",
					`{"hooks": {"PreToolUse": [{"matcher": "*", "matcher": "*", "hooks": [FIRST]}], "SessionStart": [{"hooks": [LAST]}]}}`,
					`{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [FIRST]}], "SessionStart": [{"hooks": [LAST]}]}}`},
			} {
				w := newWorld(t, p, fakemodel.Script{fakemodel.Run("echo hi"), fakemodel.Say("Done.")})
				first, last := "first", "last"
				if p == "codex" {
					first = "last" // one command in both copies, trusted once
				}
				r := strings.NewReplacer("FIRST", hook(w, first), "LAST", hook(w, last))
				if p == "gemini" {
					// Gemini CLI's names of the events, and its user's auth
					// in the same file.
					r = strings.NewReplacer("FIRST", hook(w, first), "LAST", hook(w, last),
						"PreToolUse", "BeforeTool", `{"hooks"`, `{"security": {"auth": {"selectedType": "gemini-api-key"}}, "hooks"`)
				}
				file := w.hooksFile()
				if p == "codex" {
					w.writeFile(file, r.Replace(c.once))
					w.codexTrust()     // the user reviews the file without the duplicate
					w.untrusted = true // and nobody reviews it again
					// Without the duplicate, the trusted hooks run.
					if s := w.run("Run the command you are given."); !fileExists(filepath.Join(w.out, "last")) {
						w.failf(s, "codex, %s: without the duplicate, the trusted hook did not run", c.name)
					}
					os.Remove(filepath.Join(w.out, "last"))
				}
				w.writeFile(file, r.Replace(c.doc))
				s := w.run("Run the command you are given.")
				ranFirst, ranLast := fileExists(filepath.Join(w.out, "first")), fileExists(filepath.Join(w.out, "last"))
				t.Logf("%s, %s: first copy ran = %v, last copy ran = %v", p, c.name, ranFirst, ranLast)
				switch {
				case p != "codex" && c.name == "hooks twice" && (ranFirst || !ranLast):
					w.failf(s, "%s, %s: first ran = %v, last ran = %v; want the last copy only", p, c.name, ranFirst, ranLast)
				case p == "gemini" && c.name == "matcher twice" && (!ranFirst || !ranLast):
					w.failf(s, "gemini, %s: first ran = %v, last ran = %v; want both (the last matcher kept, the rest read)", c.name, ranFirst, ranLast)
				case p == "codex" && (ranFirst || ranLast):
					w.failf(s, "codex, %s: a hook ran (first %v, last %v); want no hook of the file, though each was trusted", c.name, ranFirst, ranLast)
				}
			}
		})
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// TestHooksOff installs the gate and then sets, as its user would, a
// setting of the harness that switches hooks off: the harness runs none of
// dalo's entries, so the gated command runs, and doctor says which setting
// and that the gate is not in force. Claude Code's disableAllHooks; Gemini
// CLI's hooksConfig.enabled false, and hooksConfig.disabled naming dalo's
// BeforeTool command (its list of hooks not to run, by command). And one
// that does not: a "disabled" list inside Gemini CLI's hooks object, named
// by the docs of versions before 0.61.0, which 0.61.0 skips as an event
// name and honors nowhere: the gate stays in force, and doctor says so.
// And a project's own settings, which override the user's (Claude Code's
// .claude/settings.json and settings.local.json, Gemini CLI's
// .gemini/settings.json): doctor run in the project reads them and says
// the gate is off there; run elsewhere, it reads no project's.
func TestHooksOff(t *testing.T) {
	t.Parallel()
	needs(t, "claude", "codex", "gemini")
	// userHook adds a hook of the user's own to the settings s, beside
	// dalo's entries, under event.
	userHook := func(s map[string]any, event string, group map[string]any) {
		hooks := s["hooks"].(map[string]any)
		list, _ := hooks[event].([]any)
		hooks[event] = append(list, group)
	}
	for _, c := range []struct {
		name, provider string
		// set returns the settings with the switch on.
		set func(w *world, settings map[string]any)
		// edit, when set, is what the user does instead of set.
		edit func(w *world)
		says string
		// inForce: the setting switches nothing off.
		inForce bool
		// project, when set, is the project's own settings file the
		// setting goes in (set is given an empty map), and doctor runs in
		// the project.
		project string
	}{
		{"claude", "claude", func(w *world, s map[string]any) { s["disableAllHooks"] = true }, nil, "sets disableAllHooks to true", false, ""},
		{"gemini_enabled", "gemini", func(w *world, s map[string]any) {
			s["hooksConfig"] = map[string]any{"enabled": false}
		}, nil, "sets hooksConfig.enabled to false", false, ""},
		{"gemini_disabled", "gemini", func(w *world, s map[string]any) {
			s["hooksConfig"] = map[string]any{"disabled": []any{entryCommand(w, s, "BeforeTool")}}
		}, nil, "lists dalo's BeforeTool entry in hooksConfig.disabled", false, ""},
		{"gemini_hooks_disabled", "gemini", func(w *world, s map[string]any) {
			s["hooks"].(map[string]any)["disabled"] = []any{entryCommand(w, s, "BeforeTool")}
		}, nil, "in force   gemini " + gateSource + ":" + gateKit + "/gate on BeforeTool: required", true, ""},
		{"gemini_project", "gemini", func(w *world, s map[string]any) {
			s["hooksConfig"] = map[string]any{"enabled": false}
		}, nil, "in this project, ", false, ".gemini/settings.json"},
		{"gemini_project_disabled", "gemini", func(w *world, s map[string]any) {
			s["hooksConfig"] = map[string]any{"disabled": []any{entryCommand(w, w.settings(), "BeforeTool")}}
		}, nil, "in this project, ", false, ".gemini/settings.json"},
		{"claude_project", "claude", func(w *world, s map[string]any) { s["disableAllHooks"] = true }, nil, "in this project, ", false, ".claude/settings.json"},
		{"claude_project_local", "claude", func(w *world, s map[string]any) { s["disableAllHooks"] = true }, nil, "in this project, ", false, ".claude/settings.local.json"},
		// Values Claude Code's settings schema rejects: it ignores the
		// whole file, dalo's entries with it.
		{"claude_model", "claude", func(w *world, s map[string]any) { s["model"] = 5 }, nil, "model is 5, where Claude Code accepts only string: Claude Code ignores the whole file", false, ""},
		{"claude_permissions", "claude", func(w *world, s map[string]any) { s["permissions"] = "x" }, nil, `permissions is "x", where Claude Code accepts only object`, false, ""},
		{"claude_disable_number", "claude", func(w *world, s map[string]any) { s["disableAllHooks"] = 1 }, nil, "disableAllHooks is 1, where Claude Code accepts only boolean", false, ""},
		{"claude_disable_string", "claude", func(w *world, s map[string]any) { s["disableAllHooks"] = "false" }, nil, `disableAllHooks is "false", where Claude Code accepts only boolean`, false, ""},
		{"claude_hook_type", "claude", func(w *world, s map[string]any) {
			userHook(s, "PreToolUse", map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "nope", "command": "true"}}})
		}, nil, `hooks.PreToolUse[1].hooks[0].type is "nope", where Claude Code accepts only "command", "prompt", "agent", "http" or "mcp_tool"`, false, ""},
		{"claude_hook_matcher", "claude", func(w *world, s map[string]any) {
			userHook(s, "PreToolUse", map[string]any{"matcher": 5, "hooks": []any{map[string]any{"type": "command", "command": "true"}}})
		}, nil, "hooks.PreToolUse[1].matcher is 5, where Claude Code accepts only string", false, ""},
		// A hook of the user's Claude Code rejects, under another event:
		// as the table's scope of that check says, the whole file is
		// dropped (2.1.233), or only that event's hooks and dalo's gate
		// runs (2.1.332); inForce is the table's answer.
		{"claude_hook_other_event", "claude", func(w *world, s map[string]any) {
			userHook(s, "PostToolUse", map[string]any{"matcher": 5, "hooks": []any{map[string]any{"type": "command", "command": "true"}}})
		}, nil, "hooks.PostToolUse[0].matcher is 5, where Claude Code accepts only string", false, ""},
		// Codex's feature switches in config.toml, and a malformed entry
		// of the user's in hooks.json.
		{"codex_features_codex_hooks", "codex", nil, func(w *world) {
			w.appendFile(filepath.Join(w.configHome(), "config.toml"), "\n[features]\ncodex_hooks = false\n")
		},
			"config.toml sets features.codex_hooks to false: Codex runs no hook at all", false, ""},
		{"codex_features_hooks", "codex", nil, func(w *world) {
			w.appendFile(filepath.Join(w.configHome(), "config.toml"), "\n[features]\nhooks = false\n")
		},
			"config.toml sets features.hooks to false: Codex runs no hook at all", false, ""},
		{"codex_hook_timeout", "codex", func(w *world, s map[string]any) {
			userHook(s, "SessionStart", map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "true", "timeout": "x"}}})
		}, nil, `hooks.SessionStart[0].hooks[0].timeout is "x", where Codex CLI accepts only number: Codex reads none of the file's hooks`, false, ""},
		{"codex_event_not_list", "codex", func(w *world, s map[string]any) { s["hooks"].(map[string]any)["PostToolUse"] = "bad" }, nil,
			`hooks.PostToolUse is "bad", where Codex CLI accepts only array: Codex reads none of the file's hooks`, false, ""},
		// Gemini CLI reads hooksConfig.enabled by its truthiness, and the
		// machine's defaults, which the user's settings would override.
		{"gemini_enabled_zero", "gemini", func(w *world, s map[string]any) { s["hooksConfig"] = map[string]any{"enabled": 0} }, nil, "sets hooksConfig.enabled to 0", false, ""},
		{"gemini_enabled_empty", "gemini", func(w *world, s map[string]any) { s["hooksConfig"] = map[string]any{"enabled": ""} }, nil, `sets hooksConfig.enabled to ""`, false, ""},
		{"gemini_system_defaults", "gemini", nil, func(w *world) {
			// Gemini CLI reads the file only if it and every directory
			// above it are root's and writable by no group or other, as
			// /etc/gemini-cli is: not under the temporary directory.
			if os.Geteuid() != 0 {
				w.t.Skip("Gemini CLI reads system defaults only from a file root owns; this run is not root's")
			}
			home, err := os.UserHomeDir()
			if err != nil {
				w.t.Fatal(err)
			}
			dir, err := os.MkdirTemp(home, "dalo-live-defaults-")
			if err != nil {
				w.t.Fatal(err)
			}
			w.t.Cleanup(func() { os.RemoveAll(dir) })
			file := filepath.Join(dir, "system-defaults.json")
			w.writeFile(file, `{"hooksConfig": {"enabled": false}}`+"\n")
			w.env = append(w.env, "GEMINI_CLI_SYSTEM_DEFAULTS_PATH="+file)
		}, "system-defaults.json sets hooksConfig.enabled to false: the machine's default settings switch every hook off", false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, c.provider, fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
			w.installGate()
			if c.edit != nil {
				c.edit(w)
				out, code := w.daloExit("doctor")
				s := w.run("Run the command you are given.")
				if code != 1 || !strings.Contains(out, c.says) || !strings.Contains(out, "NOT in force") {
					t.Errorf("doctor with the hooks off: exit %d, want 1 saying %q:\n%s", code, c.says, out)
				}
				if !w.exists("gated-ran") || w.server.Contains(markGate) {
					w.failf(s, "hooks off: the gated command ran = %v, the gate's reason reached the model = %v; want true, false (the harness runs no dalo entry)", w.exists("gated-ran"), w.server.Contains(markGate))
				}
				return
			}
			file, settings := w.hooksFile(), w.settings()
			doctorIn := w.root
			if c.project != "" {
				file, settings, doctorIn = filepath.Join(w.work, filepath.FromSlash(c.project)), map[string]any{}, w.work
				// Outside it, doctor reads no project's settings.
				if out, code := w.daloExit("doctor"); code != 0 {
					t.Errorf("doctor outside the project: exit %d, want 0:\n%s", code, out)
				}
			}
			c.set(w, settings)
			w.writeJSON(file, settings)
			out, code := w.daloExitIn(doctorIn, "doctor")
			s := w.run("Run the command you are given.")
			inForce := c.inForce
			if c.name == "claude_hook_other_event" {
				inForce = dropScope(t, w.key, "hooks.*.*.matcher") == provtables.DropsEvent
			}
			if inForce {
				if code != 0 || !strings.Contains(out, c.says) {
					t.Errorf("doctor: exit %d, want 0 saying %q:\n%s", code, c.says, out)
				}
				if w.exists("gated-ran") || !w.server.Contains(markGate) {
					w.failf(s, "the gated command ran = %v, the gate's reason reached the model = %v; want false, true (the setting switches nothing off)", w.exists("gated-ran"), w.server.Contains(markGate))
				}
				return
			}
			if code != 1 || !strings.Contains(out, c.says) || !strings.Contains(out, "NOT in force") {
				t.Errorf("doctor with the hooks off: exit %d, want 1 saying %q:\n%s", code, c.says, out)
			}
			if !w.exists("gated-ran") || w.server.Contains(markGate) {
				w.failf(s, "hooks off: the gated command ran = %v, the gate's reason reached the model = %v; want true, false (the harness runs no dalo entry)", w.exists("gated-ran"), w.server.Contains(markGate))
			}
		})
	}
}

// settings returns the harness's hook file, decoded.
func (w *world) settings() map[string]any {
	w.t.Helper()
	var m map[string]any
	b, err := os.ReadFile(w.hooksFile())
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return m
}

// writeJSON writes v to file as indented JSON.
func (w *world) writeJSON(file string, v any) {
	w.t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		w.t.Fatal(err)
	}
	w.writeFile(file, string(b)+"\n")
}

// entryCommand returns the command of dalo's entry for event in the
// harness settings s, failing the test without one.
func entryCommand(w *world, s map[string]any, event string) string {
	w.t.Helper()
	hooks, _ := s["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	for _, g := range groups {
		hs, _ := g.(map[string]any)["hooks"].([]any)
		for _, h := range hs {
			if cmd, _ := h.(map[string]any)["command"].(string); isDaloEntry(cmd) {
				return cmd
			}
		}
	}
	w.t.Fatalf("no dalo entry for %s in %v", event, hooks)
	return ""
}

// appendFile appends text to the file name.
func (w *world) appendFile(name, text string) {
	w.t.Helper()
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		w.t.Fatal(err)
	}
}

// TestCommentBreaks writes, after install, a comment holding a U+2028 (and
// in a second world a no-break space) into Gemini CLI's settings: Gemini
// CLI strips comments but keeps those characters, then cannot parse the
// file and does not start, so no command runs; doctor says so, naming
// the file, line and column.
func TestCommentBreaks(t *testing.T) {
	t.Parallel()
	needs(t, "gemini")
	t.Run("gemini", func(t *testing.T) {
		t.Parallel()
		for _, ch := range []string{"\u2028", "\u00a0"} {
			w := newWorld(t, "gemini", fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
			w.installGate()
			b, err := os.ReadFile(w.hooksFile())
			if err != nil {
				t.Fatal(err)
			}
			w.writeFile(w.hooksFile(), strings.Replace(string(b), "{", "{\n  // a note"+ch+"here\n", 1))
			out, code := w.daloExit("doctor")
			if code != 1 || !strings.Contains(out, "settings.json:2:12: a comment holds") || !strings.Contains(out, "NOT in force") {
				t.Errorf("doctor with %U in a comment: exit %d, want 1 naming settings.json:2:12:\n%s", []rune(ch)[0], code, out)
			}
			s, err := w.runExit("Run the command you are given.")
			if err == nil || w.exists("gated-ran") {
				w.failf(s, "%U in a comment: the harness exit = %v, the gated command ran = %v; want a failure, and no command run", []rune(ch)[0], err, w.exists("gated-ran"))
			}
		}
	})
}

// dropScope is the scope of the table key's drop that checks path.
func dropScope(t *testing.T, key, path string) string {
	t.Helper()
	ts, err := provtables.Load()
	if err != nil {
		t.Fatal(err)
	}
	tb, err := ts.Resolve(key)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range tb.Config.Drop {
		for _, c := range d.Checks {
			if c.Path == path {
				return d.Scope
			}
		}
	}
	t.Fatalf("%s: no drop checks %s", key, path)
	return ""
}
