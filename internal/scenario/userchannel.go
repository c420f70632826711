package scenario

import (
	"strconv"

	"dalo/internal/fakemodel"
)

// The probe kit's user channel: three probe hooks with policy report and
// error_visibility = "user" fail (a prompt observer, a before and an after
// tool call context hook). Each action goes on; the user is shown each
// diagnostic with the handler's stderr where the harness shows hooks'
// messages; the model reads neither.

func userChannelScript(*World) fakemodel.Script {
	return fakemodel.Script{
		fakemodel.Run("touch pre-user-crash"),
		fakemodel.Run("touch post-user-crash"),
		fakemodel.Say("Done."),
	}
}

const userChannelPrompt = "Run the probe commands, prompt-user-crash."

// userChannelHooks are the failing hooks, with the native event each runs
// on, as Claude Code's stream names it and as Codex's app server does.
var userChannelHooks = []struct{ hook, says, event string }{
	{"prompt-observe", "UserPromptSubmit says: ", "userPromptSubmit"},
	{"pre-context", "PreToolUse:Bash says: ", "preToolUse"},
	{"post-context", "PostToolUse:Bash says: ", "postToolUse"},
}

// userChannelDiag is what dalo shows the user of the failure of hook.
func userChannelDiag(hook string) string {
	return "dalo: hook " + ProbeID + ":" + ProbePkg + "/" + hook + " failed (report): handler exited with status " + strconv.Itoa(ProbeExit[hook])
}

// userChannelModel checks that none of it reached the model, and that
// report left each action unchanged.
func userChannelModel(w *World, c *Check) {
	for _, h := range userChannelHooks {
		if w.Server.Contains("/" + h.hook + "] This hook failed") {
			c.Failf("%s, user: a diagnostic reached the model", h.hook)
		}
	}
	if w.Server.Contains(MarkUserStderr) {
		c.Failf("a handler's stderr reached the model")
	}
	if !w.Server.Contains("prompt-user-crash") || !w.Exists("pre-user-crash") || !w.Exists("post-user-crash") {
		c.Failf("report: prompt reached the model = %v, commands ran = %v, %v; want true, true, true",
			w.Server.Contains("prompt-user-crash"), w.Exists("pre-user-crash"), w.Exists("post-user-crash"))
	}
}

// claudeUserChannel runs it in a Claude session, its stream read as the
// user reads it: each diagnostic is shown as "<event>:<matcher> says:"
// lines.
var claudeUserChannel = &Scenario{
	Name: "claude-user-channel", Test: "TestProbeUserChannel", Harnesses: []string{"claude"},
	Script: userChannelScript,
	Play: func(w *World, c *Check) error {
		w.StreamJSON = true
		if _, err := w.InstallSource(ProbeID, ProbePkg, ProbeFiles()); err != nil {
			return err
		}
		s, err := w.Run(userChannelPrompt)
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}
		msgs := UserMessages(s.Stdout)
		for _, h := range userChannelHooks {
			diag := userChannelDiag(h.hook)
			if _, ok := Shown(msgs, h.says+diag, h.says+"  stderr: "+MarkUserStderr); !ok {
				c.Failf("%s, report, user: the user was not shown %q with its stderr (shown: %+v)", h.hook, h.says+diag, msgs)
			}
		}
		userChannelModel(w, c)
		return nil
	},
}

// codexUserChannel runs it in a Codex app-server session: each diagnostic
// is a warning of that event's hook run.
var codexUserChannel = &Scenario{
	Name: "codex-user-channel", Test: "TestCodexUserChannel", Harnesses: []string{"codex"},
	Script: userChannelScript,
	Play: func(w *World, c *Check) error {
		if _, err := w.InstallSource(ProbeID, ProbePkg, ProbeFiles()); err != nil {
			return err
		}
		runs, s, err := w.AppServer(userChannelPrompt)
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}
		for _, h := range userChannelHooks {
			diag, found := userChannelDiag(h.hook), false
			for _, r := range Event(runs, h.event) {
				if text, ok := r.Entry("warning", diag, "  stderr: "+MarkUserStderr); ok {
					found = true
					w.logf("user channel, %s: %q", h.event, text)
				}
			}
			if !found {
				c.Failf("%s, report, user: no %s hook run showed the user a warning %q with its stderr", h.hook, h.event, diag)
			}
		}
		userChannelModel(w, c)
		return nil
	},
}
