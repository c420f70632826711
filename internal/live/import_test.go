//go:build unix

package live

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"dalo/internal/fakemodel"
)

// TestImportClaudePlugin imports two real Claude Code plugins
// (testdata/claude-plugins, Apache-2.0) with 'dalo import claude-plugin' and
// runs them through dalo on each harness, their own scripts behind the
// adapter import writes: explanatory-output-style's SessionStart context
// reaches the model, and hookify's Python PreToolUse gate, with the rule
// the plugin ships as an example, denies rm -rf: the command does not run
// and hookify's message reaches the model as the reason. On Codex, install
// records Codex's own trust in dalo's entries (--trust), as a user would.
// Not on Gemini CLI: hookify's scripts read Claude Code's tool names
// (tool_name == 'Bash' in hooks/pretooluse.py), and Gemini CLI's shell is
// run_shell_command, so its bash rules never fire there.
func TestImportClaudePlugin(t *testing.T) {
	t.Parallel()
	needs(t, probed...) // skip once, not per case
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("hookify's hooks run python3, which is not on PATH")
	}
	plugins, err := filepath.Abs("../../testdata/claude-plugins")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probed {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, p, fakemodel.Script{
				fakemodel.Run("rm -rf build"),
				fakemodel.Say("The build directory stays."),
			})
			src := filepath.Join(w.root, "src")
			w.dalo("init", src)
			for _, name := range []string{"explanatory-output-style", "hookify"} {
				w.dalo("import", "claude-plugin", filepath.Join(plugins, name), "--into", src)
			}
			w.dalo("source", "add", "imported", src)
			for _, name := range []string{"explanatory-output-style", "hookify"} {
				ref := "imported:" + name
				w.dalo("plugin", "approve", ref, "--provider", p, "--all", "--yes")
				args := []string{"plugin", "install", ref, "--provider", p}
				if p == "codex" {
					args = append(args, "--trust")
				}
				w.dalo(args...)
			}
			w.dalo("doctor")
			rule, err := os.ReadFile(filepath.Join(plugins, "hookify/examples/dangerous-rm.local.md"))
			if err != nil {
				t.Fatal(err)
			}
			w.writeFile(filepath.Join(w.work, ".claude", "hookify.dangerous-rm.local.md"), string(rule))
			w.writeFile(filepath.Join(w.work, "build", "keep"), "")

			s := w.run("Clean the build directory.")
			if !w.server.Contains("You are in 'explanatory' output style mode") {
				w.failf(s, "explanatory-output-style: its SessionStart context did not reach the model")
			}
			if !w.exists("build/keep") {
				w.failf(s, "hookify: rm -rf build ran")
			}
			if !w.server.Contains("Dangerous rm command detected!") {
				w.failf(s, "hookify: its deny message did not reach the model")
			}
		})
	}
}
