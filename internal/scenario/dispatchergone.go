package scenario

import (
	"os"
	"path/filepath"
	"strings"

	"dalo/plan"
)

// dispatcherGone installs the gate kit (a required fail_closed gate) and
// then deletes the store's dispatchers, as a user who removed dalo's
// files would: doctor exits 1 saying the gate is not in force, for its
// dispatcher is gone; the harness's entry then fails to start it (the
// shell's exit 127), and the entry's guard turns that into the harness's
// blocking exit status with a reason on stderr. The gated command must not
// run. The reason reaches the model, except where the table says a failed
// command on the gate's native event denies the call by itself
// (events.<E>.failed_command): such a harness reads no reason from it.
// Variables a guard might name are set in the harness's environment: a
// harness that replaces $name in its settings (Gemini CLI) would rewrite
// such a guard into another command; dalo's names none.
var dispatcherGone = &Scenario{
	Name: "dispatcher-gone", Test: "TestDispatcherGone/%s", Harnesses: kitHarnesses,
	Script: gatedScript,
	Play: func(w *World, c *Check) error {
		tb, err := w.table()
		if err != nil {
			return err
		}
		w.SetEnv("s", "0")
		w.SetEnv("p", "0")
		if err := w.installGate(); err != nil {
			return err
		}
		if err := os.RemoveAll(filepath.Join(w.Store, "dispatchers")); err != nil {
			return err
		}
		out, code, err := w.doctorIn(w.Root)
		if err != nil {
			return err
		}
		if say := "NOT in force: its dispatcher"; code != 1 || !strings.Contains(out, say) {
			c.Failf("doctor with the dispatcher gone: exit %d, want 1 saying %q:\n%s", code, say, out)
		}
		s, err := w.Run("Run the command you are given.")
		c.Session = s
		w.logf("%s exit: %v", w.Harness, err)
		if s.TimedOut {
			c.Failf("the session failed: %v", err)
			return nil
		}
		if w.Exists("gated-ran") {
			c.Failf("the dispatcher is gone, and the command the required fail_closed gate guards ran")
		}
		event, _ := tb.NativeEvent(plan.SubjectToolCall, plan.PhaseBefore)
		reaches := !tb.FailedCommandDenies(event)
		if reason := "a required fail_closed hook guards " + event + ", so dalo blocks it"; w.Server.Contains(reason) != reaches {
			c.Failf("the block's reason reached the model = %v, want %v (failed_command denies = %v)", !reaches, reaches, !reaches)
		}
		return nil
	},
}
