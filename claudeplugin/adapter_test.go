package claudeplugin

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// A case runs one hook command through claude-hook.sh and states the
// portable result it must print, or the failure (exit 1) it must end in.
type adapterCase struct {
	name    string
	event   string
	effect  string
	command string   // the hook's command, as the command file holds it
	filter  []string // TOOL_NAME TOOL_REGEX
	want    string   // stdout, without its newline; "" for a failure
	stderr  string   // a substring of stderr, when set
}

var adapterCases = []adapterCase{
	// A blocking answer of a gate is a deny: exit 2 with its stderr,
	// permissionDecision deny, decision block, continue false.
	{name: "exit 2 denies", event: "PreToolUse", effect: "gate",
		command: `echo "Use the reviewed script." >&2; exit 2`,
		want:    `{"kind":"deny","reason":"Use the reviewed script."}`},
	{name: "exit 2 without stderr denies", event: "PreToolUse", effect: "gate",
		command: `exit 2`,
		want:    `{"kind":"deny","reason":"Claude Code hook PreToolUse blocked this (exit status 2)."}`},
	{name: "exit 2 ignores stdout", event: "PreToolUse", effect: "gate",
		command: `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'; echo no >&2; exit 2`,
		want:    `{"kind":"deny","reason":"no"}`},
	{name: "permissionDecision deny with its reason", event: "PreToolUse", effect: "gate",
		command: `printf "%s\\n" '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"No \"rm\".\n\u00e9"}}'`,
		want:    `{"kind":"deny","reason":"No \"rm\".\n\u00e9"}`},
	{name: "deny without a reason takes systemMessage", event: "PreToolUse", effect: "gate",
		command: `echo '{"hookSpecificOutput":{"permissionDecision":"deny"},"systemMessage":"**[rule]** Dangerous"}'`,
		want:    `{"kind":"deny","reason":"**[rule]** Dangerous"}`},
	{name: "deny without any text", event: "PreToolUse", effect: "gate",
		command: `echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"  "}}'`,
		want:    `{"kind":"deny","reason":"Claude Code hook PreToolUse denied this."}`},
	{name: "decision block on a prompt", event: "UserPromptSubmit", effect: "gate",
		command: `echo '{"decision":"block","reason":"Not in this repository."}'`,
		want:    `{"kind":"deny","reason":"Not in this repository."}`},
	{name: "continue false stops, a deny", event: "PreToolUse", effect: "gate",
		command: `echo '{"continue":false,"stopReason":"Build broken."}'`,
		want:    `{"kind":"deny","reason":"Build broken."}`},
	{name: "ask cannot be asked: a deny", event: "PreToolUse", effect: "gate",
		command: `echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"Production?"}}'`,
		want:    `{"kind":"deny","reason":"Claude Code hook PreToolUse asks the user to confirm this, which a portable gate cannot ask: denied.\nProduction?"}`},
	{name: "a decision it does not know denies", event: "PreToolUse", effect: "gate",
		command: `echo '{"decision":"maybe"}'`,
		want:    `{"kind":"deny","reason":"Claude Code hook PreToolUse answered a decision dalo cannot map (decision \"maybe\", permissionDecision none): denied."}`},
	{name: "a permissionDecision it does not know denies", event: "PreToolUse", effect: "gate",
		command: `echo '{"hookSpecificOutput":{"permissionDecision":"defer"}}'`,
		want:    `{"kind":"deny","reason":"Claude Code hook PreToolUse answered a decision dalo cannot map (decision none, permissionDecision \"defer\"): denied."}`},
	{name: "a rewrite under a gate denies", event: "PreToolUse", effect: "gate",
		command: `echo '{"hookSpecificOutput":{"updatedInput":{"command":"ls"}}}'`,
		want:    `{"kind":"deny","reason":"Claude Code hook PreToolUse rewrote the tool input, which a portable gate cannot: denied, so that the input it meant to change does not run."}`},
	{name: "allow", event: "PreToolUse", effect: "gate",
		command: `echo '{"hookSpecificOutput":{"permissionDecision":"allow","additionalContext":"lost"}}'`,
		want:    `{"kind":"allow"}`, stderr: "additionalContext cannot reach the model under effect gate"},
	{name: "approve", event: "PreToolUse", effect: "gate",
		command: `echo '{"decision":"approve"}'`, want: `{"kind":"allow"}`},
	{name: "empty object abstains", event: "PreToolUse", effect: "gate",
		command: `echo '{}'`, want: `{"kind":"abstain"}`},
	{name: "nothing abstains", event: "PreToolUse", effect: "gate",
		command: `true`, want: `{"kind":"abstain"}`},
	{name: "text on a prompt gate is context it drops", event: "UserPromptSubmit", effect: "gate",
		command: `echo remember the style guide`, want: `{"kind":"abstain"}`, stderr: "cannot reach the model under effect gate"},
	{name: "text on a tool call is not context", event: "PreToolUse", effect: "gate",
		command: `echo checking`, want: `{"kind":"abstain"}`},
	{name: "JSON that is not an object is text", event: "PreToolUse", effect: "gate",
		command: `echo '{"decision":"block"'`, want: `{"kind":"abstain"}`},
	{name: "two objects are text", event: "UserPromptSubmit", effect: "add_context",
		command: `echo '{}{}'`, want: `{"kind":"add_context","context":"{}{}"}`},
	{name: "an error exit is a failure", event: "PreToolUse", effect: "gate",
		command: `echo traceback >&2; exit 1`, stderr: "traceback"},
	{name: "a missing interpreter is a failure", event: "PreToolUse", effect: "gate",
		command: `no-such-interpreter-dalo hook.py`, stderr: "exited with status 127"},

	// Context.
	{name: "session start text", event: "SessionStart", effect: "add_context",
		command: `printf 'Line one\n\tLine "two" \\ end\n'`,
		want:    `{"kind":"add_context","context":"Line one\n\tLine \"two\" \\ end"}`},
	{name: "session start additionalContext", event: "SessionStart", effect: "add_context",
		command: "cat <<'EOF'\n{\n  \"hookSpecificOutput\": {\n    \"hookEventName\": \"SessionStart\",\n    \"additionalContext\": \"You are in 'explanatory' mode.\\n\\u2605 Insight\"\n  }\n}\nEOF",
		want:    `{"kind":"add_context","context":"You are in 'explanatory' mode.\n\u2605 Insight"}`},
	{name: "session start exit 2 is for the user only", event: "SessionStart", effect: "add_context",
		command: `echo "setup failed" >&2; exit 2`, stderr: "shows its stderr to the user only:\nsetup failed"},
	{name: "post tool use exit 2 is context", event: "PostToolUse", effect: "add_context",
		command: `echo "lint: 2 errors" >&2; exit 2`,
		want:    `{"kind":"add_context","context":"lint: 2 errors"}`},
	{name: "post tool use block and context join", event: "PostToolUse", effect: "add_context",
		command: `echo '{"decision":"block","reason":"Fix the lint.","hookSpecificOutput":{"additionalContext":"2 errors"}}'`,
		want:    `{"kind":"add_context","context":"2 errors\nFix the lint."}`},
	{name: "post tool use text is not context", event: "PostToolUse", effect: "add_context",
		command: `echo formatted`, want: `{"kind":"abstain"}`},
	{name: "post tool use replacing output fails", event: "PostToolUse", effect: "add_context",
		command: `echo '{"hookSpecificOutput":{"updatedToolOutput":{"stdout":"x"}}}'`, stderr: "replaced the tool output"},
	{name: "post tool use continue false fails", event: "PostToolUse", effect: "add_context",
		command: `echo '{"continue":false}'`, stderr: "continue: false"},
	{name: "control characters are escaped", event: "PostToolUse", effect: "add_context",
		command: `printf 'a\001b\033[31mc' >&2; exit 2`,
		want:    `{"kind":"add_context","context":"a\u0001b\u001b[31mc"}`},
	{name: "bytes that are not UTF-8 are replaced", event: "PostToolUse", effect: "add_context",
		command: `printf 'caf\303\251 \377 \355\240\200 end' >&2; exit 2`,
		want:    `{"kind":"add_context","context":"café ? ??? end"}`},

	// The workflow.
	{name: "stop block continues", event: "Stop", effect: "continue_workflow",
		command: `echo '{"decision":"block","reason":"Run the tests again.","systemMessage":"iteration 2"}'`,
		want:    `{"kind":"continue_workflow","reason":"Run the tests again."}`},
	{name: "stop exit 2 continues", event: "Stop", effect: "continue_workflow",
		command: `echo "Tests fail." >&2; exit 2`,
		want:    `{"kind":"continue_workflow","reason":"Tests fail."}`},
	{name: "stop nothing abstains", event: "Stop", effect: "continue_workflow",
		command: `echo "done"`, want: `{"kind":"abstain"}`},
	{name: "session end observes", event: "SessionEnd", effect: "observe",
		command: `echo bye`, want: `{"kind":"observe"}`},

	// The environment Claude Code gives a hook.
	{name: "plugin root, project directory, cwd", event: "PreToolUse", effect: "gate",
		command: `printf '%s|%s|%s|%s' "$(basename "$CLAUDE_PLUGIN_ROOT")" "$(basename "$CLAUDE_PROJECT_DIR")" "$(basename "$PWD")" "$PYTHONDONTWRITEBYTECODE" >&2; exit 2`,
		want:    `{"kind":"deny","reason":"pkg|project|project|1"}`},
	{name: "stdin is the native payload", event: "PreToolUse", effect: "gate",
		command: `cat >&2; exit 2`,
		want:    `{"kind":"deny","reason":"{\"tool_name\":\"Bash\"}"}`},

	// A matcher the adapter applies.
	{name: "filter matches", event: "PreToolUse", effect: "gate", filter: []string{"mcp__github__create_issue", "^mcp__github__.*"},
		command: `exit 2`, want: `{"kind":"deny","reason":"Claude Code hook PreToolUse blocked this (exit status 2)."}`},
	{name: "filter does not match", event: "PreToolUse", effect: "gate", filter: []string{"Bash", "^mcp__github__.*"},
		command: `exit 2`, want: `{"kind":"abstain"}`},
	{name: "a filter grep cannot read runs the hook", event: "PreToolUse", effect: "gate", filter: []string{"Bash", "(unclosed"},
		command: `exit 2`, want: `{"kind":"deny","reason":"Claude Code hook PreToolUse blocked this (exit status 2)."}`},
}

