//go:build unix

package live

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
	"dalo/internal/scenario"
	provtables "dalo/providers"
)

// Installed means in force: the routes by which a gate dalo installed could
// be off while dalo said it was installed, each run against the real
// harness. The gate kit holds one required fail_closed gate that denies
// every shell command naming "gated".

const (
	gateKit    = scenario.GateKit
	gateSource = scenario.GateSource
	markGate   = scenario.MarkGate
)

// gateKitFiles is the gate kit's source.
var gateKitFiles = scenario.GateKitFiles

// installGate installs the gate kit in the world, recording the harness's
// trust for dalo's entries where it runs only hooks the user trusted
// (install --trust, with the harness on PATH, as its user runs it).
func (w *world) installGate() string {
	w.t.Helper()
	src := filepath.Join(w.root, "src-"+gateSource)
	writeSource(w.t, src, w.nativeShell(gateKitFiles()))
	w.dalo("source", "add", gateSource, src)
	ref := gateSource + ":" + gateKit
	w.dalo("plugin", "approve", ref, "--provider", w.provider, "--all", "--yes")
	args := []string{"plugin", "install", ref, "--provider", w.provider}
	if tableUnder(w.t, w.provider).Config.Trust.State != nil {
		args = append(args, "--trust")
	}
	out := w.dalo(args...)
	w.dalo("doctor")
	return out
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
	cmd := w.DaloCommand(ctx, dir, nil, args...)
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
// its own s, so a guard naming $s would exit 0), and runs a session whose
// model runs a command the required fail_closed gate guards, on every
// harness with a table: the harness cannot start the dispatcher (the
// shell's exit 127), and the entry's guard turns that into the harness's
// blocking exit status with a reason on stderr. The command must not run.
// The reason reaches the model, except where the table says a failed
// command on the gate's native event denies the call by itself
// (events.<E>.failed_command): such a harness reads no reason from it. On
// a harness that runs only hooks the user trusted (trust.state), the
// session runs as a user runs it: the entries trusted by install --trust,
// no bypass flag. On Claude Code, Codex and Gemini CLI it is the scenario
// "dispatcher-gone".
func TestDispatcherGone(t *testing.T) {
	t.Parallel()
	eachHarness(t, func(t *testing.T, tb *provtables.Table) {
		p := tb.Name
		if scenario.Lookup("dispatcher-gone").For(p) {
			play(t, p, "dispatcher-gone")
			return
		}
		w := newWorld(t, p, fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
		w.untrusted = true // no hook trusted but by install --trust
		// Variables a guard might name, set in the harness's
		// environment: a harness that replaces $name in its settings
		// (Gemini CLI) would rewrite such a guard into another
		// command; this one names none.
		w.Env = append(w.Env, "s=0", "p=0")
		w.installGate()
		s := w.dispatcherGone("NOT in force: its dispatcher")
		if w.exists("gated-ran") {
			w.failf(s, "the dispatcher is gone, and the command the required fail_closed gate guards ran")
		}
		event, _ := tb.NativeEvent("tool_call", "before")
		reaches := !tb.FailedCommandDenies(event)
		if reason := "a required fail_closed hook guards " + event + ", so dalo blocks it"; w.server.Contains(reason) != reaches {
			w.failf(s, "the block's reason reached the model = %v, want %v (failed_command denies = %v)", !reaches, reaches, !reaches)
		}
	})
}

// TestDuplicateKeys proves what each harness with a table reads of a hook
// file holding a key twice, as the table's config.hooks.duplicate_keys
// says, with hand-written hooks that each touch a file when they run:
// "last", the harness keeps the last copy of a key and reads the rest;
// "none", it reads none of the file's hooks, for a key twice anywhere in
// it, even inside one hook entry. Where the harness runs only hooks the
// user trusted (trust.state), the hooks are first trusted as the user's
// review records it, in the same file without the duplicate (the trust
// keys are the hooks' places, the hashes their definitions, the same in
// both), and the hooks of each copy run the same command: a harness that
// read either copy would run it. What the hook file holds besides hooks
// (Gemini CLI's auth) is kept. dalo refuses to edit such a file
// (testdata/script/plugin_install_duplicates.txtar). On Claude Code and
// Gemini CLI it is the scenario "duplicate-keys".
func TestDuplicateKeys(t *testing.T) {
	t.Parallel()
	eachHarness(t, func(t *testing.T, tb *provtables.Table) {
		p := tb.Name
		if scenario.Lookup("duplicate-keys").For(p) {
			play(t, p, "duplicate-keys")
			return
		}
		pre, _ := tb.NativeEvent("tool_call", "before")
		start, _ := tb.NativeEvent("session", "start")
		reads := tb.Config.Hooks.DuplicateKeys.Reads
		trusted := tb.Config.Trust.State != nil
		for _, c := range []struct{ name, doc, once string }{
			// Two copies of "hooks": which is read?
			{"hooks twice",
				`"hooks": {"PRE": [{"matcher": "*", "hooks": [FIRST]}]}, "hooks": {"PRE": [{"matcher": "*", "hooks": [LAST]}]}}`,
				`"hooks": {"PRE": [{"matcher": "*", "hooks": [LAST]}]}}`},
			// A key twice inside the one entry: is the rest read?
			{"matcher twice",
				`"hooks": {"PRE": [{"matcher": "*", "matcher": "*", "hooks": [FIRST]}], "START": [{"hooks": [LAST]}]}}`,
				`"hooks": {"PRE": [{"matcher": "*", "hooks": [FIRST]}], "START": [{"hooks": [LAST]}]}}`},
		} {
			w := newWorld(t, p, fakemodel.Script{fakemodel.Run("echo hi"), fakemodel.Say("Done.")})
			hook := func(name string) string {
				return fmt.Sprintf(`{"type": "command", "command": "touch %s", "timeout": %d}`, filepath.Join(w.out, name), tb.NativeTimeout(10000))
			}
			first, last := "first", "last"
			if trusted {
				first = "last" // one command in both copies, trusted once
			}
			// The file as the user has it, its other members kept.
			file := w.hooksFile()
			head := "{"
			if b, err := os.ReadFile(file); err == nil {
				if inner := strings.TrimSpace(string(b)); len(inner) > 2 {
					head = strings.TrimSuffix(inner, "}") + ", "
				}
			}
			r := strings.NewReplacer("FIRST", hook(first), "LAST", hook(last), "PRE", pre, "START", start)
			if trusted {
				w.writeFile(file, head+r.Replace(c.once))
				w.codexTrust()     // the user reviews the file without the duplicate
				w.untrusted = true // and nobody reviews it again
				// Without the duplicate, the trusted hooks run.
				if s := w.run("Run the command you are given."); !fileExists(filepath.Join(w.out, "last")) {
					w.failf(s, "%s, %s: without the duplicate, the trusted hook did not run", p, c.name)
				}
				os.Remove(filepath.Join(w.out, "last"))
			}
			w.writeFile(file, head+r.Replace(c.doc))
			s := w.run("Run the command you are given.")
			ranFirst, ranLast := fileExists(filepath.Join(w.out, "first")), fileExists(filepath.Join(w.out, "last"))
			t.Logf("%s, %s: first copy ran = %v, last copy ran = %v", p, c.name, ranFirst, ranLast)
			switch {
			case reads == provtables.ReadsLast && c.name == "hooks twice" && (ranFirst || !ranLast):
				w.failf(s, "%s, %s: first ran = %v, last ran = %v; want the last copy only", p, c.name, ranFirst, ranLast)
			case reads == provtables.ReadsLast && c.name == "matcher twice" && (!ranFirst || !ranLast):
				w.failf(s, "%s, %s: first ran = %v, last ran = %v; want both (the last matcher kept, the rest read)", p, c.name, ranFirst, ranLast)
			case reads == provtables.ReadsNone && (ranFirst || ranLast):
				w.failf(s, "%s, %s: a hook ran (first %v, last %v); want no hook of the file, though each was trusted", p, c.name, ranFirst, ranLast)
			}
		}
	})
}

// dispatcherGone deletes the dispatchers of the world's store, checks
// that doctor exits 1 saying each of says, and runs a session whose model
// runs the command it is given.
func (w *world) dispatcherGone(says ...string) session {
	w.t.Helper()
	if err := os.RemoveAll(filepath.Join(w.store, "dispatchers")); err != nil {
		w.t.Fatal(err)
	}
	out, code := w.daloExit("doctor")
	for _, say := range says {
		if code != 1 || !strings.Contains(out, say) {
			w.t.Errorf("doctor with the dispatcher gone: exit %d, want 1 saying %q:\n%s", code, say, out)
		}
	}
	s, err := w.runExit("Run the command you are given.")
	w.t.Logf("%s exit: %v", w.provider, err)
	return s
}

// eachHarness runs f in a parallel subtest named for each harness with a
// table, given the table under test; the test is skipped whole when this
// run proves none of them.
func eachHarness(t *testing.T, f func(t *testing.T, tb *provtables.Table)) {
	t.Helper()
	ts, err := provtables.Load()
	if err != nil {
		t.Fatal(err)
	}
	needs(t, harnesses(ts)...) // skip once, not per harness
	for _, p := range harnesses(ts) {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			f(t, tableUnder(t, p))
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
// and that the gate is not in force. For every harness with a table, the
// subtest named for it sets each switch of the table's config.off, each
// value of it, in the file it names: the user's (config_home, home), a
// project's own settings, which override the user's (doctor run in the
// project reads them and says the gate is off there; run elsewhere, it
// reads no project's), and the machine's where a variable moves that file;
// the machine's own file is never written. Where the scenario hooks-off
// plays a harness, that is it; a file the harness reads only when root
// owns it is not the scenario's (gemini_root_owned: only when this run is
// root's). A list of commands
// (contains) names dalo's entry of the gate. The other cases are what
// else turns the gate off, or does not: values a harness's settings schema
// rejects (the table's drop), and a "disabled" list inside Gemini CLI's
// hooks object, named by the docs of versions before 0.61.0, which 0.61.0
// skips as an event name and honors nowhere: the gate stays in force, and
// doctor says so.
func TestHooksOff(t *testing.T) {
	t.Parallel()
	eachHarness(t, func(t *testing.T, tb *provtables.Table) {
		if s := scenario.Lookup("hooks-off"); s.For(tb.Name) {
			play(t, tb.Name, "hooks-off")
			return
		}
		if len(tb.Config.Off) == 0 {
			t.Fatalf("%s lists no setting that switches its hooks off", tb.Key())
		}
		for i, sw := range tb.Config.Off {
			values := sw.Values
			if sw.Value != nil || sw.Contains != "" {
				values = []any{sw.Value}
			}
			for _, v := range values {
				label := fmt.Sprint(v)
				if sw.Contains != "" {
					label = "contains_" + sw.Contains
				}
				t.Run(fmt.Sprintf("%d_%s_%s_%s", i, sw.Location.Root, sw.Key, label), func(t *testing.T) {
					t.Parallel()
					testSwitch(t, tb, sw, v)
				})
			}
		}
	})
	// Settings the harness rejects, beside dalo's entries: the scenarios
	// hooks-off-<name>.
	for _, s := range scenario.All {
		name, ok := strings.CutPrefix(s.Name, "hooks-off-")
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			play(t, s.Harnesses[0], s.Name)
		})
	}
	// Gemini CLI's switches read only from a file root owns: not the
	// scenario's, which verify runs on a user's machine and which never
	// makes a root-owned directory chain there.
	t.Run("gemini_root_owned", func(t *testing.T) {
		t.Parallel()
		needs(t, "gemini")
		tb := tableUnder(t, "gemini")
		n := 0
		for i, sw := range tb.Config.Off {
			if sw.Location.RootOwned == nil {
				continue
			}
			for _, v := range sw.Values {
				n++
				t.Run(fmt.Sprintf("%d_%s_%v", i, sw.Key, v), func(t *testing.T) {
					t.Parallel()
					testSwitch(t, tb, sw, v)
				})
			}
		}
		if n == 0 {
			t.Fatalf("%s lists no switch read only from a file root owns", tb.Key())
		}
	})
	// GitHub Copilot CLI's settings of a type it rejects in the user's
	// settings.json (its table's drop): it runs none of that file's hooks,
	// dalo's entries included, and doctor says so.
	t.Run("copilot_disable_type", func(t *testing.T) {
		needs(t, "copilot")
		t.Parallel()
		tb := tableUnder(t, "copilot")
		n := 0
		for _, d := range tb.Config.Drop {
			if d.Location.Root == "project" {
				continue // TestTeamSync/copilot_hooks_off
			}
			for _, c := range d.Checks {
				v, ok := otherType(c.Types)
				if !ok {
					t.Fatalf("drop check %s: no value of a type it rejects", c.Path)
				}
				n++
				w := newWorld(t, "copilot", fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
				w.installGate()
				settings := w.settings()
				setDotted(settings, c.Path, v)
				w.writeJSON(w.hooksFile(), settings)
				out, code := w.daloExit("doctor")
				s := w.run("Run the command you are given.")
				w.hooksOff(s, out, code, c.Path)
			}
		}
		if n == 0 {
			t.Fatalf("%s drops no user settings file", tb.Key())
		}
	})
	// A setting that switches nothing off: Gemini CLI's hooksConfig.disabled
	// naming dalo's entry under another event than the gate's.
	t.Run("gemini_hooks_disabled", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, "gemini", fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
		w.installGate()
		settings := w.settings()
		settings["hooks"].(map[string]any)["disabled"] = []any{entryCommand(w, settings, "BeforeTool")}
		w.writeJSON(w.hooksFile(), settings)
		out, code := w.daloExit("doctor")
		s := w.run("Run the command you are given.")
		if says := "in force   gemini " + gateSource + ":" + gateKit + "/gate on BeforeTool: required"; code != 0 || !strings.Contains(out, says) {
			t.Errorf("doctor: exit %d, want 0 saying %q:\n%s", code, says, out)
		}
		if w.exists("gated-ran") || !w.server.Contains(markGate) {
			w.failf(s, "the gated command ran = %v, the gate's reason reached the model = %v; want false, true (the setting switches nothing off)", w.exists("gated-ran"), w.server.Contains(markGate))
		}
	})
}

// hooksOff fails unless doctor (its output and exit status) said the gate
// is not in force, saying says, and the session s ran the gated command
// without the gate.
func (w *world) hooksOff(s session, out string, code int, says string) {
	w.t.Helper()
	if code != 1 || !strings.Contains(out, says) || !strings.Contains(out, "NOT in force") {
		w.t.Errorf("doctor with the hooks off: exit %d, want 1 saying %q:\n%s", code, says, out)
	}
	if !w.exists("gated-ran") || w.server.Contains(markGate) {
		w.failf(s, "hooks off: the gated command ran = %v, the gate's reason reached the model = %v; want true, false (the harness runs no dalo entry)", w.exists("gated-ran"), w.server.Contains(markGate))
	}
}

// testSwitch installs the gate in a world of table tb's harness and sets
// the switch sw to v where its user would: the harness runs none of dalo's
// entries, and doctor, run where it reads the file, names the key and says
// the gate is not in force.
func testSwitch(t *testing.T, tb *provtables.Table, sw provtables.Switch, v any) {
	w := newWorld(t, tb.Name, fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
	w.installGate()
	doctorIn := w.root
	var file string
	switch sw.Location.Root {
	case "project":
		file, doctorIn = filepath.Join(w.work, filepath.FromSlash(sw.Location.Path)), w.work
		// Outside it, doctor reads no project's settings.
		if out, code := w.daloExit("doctor"); code != 0 {
			t.Errorf("doctor outside the project: exit %d, want 0:\n%s", code, out)
		}
		// A harness that reads a project's settings only in a folder its
		// user trusted: the user trusted this one.
		if p := tb.Config.Project; p != nil && p.Trust.Required {
			w.trustProject()
		}
	case "system":
		if sw.Location.Env == "" {
			t.Skipf("the machine's own /%s, which no variable moves: a test never writes it", sw.Location.Path)
		}
		dir := t.TempDir()
		if sw.Location.RootOwned != nil {
			// Read only from a file root owns, in directories no group
			// or other may write, as /etc is: not the temporary one.
			if os.Geteuid() != 0 {
				t.Skipf("%s reads /%s only from a file root owns; this run is not root's", tb.Harness, sw.Location.Path)
			}
			home, err := os.UserHomeDir()
			if err != nil {
				t.Fatal(err)
			}
			if dir, err = os.MkdirTemp(home, "dalo-live-system-"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
		}
		file = filepath.Join(dir, filepath.Base(sw.Location.Path))
		w.SetEnv(sw.Location.Env, file)
	default:
		var err error
		if file, err = tb.Path(sw.Location, w.getenv); err != nil {
			t.Fatal(err)
		}
	}
	if sw.Contains != "" {
		event, _ := tb.NativeEvent("tool_call", "before")
		v = []any{entryCommand(w, w.settings(), event)}
	}
	if strings.HasSuffix(file, ".toml") {
		i := strings.LastIndex(sw.Key, ".")
		value, err := json.Marshal(v) // a TOML bool, number or basic string
		if err != nil || i < 0 {
			t.Fatalf("%s: cannot write %s = %v as TOML (%v)", file, sw.Key, v, err)
		}
		w.appendFile(file, fmt.Sprintf("\n[%s]\n%s = %s\n", sw.Key[:i], sw.Key[i+1:], value))
	} else {
		m := map[string]any{}
		if b, err := os.ReadFile(file); err == nil {
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
		}
		setDotted(m, sw.Key, v)
		w.writeJSON(file, m)
	}
	out, code := w.daloExitIn(doctorIn, "doctor")
	s := w.run("Run the command you are given.")
	w.hooksOff(s, out, code, sw.Key)
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

// getenv returns the value of name in the world's environment.
func (w *world) getenv(name string) string {
	for _, e := range w.Env {
		if v, ok := strings.CutPrefix(e, name+"="); ok {
			return v
		}
	}
	return ""
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
