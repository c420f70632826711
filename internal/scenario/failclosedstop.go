package scenario

import (
	"fmt"
	"path/filepath"
	"strings"

	"dalo/internal/fakemodel"
	"dalo/plan"
)

// failClosedStop runs a session whose fail_closed stop hook always crashes
// and whose session end hook (policy report) crashes: every stop, already
// continued or not, asks for another pass with the generic reason, up to
// dalo's bound (plan.FailClosedPasses in a row), and then the session ends
// normally, whatever cap of its own the harness has. The user is shown
// each failure where the harness shows hooks' messages, and why no pass
// followed.
var failClosedStop = &Scenario{
	Name: "fail-closed-stop", Test: "TestFailClosedStop/%s", Harnesses: kitHarnesses,
	Script: func(*World) fakemodel.Script { return fakemodel.Script{fakemodel.Say("Nothing to run.")} },
	Play: func(w *World, c *Check) error {
		w.StreamJSON = w.Harness == "claude"
		if _, err := w.Install(); err != nil {
			return err
		}
		for _, f := range []string{"crash-stop", "crash-end"} {
			if err := w.WriteFile(filepath.Join(w.Work, f), ""); err != nil {
				return err
			}
		}
		s, err := w.Run("Say something short.")
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}
		if posts, want := len(Turns(w.Server)), 1+plan.FailClosedPasses; posts != want {
			c.Failf("model requests = %d, want %d: the first turn and the %d passes the failing stop hook may ask for", posts, want, plan.FailClosedPasses)
		}
		if !w.Server.Contains("This hook failed; the details were shown to the user. Another pass was requested (fail_closed).") {
			c.Failf("crashed fail_closed stop hook: the generic reason did not reach the model")
		}
		if w.Server.Contains(MarkStopStderr) {
			c.Failf("crashed fail_closed stop hook: its stderr reached the model")
		}
		// The other stop hook continued once itself, then saw every later
		// stop already continued.
		if got, want := w.Output("stop.argv"), "false\n"+strings.Repeat("true\n", plan.FailClosedPasses); got != want {
			c.Failf("stop handler argv per run = %q, want %q: a run per stop", got, want)
		}
		if strings.TrimSpace(w.Output("end.argv")) == "" {
			c.Failf("the other session end hook did not run beside the crashing one")
		}
		failClosedStopShown(w, c, s)
		return nil
	},
}

// failClosedStopShown checks what the user of failClosedStop's session was
// shown of the failures.
func failClosedStopShown(w *World, c *Check, s Session) {
	// A failing session end hook under report: dispatch exits 1 with the
	// diagnostic on stderr, which Claude Code and Gemini CLI pass on to
	// the user's stderr. (Codex exec prints it nowhere: logged.)
	if (w.Harness == "claude" || w.Harness == "gemini") && !strings.Contains(s.Stderr, MarkEndStderr) {
		c.Failf("crashed session end hook: its diagnostic (with %s) is not on %s's stderr", MarkEndStderr, w.Harness)
	}
	diag := "dalo: hook " + SrcID + ":" + PkgName + "/strict-stop failed (fail_closed): handler exited with status 3"
	bound := fmt.Sprintf("dalo: hook %s:%s/strict-stop is fail_closed, but failing fail_closed hooks already asked for %d workflow passes in a row, the most dalo asks for; not asking for another pass",
		SrcID, PkgName, plan.FailClosedPasses)
	switch w.Harness {
	case "gemini":
		// Headless Gemini CLI prints the stop hook's user channel on
		// stderr: each failure, and on the last stop why no pass.
		shown := "Hook system message: " + diag + "\n  stderr: " + MarkStopStderr
		if n := strings.Count(s.Stderr, shown); n != 1+plan.FailClosedPasses || !strings.Contains(s.Stderr, bound) {
			c.Failf("gemini: the user was shown the stop hook's failure %d times (want %d) and why no more passes = %v", n, 1+plan.FailClosedPasses, strings.Contains(s.Stderr, bound))
		}
	case "claude":
		// Claude's stream shows the user the crashed fail_closed stop
		// hook's diagnostic, and on the last stop why no pass.
		msgs := UserMessages(s.Stdout)
		if m, ok := Shown(msgs, "Stop says: "+diag, "Stop says:   stderr: "+MarkStopStderr); !ok {
			c.Failf("crashed fail_closed stop hook: the user was not shown %q with its stderr %s (shown: %+v)", diag, MarkStopStderr, msgs)
		} else {
			w.logf("user channel, stop: %q", m.Text)
		}
		if m, ok := Shown(msgs, "Stop says: "+bound); !ok {
			c.Failf("past the bound: the user was not shown %q (shown: %+v)", bound, msgs)
		} else {
			w.logf("user channel, past the bound: %q", m.Text)
		}
	}
	for _, m := range []string{MarkStopStderr, MarkEndStderr} {
		w.logf("user channel: %s in harness stdout = %v, stderr = %v", m, strings.Contains(s.Stdout, m), strings.Contains(s.Stderr, m))
	}
}