// TestAdapter runs every case through claude-hook.sh under each POSIX
// shell the machine has, the way dispatch runs it: in the package
// directory, with the native payload on stdin and only HOME, PATH and
// TMPDIR in its environment.
func TestAdapter(t *testing.T) {
	shells := []string{"sh"}
	for _, s := range []string{"dash", "bash", "busybox", "posh", "ksh", "mksh", "zsh"} {
		if _, err := exec.LookPath(s); err == nil {
			shells = append(shells, s)
		}
	}
	// Without bash on PATH, the adapter runs the command with sh.
	noBash := t.TempDir()
	for _, tool := range []string{"sh", "awk", "grep", "tr", "mktemp", "rm", "cat", "basename"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(noBash, tool)); err != nil {
			t.Fatal(err)
		}
	}
	shells = append(shells, "sh without bash")
	const limit = 16384
	for _, shell := range shells {
		t.Run(shell, func(t *testing.T) {
			path := os.Getenv("PATH")
			if shell == "sh without bash" {
				shell, path = filepath.Join(noBash, "sh"), noBash
			}
			dir := t.TempDir()
			pkg := filepath.Join(dir, "pkg")
			project := filepath.Join(dir, "project")
			for _, d := range []string{filepath.Join(pkg, "claude-hooks"), project} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(pkg, AdapterFile), Adapter(limit), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, c := range adapterCases {
				cmdFile := "claude-hooks/" + strings.ReplaceAll(c.name, " ", "-") + ".sh"
				if err := os.WriteFile(filepath.Join(pkg, cmdFile), []byte(c.command+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				args := append([]string{AdapterFile, c.event, c.effect, cmdFile, project}, c.filter...)
				if shell == "busybox" {
					args = append([]string{"sh"}, args...)
				}
				cmd := exec.Command(shell, args...)
				cmd.Dir = pkg
				cmd.Env = []string{"HOME=" + dir, "PATH=" + path, "TMPDIR=" + dir}
				cmd.Stdin = strings.NewReader(`{"tool_name":"Bash"}`)
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				got := strings.TrimSuffix(stdout.String(), "\n")
				if c.want == "" {
					if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
						t.Errorf("%s: %v, want exit status 1; stdout %q, stderr %q", c.name, err, got, stderr.String())
					}
				} else {
					if err != nil {
						t.Errorf("%s: %v; stderr %q", c.name, err, stderr.String())
					}
					if got != c.want {
						t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
					}
					checkResult(t, c.name, got, limit)
				}
				if c.stderr != "" && !strings.Contains(stderr.String(), c.stderr) {
					t.Errorf("%s: stderr %q does not say %q", c.name, stderr.String(), c.stderr)
				}
			}
			// Nothing is left in TMPDIR: the file holding the command's
			// stderr is unlinked as soon as it is open.
			if left, _ := filepath.Glob(filepath.Join(dir, "tmp.*")); len(left) > 0 {
				t.Errorf("left in TMPDIR: %v", left)
			}
		})
	}
}

