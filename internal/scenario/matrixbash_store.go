package scenario

import (
	"os"
	"path/filepath"
	"strings"

	"dalo/plan"
)

// The matrix scenarios of GitHub Copilot CLI and Qwen Code that change the
// user's machine between install and the session: an instruction enabled,
// the dispatcher deleted.

func init() {
	for _, h := range []string{"copilot", "qwen"} {
		All = append(All,
			bashMatrixScenario(h, "instruction", sayFinal, playBashInstruction),
			bashMatrixScenario(h, "dispatcher_gone_fail_closed", gatedScript, playBashGoneClosed),
			bashMatrixScenario(h, "dispatcher_gone_fail_open", gatedScript, playBashGoneOpen))
	}
}

// playBashInstruction enables a standing instruction for the harness, whose
// configuration home exists (its user has run it before): dalo writes it
// into the table's instruction file, and it reaches the model.
func playBashInstruction(w *World, c *Check) error {
	src := filepath.Join(w.Root, "src-"+SrcID)
	if err := WriteSource(src, SourceFiles); err != nil {
		return err
	}
	if err := os.MkdirAll(w.ConfigHome(), 0o755); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"source", "add", SrcID, src},
		{"instruction", "enable", SrcID + ":" + PkgName, "instruction:live-context", "--target", w.Harness},
	} {
		if _, err := w.Dalo(args...); err != nil {
			return err
		}
	}
	s, err := w.Run("Say something short.")
	c.Session = s
	if err != nil {
		c.Failf("the session failed: %v", err)
		return nil
	}
	if !w.Server.Contains(MarkInstruction) {
		ents, _ := os.ReadDir(w.ConfigHome())
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		c.Failf("the enabled instruction %s did not reach the model (configuration home holds %v)", MarkInstruction, names)
	}
	return nil
}

// BashGateFiles is the author source of a matrix kit of one gate on the
// shell tool (shell, its native name) under policy that denies every
// command naming "gated", the reason MarkGate.
func BashGateFiles(shell, policy string) map[string]string {
	return bashMatrixFiles("A "+policy+" gate.", []MatrixHook{{ID: "deny-gate", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore,
		Effect: plan.EffectGate, Policy: policy, Tools: shell, When: "*gated*", Result: `{"kind":"deny","reason":"` + MarkGate + `"}`}})
}

// bashDispatcherGone deletes the store's dispatchers, checks that doctor
// exits 1 saying each of says, and runs a session, which may fail. ok says
// it ended within its bound.
func bashDispatcherGone(w *World, c *Check, says ...string) (s Session, ok bool, err error) {
	if err := os.RemoveAll(filepath.Join(w.Store, "dispatchers")); err != nil {
		return Session{}, false, err
	}
	out, code, err := w.doctorIn(w.Root)
	if err != nil {
		return Session{}, false, err
	}
	for _, say := range says {
		if code != 1 || !strings.Contains(out, say) {
			c.Failf("doctor with the dispatcher gone: exit %d, want 1 saying %q:\n%s", code, say, out)
		}
	}
	s, err = w.Run("Run the command you are given.")
	c.Session = s
	w.logf("%s exit: %v", w.Harness, err)
	if s.TimedOut {
		c.Failf("the session failed: %v", err)
		return s, false, nil
	}
	return s, true, nil
}

// playBashGoneClosed deletes the dispatcher of an installed required
// fail_closed gate: the gated command does not run, and doctor says the
// harness blocks every call meanwhile. Where a failed command does not
// deny the call (Qwen), dalo's entry blocks it with exit 2 and its reason
// reaches the model; where it denies it (Copilot denies every failed
// PreToolUse hook), the model reads no reason of dalo's.
func playBashGoneClosed(w *World, c *Check) error {
	if _, err := w.InstallSource(BashMatrixID, BashMatrixPkg, BashGateFiles(w.ShellTool(), plan.PolicyFailClosed)); err != nil {
		return err
	}
	_, ok, err := bashDispatcherGone(w, c, "blocks every PreToolUse action until it runs again", "NOT in force: its dispatcher")
	if !ok {
		return err
	}
	if w.Exists("gated-ran") {
		c.Failf("the dispatcher is gone, and the command the required fail_closed gate guards ran")
	}
	reaches := !w.Provider.FailedCommandDenies("PreToolUse")
	if reason := "a required fail_closed hook guards PreToolUse, so dalo blocks it"; w.Server.Contains(reason) != reaches {
		c.Failf("the block's reason reached the model = %v, want %v (a failed command denies = %v)", !reaches, reaches, !reaches)
	}
	return nil
}

// playBashGoneOpen deletes the dispatcher of an installed fail_open gate:
// the command runs, on Copilot too, which denies a call whose PreToolUse
// hook fails: dalo's entry maps the failure to a pass there
// (events.PreToolUse.failed_command). doctor says the hooks do not run.
func playBashGoneOpen(w *World, c *Check) error {
	if _, err := w.InstallSource(BashMatrixID, BashMatrixPkg, BashGateFiles(w.ShellTool(), plan.PolicyFailOpen)); err != nil {
		return err
	}
	// Guarded where a failed command would deny the call.
	cmd, err := w.entryCommand("PreToolUse")
	if err != nil {
		return err
	}
	if guarded, denies := strings.Contains(cmd, " || { "), w.Provider.FailedCommandDenies("PreToolUse"); guarded != denies {
		c.Failf("dalo's PreToolUse entry is guarded = %v, where a failed command denies = %v: %s", guarded, denies, cmd)
	}
	_, ok, err := bashDispatcherGone(w, c, "the harness cannot dispatch, so its hooks do not run")
	if !ok {
		return err
	}
	if !w.Exists("gated-ran") {
		c.Failf("the dispatcher of a fail_open gate is gone, and the command did not run")
	}
	return nil
}
