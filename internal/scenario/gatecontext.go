package scenario

import (
	"fmt"
	"strings"

	"dalo/internal/fakemodel"
	"dalo/plan"
)

// The gate and context kit: a shell gate that denies one command, and
// three prompt context hooks, one that adds context and two that crash,
// under fail_open and report, with error_visibility user: what a package
// that guards and informs needs of a harness version, and nothing else.
const (
	ctxSrcID   = "gc"
	ctxPkg     = "gate-context-kit"
	ctxPrompt  = "Run the command you are given, ctx-failure-prompt."
	ctxContext = "LIVE-CTX-FAILURE-CONTEXT-3e7b"
	ctxStderr  = "LIVE-CTX-FAILURE-STDERR-a41c"
	ctxDeny    = "LIVE-GATE-CONTEXT-DENY-9d25"
)

// ctxHooks are the kit's hooks: id, failure policy, exit status (0: adds
// ctxContext).
var ctxHooks = []struct {
	id, policy string
	exit       int
}{
	{"ctx", plan.PolicyFailOpen, 0},
	{"ctx-crash", plan.PolicyFailOpen, 3},
	{"ctx-report", plan.PolicyReport, 4},
}

// ctxFiles is the context failure kit's author source.
func ctxFiles() map[string]string {
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version = 1\n\n[plugin]\nname = %q\ndescription = %q\nid = %q\n",
		ctxPkg, "Prompt context hooks, one that adds context and two that crash.", "dalo."+ctxPkg)
	files := map[string]string{}
	for _, h := range ctxHooks {
		script := "#!/bin/sh\necho '{\"kind\":\"add_context\",\"context\":\"" + ctxContext + "\"}'\n"
		if h.exit != 0 {
			script = fmt.Sprintf("#!/bin/sh\necho %s >&2\nexit %d\n", ctxStderr, h.exit)
		}
		files["plugins/"+ctxPkg+"/"+h.id+".sh"] = script
		fmt.Fprintf(&b, "\n[[tool]]\nschema_version = 1\nid = %q\nentry = %q\nruntime = \"executable\"\nargv = []\n"+
			"cwd = \"tool_root\"\navailability = \"required\"\n", h.id, h.id+".sh")
		fmt.Fprintf(&b, "\n[[hook]]\nschema_version = 1\nid = %q\ntool = %q\nsubject = \"prompt\"\nphase = \"before\"\n"+
			"effect = \"add_context\"\nrequirement = \"required\"\ntimeout_ms = 5000\nfailure_policy = %q\nretry = \"never\"\n"+
			"error_visibility = \"user\"\nblocking_scope = \"matched_event\"\n", h.id, h.id, h.policy)
	}
	files["plugins/"+ctxPkg+"/gate.sh"] = `#!/bin/sh
in=$(cat)
case "$in" in
*gc-denied*) echo '{"kind":"deny","reason":"` + ctxDeny + `"}' ;;
*) echo '{"kind":"allow"}' ;;
esac
`
	fmt.Fprintf(&b, "\n[[tool]]\nschema_version = 1\nid = \"gate\"\nentry = \"gate.sh\"\nruntime = \"executable\"\nargv = []\n"+
		"cwd = \"tool_root\"\navailability = \"required\"\n")
	fmt.Fprintf(&b, "\n[[hook]]\nschema_version = 1\nid = \"gate\"\ntool = \"gate\"\nsubject = \"tool_call\"\nphase = \"before\"\n"+
		"effect = \"gate\"\nrequirement = \"required\"\ntimeout_ms = 5000\nfailure_policy = \"fail_closed\"\nretry = \"never\"\n"+
		"error_visibility = \"user\"\nblocking_scope = \"matched_event\"\nmatcher = { tool_names = [\"Bash\"] }\n")
	files["plugins/"+ctxPkg+"/PLUGIN.toml"] = b.String()
	return files
}

// gateContext installs the gate and context kit and runs one prompt whose
// model calls the shell with a command the gate denies: the command does
// not run and the gate's reason reaches the model; the prompt and the
// working hook's context reach the model; each crashed context hook's
// diagnostic, with the handler's stderr, is shown to the user where the
// harness shows hooks' messages (Claude Code's stream, Gemini CLI's
// stderr, a warning of Codex's hook run, which its app server reports and
// exec prints nowhere), and none of it reaches the model.
var gateContext = &Scenario{
	Name: "gate-context", Test: "TestGateContext/%s", Harnesses: verifyHarnesses, Core: true,
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{fakemodel.Run("touch gc-denied"), fakemodel.Say("Done.")}
	},
	Play: func(w *World, c *Check) error {
		w.StreamJSON = w.Harness == "claude"
		if _, err := w.InstallSource(ctxSrcID, ctxPkg, ctxFiles()); err != nil {
			return err
		}
		var warnings []string
		var s Session
		var err error
		if w.Harness == "codex" {
			var runs []HookRun
			runs, s, err = w.AppServer(ctxPrompt)
			for _, r := range runs {
				if r.EventName != "userPromptSubmit" {
					continue
				}
				for _, e := range r.Entries {
					if e.Kind == "warning" {
						warnings = append(warnings, e.Text)
					}
				}
			}
		} else {
			s, err = w.Run(ctxPrompt)
		}
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}
		if w.Exists("gc-denied") {
			c.Failf("gate deny: the denied command ran")
		}
		if !w.Server.Contains(ctxDeny) {
			c.Failf("gate deny: reason %q did not reach the model", ctxDeny)
		}
		if !w.Server.Contains("ctx-failure-prompt") {
			c.Failf("fail_open and report: the prompt did not reach the model")
		}
		if !w.Server.Contains(ctxContext) {
			c.Failf("prompt add_context %q did not reach the model beside the crashed hooks", ctxContext)
		}
		if w.Server.Contains(ctxStderr) {
			c.Failf("a crashed hook's stderr reached the model")
		}
		for _, h := range ctxHooks[1:] {
			diag := fmt.Sprintf("dalo: hook %s:%s/%s failed (%s): handler exited with status %d", ctxSrcID, ctxPkg, h.id, h.policy, h.exit)
			if w.Server.Contains(diag) || w.Server.Contains("/"+h.id+"] This hook failed") {
				c.Failf("%s, %s, user: its diagnostic reached the model", h.id, h.policy)
			}
			shown := false
			switch w.Harness {
			case "claude":
				_, shown = Shown(UserMessages(s.Stdout), "UserPromptSubmit says: "+diag, "UserPromptSubmit says:   stderr: "+ctxStderr)
			case "gemini":
				shown = strings.Contains(s.Stderr, diag+"\n  stderr: "+ctxStderr)
			case "codex":
				for _, text := range warnings {
					if strings.Contains(text, diag) && strings.Contains(text, "  stderr: "+ctxStderr) {
						shown = true
					}
				}
			default:
				w.logf("user channel: %s %s in harness stdout = %v, stderr = %v", h.id, diag,
					strings.Contains(s.Stdout, diag), strings.Contains(s.Stderr, diag))
				continue
			}
			if !shown {
				c.Failf("%s, %s, user: the user was not shown %q with the handler's stderr", h.id, h.policy, diag)
			}
		}
		return nil
	},
}