// checkResult holds a result to what dispatch accepts: one JSON object,
// valid UTF-8, a kind and at most one text of at most limit bytes.
func checkResult(t *testing.T, name, out string, limit int) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: result is not UTF-8: %q", name, out)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Errorf("%s: result is not a JSON object: %v", name, err)
		return
	}
	for _, k := range []string{"reason", "context"} {
		if s, ok := r[k].(string); ok && (len(s) > limit || strings.TrimSpace(s) == "" || strings.ContainsRune(s, 0)) {
			t.Errorf("%s: %s of %d bytes, blank or with NUL", name, k, len(s))
		}
	}
}

// TestAdapterLimit: a text over the limit is cut to it, never inside a
// UTF-8 sequence or an escape, so that dispatch accepts the deny rather
// than failing the hook (which under report would let the action through).
func TestAdapterLimit(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "pkg")
	if err := os.MkdirAll(filepath.Join(pkg, "claude-hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	const limit = 64
	if err := os.WriteFile(filepath.Join(pkg, AdapterFile), Adapter(limit), 0o755); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", 100)
	// A raw JSON string is cut by its own length, which its decoded text
	// never exceeds: escapes make the text shorter than the limit.
	for _, c := range []struct {
		name, command string
		min           int
	}{
		{"stderr", `printf '` + long + `' >&2; exit 2`, limit - 1},
		{"raw escapes", "cat <<'EOF'\n" + `{"decision":"block","reason":"` + strings.Repeat(`\u00e9\"`, 30) + `"}` + "\nEOF", 20},
		{"raw UTF-8", "cat <<'EOF'\n" + `{"decision":"block","reason":"` + long + `"}` + "\nEOF", limit - 1},
		{"many lines", `i=0; while [ $i -lt 20000 ]; do echo line $i; i=$((i+1)); done >&2; exit 2`, limit - 8},
	} {
		if err := os.WriteFile(filepath.Join(pkg, "claude-hooks/x.sh"), []byte(c.command+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", AdapterFile, "PreToolUse", "gate", "claude-hooks/x.sh", dir)
		cmd.Dir = pkg
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var r struct{ Kind, Reason string }
		if err := json.Unmarshal(out, &r); err != nil || r.Kind != "deny" {
			t.Fatalf("%s: %s (%v), want a deny", c.name, out, err)
		}
		if len(r.Reason) > limit || len(r.Reason) < c.min || !utf8.ValidString(r.Reason) || strings.Contains(r.Reason, "?") {
			t.Errorf("%s: reason of %d bytes, want at most %d, whole characters: %q", c.name, len(r.Reason), limit, r.Reason)
		}
	}
}

// TestAdapterAWKUnquoted: claude-hook.sh holds the awk program in single
// quotes.
func TestAdapterAWKUnquoted(t *testing.T) {
	if strings.Contains(adapterAWK, "'") {
		t.Fatal("adapter.awk holds a single quote")
	}
	if !strings.Contains(adapterSH, "@AWK@") || !strings.Contains(adapterSH, "@TEXT_LIMIT@") {
		t.Fatal("adapter.sh lost a placeholder")
	}
}
