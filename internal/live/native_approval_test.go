//go:build unix

package live

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"dalo/internal/fakemodel"
)

// What Codex 0.147.0's native PreToolUse "allow" does to its own approval
// and sandbox checks. dalo answers a portable rewrite_input there with
// permissionDecision "allow" beside updatedInput, because Codex applies
// updatedInput only beside it (finding 15); every other live test runs
// Codex with approvals and sandbox bypassed, so none shows what that allow
// costs a user who kept them. These runs keep them: an app-server session
// (where Codex asks its client for approval, as an IDE shows it) with a
// restrictive approval policy and a read-only sandbox (and codex exec,
// which cannot ask), with the hand-written native hook of native_test.go
// answering PreToolUse. The same check on Claude Code's rewrite
// (updatedInput alone) runs print mode without Bash allowed.

const (
	apprOrigMark = "APPR-ORIG-RAN-4d1c"
	apprNewMark  = "APPR-NEW-RAN-8f3a"
	apprOrigFile = "appr-orig"
	apprNewFile  = "appr-new"
	apprFinal    = "APPR-FINAL-ANSWER-61b9"
)

// apprCommand is a shell command that prints mark (built by printf, so that
// the command's text does not hold it: the model reads mark only if the
// command ran) and writes file in the project.
func apprCommand(mark, file string) string {
	prefix, rest, _ := strings.Cut(mark, "-")
	return "printf " + prefix + "-%s " + rest + "; touch " + file
}

// apprScript is the model's turn: one shell command, then the answer.
var apprScript = fakemodel.Script{fakemodel.Run(apprCommand(apprOrigMark, apprOrigFile)), fakemodel.Say(apprFinal)}

// apprRewrite is the native answer of a rewrite: allow with the rewritten
// command, the output dalo's Codex table gives rewrite_input.
var apprRewrite = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"` +
	apprCommand(apprNewMark, apprNewFile) + `"}}}`

