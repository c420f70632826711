//go:build unix

package live

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
)

// TestProbeUserChannel runs a Claude session, its stream read as the user
// reads it (streamJSON), in which three probe hooks with policy report and
// error_visibility = "user" fail: a prompt observer, a before and an after
// tool call context hook. Each action goes on; the user is shown each
// diagnostic with the handler's stderr, as "<event>:<matcher> says:"
// lines; the model reads neither. It is the scenario "claude-user-channel".
func TestProbeUserChannel(t *testing.T) {
	t.Parallel()
	harness(t, "claude")
	play(t, "claude", "claude-user-channel")
}

// The Claude tools kit: one fail_closed gate per file tool, its matcher
// naming exactly that tool, bound to tool.name. Each gate records the name
// it was given; the Edit gate denies an edit of a file named edit-denied.
const (
	toolsID      = "tools"
	toolsPkg     = "tools-kit"
	markEditDeny = "TOOLS-EDIT-DENY-71d2"
)

var claudeFileTools = []string{"Read", "Edit", "Glob", "Grep"}

func toolsFiles() map[string]string {
	k := kit{name: toolsPkg, description: "One gate per Claude file tool."}
	for _, tool := range claudeFileTools {
		id := strings.ToLower(tool) + "-gate"
		body := `echo "$1" >> "$LIVE_OUT/` + id + `.argv"
in=$(cat)
`
		if tool == "Edit" {
			body += `case "$in" in
*edit-denied*) echo '{"kind":"deny","reason":"` + markEditDeny + `"}'; exit 0 ;;
esac
`
		}
		k.hooks = append(k.hooks, kitHook{id: id, subject: "tool_call", phase: "before", effect: "gate", policy: "fail_closed",
			tools: []string{tool}, inputs: []string{"tool=string=tool.name"}, env: []string{"PATH", "LIVE_OUT"},
			handler: "#!/bin/sh\n" + body + "echo '{\"kind\":\"abstain\"}'\n"})
	}
	return k.files()
}

// TestProbeClaudeTools runs a Claude session whose model calls Read, Edit,
// Glob and Grep: the gate whose matcher names each tool runs on exactly
// that tool's calls, with the bound tool.name equal to it; the Edit gate's
// deny keeps one edit from changing its file (the model reads the reason),
// while the other edit changes its file.
func TestProbeClaudeTools(t *testing.T) {
	t.Parallel()
	harness(t, "claude")
	w := newWorldFor(t, "claude", func(w *world) fakemodel.Script {
		denied, edited := filepath.Join(w.work, "edit-denied.txt"), filepath.Join(w.work, "edited.txt")
		return fakemodel.Script{
			{Tool: "Read", Input: map[string]any{"file_path": denied}},
			{Tool: "Read", Input: map[string]any{"file_path": edited}},
			{Tool: "Edit", Input: map[string]any{"file_path": denied, "old_string": "old text", "new_string": "new text"}},
			{Tool: "Edit", Input: map[string]any{"file_path": edited, "old_string": "old text", "new_string": "new text"}},
			{Tool: "Glob", Input: map[string]any{"pattern": "*.txt"}},
			{Tool: "Grep", Input: map[string]any{"pattern": "needle", "path": w.work}},
			fakemodel.Say("Done."),
		}
	})
	w.AllowedTools = strings.Join(claudeFileTools, ",")
	w.writeFile(filepath.Join(w.work, "edit-denied.txt"), "old text\n")
	w.writeFile(filepath.Join(w.work, "edited.txt"), "old text\nneedle\n")
	w.installSource(toolsID, toolsPkg, toolsFiles())
	s := w.run("Use the file tools you are given.")

	for _, tool := range claudeFileTools {
		want := tool + "\n"
		if tool == "Read" || tool == "Edit" {
			want += want // two calls each
		}
		if got := w.output(strings.ToLower(tool) + "-gate.argv"); got != want {
			w.failf(s, "%s gate runs (bound tool.name) = %q, want %q", tool, got, want)
		}
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(w.work, name))
		return string(b)
	}
	if got := read("edit-denied.txt"); got != "old text\n" {
		w.failf(s, "Edit gate deny: the denied edit changed the file to %q", got)
	}
	if got := read("edited.txt"); got != "new text\nneedle\n" {
		w.failf(s, "Edit gate abstain: the allowed edit left the file %q, want it edited", got)
	}
	if !w.server.Contains(markEditDeny) {
		w.failf(s, "Edit gate: the deny reason %s did not reach the model", markEditDeny)
	}
	// The tools acted: Read returned the file, Glob and Grep found files.
	for _, c := range []struct {
		n          int
		what, want string
	}{
		{1, "Read", "needle"},
		{4, "Glob", "edit-denied.txt"},
		{5, "Grep", "edited.txt"},
	} {
		if got := toolResult(w.server, callID("claude", c.n)); !strings.Contains(got, c.want) {
			w.failf(s, "%s: its result %q does not hold %q", c.what, got, c.want)
		}
	}
}
