package scenario

import (
	"os"
	"path/filepath"
	"strings"

	"dalo/internal/fakemodel"
)

// codexTrust runs Codex as a user runs it (codex exec without
// --dangerously-bypass-hook-trust). Installed without --trust, dalo's
// entries are not trusted: install says so, doctor exits 1 saying the gate
// will not run, and in the session no dalo handler runs and the command
// the gate would deny runs. Installed again with --trust, which records
// Codex's own hash of each of dalo's entries in its config.toml, doctor
// says the gate is in force, and in the next session it denies the
// command.
var codexTrust = &Scenario{
	Name: "codex-trust", Test: "TestCodexTrust", Harnesses: []string{"codex"},
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{fakemodel.Run("touch denied"), fakemodel.Say("Done.")}
	},
	Play: func(w *World, c *Check) error {
		installed, err := w.installUntrusted(SrcID, PkgName, SourceFiles)
		if err != nil {
			return err
		}
		if !strings.Contains(installed, "runs only hooks you trusted") || !strings.Contains(installed, "--trust") {
			c.Failf("install on codex did not say Codex will not run the entries until they are trusted:\n%s", installed)
		}
		out, code, err := w.doctorIn(w.Root)
		if err != nil {
			return err
		}
		if code != 1 || !strings.Contains(out, "has not trusted dalo's PreToolUse entry") || !strings.Contains(out, "guard on PreToolUse: required, NOT in force") {
			c.Failf("doctor before --trust: exit %d, want 1 saying the gate will not run:\n%s", code, out)
		}
		s, err := w.Run("Run the commands you are given.")
		c.Session = s
		if err != nil {
			c.Failf("untrusted entries: the session failed: %v", err)
			return nil
		}
		if w.Output("start.argv") != "" || w.Output("stop.argv") != "" || w.Server.Contains(MarkPromptContext) {
			c.Failf("untrusted entries: a dalo handler ran")
		}
		if !w.Exists("denied") {
			c.Failf("untrusted entries: the command the gate would deny did not run, so something gated it")
		}

		// The user records Codex's trust for dalo's entries.
		if err := os.Remove(filepath.Join(w.Work, "denied")); err != nil && !os.IsNotExist(err) {
			return err
		}
		if _, err := w.Dalo("plugin", "install", SrcID+":"+PkgName, "--provider", w.provider(), "--trust"); err != nil {
			return err
		}
		if out, code, err := w.doctorIn(w.Root); err != nil {
			return err
		} else if code != 0 || !strings.Contains(out, "is trusted by Codex CLI") {
			c.Failf("doctor after --trust: exit %d, want 0 saying Codex trusts the entries:\n%s", code, out)
		}
		s, err = w.Run("Run the commands you are given.")
		c.Session = s
		if err != nil {
			c.Failf("trusted entries: the session failed: %v", err)
			return nil
		}
		if w.Exists("denied") {
			c.Failf("trusted entries: the command the gate denies ran")
		}
		if !w.Server.Contains(MarkDenyReason) {
			c.Failf("trusted entries: the gate's reason %q did not reach the model", MarkDenyReason)
		}
		return nil
	},
}

// provider is what install is given as --provider: the machine's table
// (name@version), else the bare name, as InstallSource gives it.
func (w *World) provider() string {
	if w.Table != "" {
		return w.Table
	}
	return w.Harness
}

// installUntrusted is InstallSource as a user who does not record the
// harness's trust for dalo's entries installs: without --trust.
func (w *World) installUntrusted(id, pkg string, files map[string]string) (string, error) {
	src := filepath.Join(w.Root, "src-"+id)
	if err := WriteSource(src, w.NativeShell(files)); err != nil {
		return "", err
	}
	ref := id + ":" + pkg
	for _, args := range [][]string{
		{"plugin", "validate", "--provider", w.provider(), src},
		{"source", "add", id, src},
		{"plugin", "approve", ref, "--provider", w.provider(), "--all", "--yes"},
	} {
		if _, err := w.Dalo(args...); err != nil {
			return "", err
		}
	}
	return w.Dalo("plugin", "install", ref, "--provider", w.provider())
}