// apprAllow is the native allow alone, without updatedInput.
const apprAllow = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`

// apprReadOnly is what the read-only sandbox answered the command's write,
// in the tool output the model read.
const apprReadOnly = "Read-only file system"

// apprCodexCases are the Codex sessions: the PreToolUse hook's answer, the
// approval policy and sandbox of the thread (exec: a codex exec run with
// them instead), the client's answer to an approval request, and what
// Codex did: the command its approval request named ("" for none), the
// command whose output reached the model (by its mark), whether that
// command's write landed (maybe: either, see below), whether Codex refused
// the hook's answer.
var apprCodexCases = []struct {
	name, answer, policy, sandbox, decision string
	exec                                    bool
	asked, ran                              string
	wrote, maybe, refused                   bool
}{
	// untrusted asks before any command it does not know as safe; a
	// declined command does not run, with or without the hook's allow.
	{name: "untrusted_nothing_decline", policy: "untrusted", sandbox: "read-only", decision: "decline",
		asked: apprOrigFile},
	{name: "untrusted_allow_decline", answer: apprAllow, policy: "untrusted", sandbox: "read-only", decision: "decline",
		asked: apprOrigFile, refused: true},
	{name: "untrusted_rewrite_decline", answer: apprRewrite, policy: "untrusted", sandbox: "read-only", decision: "decline",
		asked: apprNewFile},
	// An approved command runs, the one the request named. Whether its
	// write lands is Codex's own affair, the same with and without the
	// rewrite: on a quiet machine Codex ran it outside the read-only
	// sandbox and it landed; under load it sometimes ran it sandboxed and
	// the write was refused (finding 43). Either is asserted as possible.
	{name: "untrusted_nothing_accept", policy: "untrusted", sandbox: "read-only", decision: "accept",
		asked: apprOrigFile, ran: apprOrigMark, maybe: true},
	{name: "untrusted_rewrite_accept", answer: apprRewrite, policy: "untrusted", sandbox: "read-only", decision: "accept",
		asked: apprNewFile, ran: apprNewMark, maybe: true},
	// on-request asks nothing for a command in the sandbox: it runs
	// there, and the read-only sandbox refuses the write.
	{name: "on_request_nothing", policy: "on-request", sandbox: "read-only", decision: "decline",
		ran: apprOrigMark},
	{name: "on_request_rewrite", answer: apprRewrite, policy: "on-request", sandbox: "read-only", decision: "decline",
		ran: apprNewMark},
	// codex exec cannot ask: it runs with approval never whatever the
	// policy, the command in the sandbox.
	{name: "exec_on_request_rewrite", answer: apprRewrite, policy: "on-request", sandbox: "read-only", exec: true,
		ran: apprNewMark},
}

// TestNativeCodexRewriteApproval proves what the native allow dalo answers
// a rewrite with on Codex 0.147.0 does to Codex's own checks: nothing. A
// hand-configured PreToolUse hook answers nothing, allow alone, or allow
// with updatedInput (the rewrite), in sessions that keep Codex's approval
// policy and a read-only sandbox. With the rewrite Codex still asks for
// approval where it would without the hook (untrusted), naming the
// rewritten command, and runs nothing the client declined; where it asks
// nothing (on-request, or exec, which cannot ask) the rewritten command
// runs in the sandbox, which refuses its write. Allow alone is refused as
// an unsupported decision and changes nothing.
func TestNativeCodexRewriteApproval(t *testing.T) {
	t.Parallel()
	harness(t, "codex")
	for _, c := range apprCodexCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "codex", apprScript)
			w.natConfigure()
			w.natAnswer("PreToolUse", c.answer, "", 0)
			var a appSession
			if c.exec {
				a = w.apprExec("Run the command, appr.", c.policy, c.sandbox)
				// exec shows the policy it runs with in its header.
				if !strings.Contains(a.stderr, "\napproval: never\n") || !strings.Contains(a.stderr, "\nsandbox: "+c.sandbox+"\n") {
					w.apprFail(a, "codex exec with approval_policy %q did not run with approval never and sandbox %s", c.policy, c.sandbox)
				}
			} else {
				a = w.appServerWith(appThread{policy: c.policy, sandbox: c.sandbox, decision: c.decision}, "Run the command, appr.")
			}

			// The hook ran once, on the model's command. Its
			// permission_mode is default where Codex may ask, and
			// bypassPermissions in exec (approval never), read-only
			// sandbox notwithstanding.
			mode := "default"
			if c.exec {
				mode = "bypassPermissions"
			}
			ps := w.natPayloads("PreToolUse")
			if len(ps) != 1 {
				w.apprFail(a, "PreToolUse hook ran %d times, want once", len(ps))
			} else if in, _ := ps[0]["tool_input"].(map[string]any); in["command"] != apprScript[0].Command || ps[0]["permission_mode"] != mode {
				w.apprFail(a, "PreToolUse hook got tool_input %v, permission_mode %v; want the model's command and %s", ps[0]["tool_input"], ps[0]["permission_mode"], mode)
			}
			if !c.exec {
				pre := a.event("preToolUse")
				switch {
				case len(pre) != 1:
					w.apprFail(a, "preToolUse hook runs %+v, want one", pre)
				case c.refused:
					if _, ok := pre[0].Entry("error", "unsupported permissionDecision:allow"); pre[0].Status != "failed" || !ok {
						w.apprFail(a, "preToolUse run %+v: want failed with an error refusing the allow", pre[0])
					}
				case pre[0].Status != "completed" || len(pre[0].Entries) != 0:
					w.apprFail(a, "preToolUse run %+v: want completed without entries", pre[0])
				}
			}

			// Did Codex ask, and for which command?
			switch {
			case c.asked == "" && len(a.requests) != 0:
				w.apprFail(a, "Codex asked %+v, want no request", a.requests)
			case c.asked != "":
				if len(a.requests) != 1 || a.requests[0].Method != "item/commandExecution/requestApproval" {
					w.apprFail(a, "Codex asked %+v, want one command approval request", a.requests)
				} else if cmd, _ := a.requests[0].Params["command"].(string); !strings.Contains(cmd, "touch "+c.asked) {
					w.apprFail(a, "the approval request names %q, want the command touching %s", cmd, c.asked)
				}
			}

			// The item the client was shown: the command as approved or
			// declined.
			if !c.exec {
				want := map[string]string{"accept": "completed", "decline": "declined"}[c.decision]
				status := ""
				if len(a.items) == 1 {
					status = a.items[0].Status
					if c.maybe && status == "failed" {
						status = want // the sandboxed run's refused write
					}
				}
				// A command run in the sandbox unasked showed the client no
				// item on a quiet machine, and a failed one under load: the
				// checks below hold it to what ran and what the sandbox did.
				switch {
				case c.asked != "" && (len(a.items) != 1 || status != want || !strings.Contains(a.items[0].Command, "touch "+c.asked)):
					w.apprFail(a, "command items %+v, want one %s, touching %s", a.items, want, c.asked)
				}
			}

			// What ran, and did its write land?
			for _, m := range []string{apprOrigMark, apprNewMark} {
				if saw := w.server.Contains(m); saw != (m == c.ran) {
					w.apprFail(a, "the model read %s's output = %v; want %v", m, saw, m == c.ran)
				}
			}
			for _, f := range []string{apprOrigFile, apprNewFile} {
				ranIt := (f == apprOrigFile) == (c.ran == apprOrigMark) && c.ran != ""
				want := c.wrote && ranIt
				if c.maybe && ranIt {
					want = !w.server.Contains(apprReadOnly) // landed unless refused
				}
				if w.exists(f) != want {
					w.apprFail(a, "%s exists = %v, want %v", f, w.exists(f), want)
				}
			}
			if refused := w.server.Contains(apprReadOnly); !c.maybe && refused != (c.ran != "" && !c.wrote) {
				w.apprFail(a, "the model read %q = %v; want %v (the sandbox refused the write)", apprReadOnly, refused, c.ran != "" && !c.wrote)
			}
			if len(natTurns(w.server)) != 2 || !strings.Contains(a.stdout, apprFinal) {
				w.apprFail(a, "model turns %d, answer shown %v; want 2 and true", len(natTurns(w.server)), strings.Contains(a.stdout, apprFinal))
			}
		})
	}
}

// apprExec runs codex exec in the project dir with approval policy and
// sandbox mode (hook trust as the other live runs have it) and
// returns what it printed as an appSession.
func (w *world) apprExec(prompt, policy, sandbox string) appSession {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	args := append([]string{"exec", "--skip-git-repo-check"}, w.codexTrust().flags...)
	args = append(args, "--sandbox", sandbox, "-c", "approval_policy="+strconv.Quote(policy), prompt)
	cmd := exec.CommandContext(ctx, harness(w.t, "codex"), args...)
	cmd.Dir = w.work
	cmd.Env = w.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	a := appSession{stdout: stdout.String(), stderr: stderr.String()}
	if err != nil {
		w.t.Fatalf("codex exec: %v\nstdout:\n%s\nstderr:\n%s", err, clip(a.stdout), clip(a.stderr))
	}
	return a
}

// apprFail reports a failed check with what Codex sent or printed.
func (w *world) apprFail(a appSession, format string, args ...any) {
	w.t.Helper()
	w.t.Errorf(format+"\nstdout:\n%s\nstderr:\n%s", append(args, clip(a.stdout), clip(a.stderr))...)
}

// apprClaudeCases are the Claude Code sessions, Bash not among the
// allowed tools (print mode then refuses what it would ask about): the
// PreToolUse hook's answer, the command whose output reached the model (by
// its mark), or else the file of the command Claude refused.
var apprClaudeCases = []struct{ name, answer, ran, refused string }{
	{name: "nothing", refused: apprOrigFile},
	{name: "rewrite_alone", answer: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"` +
		apprCommand(apprNewMark, apprNewFile) + `"}}}`, refused: apprNewFile},
	{name: "rewrite_allow", answer: apprRewrite, ran: apprNewMark},
}

// TestNativeClaudeRewriteApproval proves the Claude table's note on its
// rewrite (updatedInput alone keeps Claude's ordinary permission flow): with
// Bash not allowed, Claude Code refuses the rewritten command as it refuses
// the model's own, and tells the model so naming the rewritten command's
// file; beside "allow" the rewritten command runs, the check skipped.
func TestNativeClaudeRewriteApproval(t *testing.T) {
	t.Parallel()
	harness(t, "claude")
	for _, c := range apprClaudeCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "claude", apprScript)
			w.AllowedTools = "Read"
			w.natConfigure()
			w.natAnswer("PreToolUse", c.answer, "", 0)
			s := w.run("Run the command, appr.")
			if ps := w.natPayloads("PreToolUse"); len(ps) != 1 {
				w.failf(s, "PreToolUse hook ran %d times, want once", len(ps))
			}
			for _, m := range []string{apprOrigMark, apprNewMark} {
				if saw := w.server.Contains(m); saw != (m == c.ran) {
					w.failf(s, "the model read %s's output = %v; want %v", m, saw, m == c.ran)
				}
			}
			for _, f := range []string{apprOrigFile, apprNewFile} {
				if want := c.ran == apprNewMark && f == apprNewFile; w.exists(f) != want {
					w.failf(s, "%s exists = %v, want %v", f, w.exists(f), want)
				}
				// Claude's refusal names the command's file: "touch in
				// '<file>' was blocked" (2.1.233), "... needs approval"
				// (2.1.332).
				refusal := toolResult(w.server, callID("claude", 0))
				named := strings.Contains(refusal, "touch in '"+filepath.Join(w.work, f)+"'") &&
					(strings.Contains(refusal, "was blocked") || strings.Contains(refusal, "needs approval"))
				if named != (f == c.refused) {
					w.failf(s, "the model read a refusal naming %s = %v (%q); want %v", f, named, refusal, f == c.refused)
				}
			}
		})
	}
}
