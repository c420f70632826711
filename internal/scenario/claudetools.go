package scenario

import (
	"os"
	"path/filepath"
	"strings"

	"dalo/internal/fakemodel"
	"dalo/plan"
)

// The Claude tools kit: one fail_closed gate per file tool, its matcher
// naming exactly that tool, bound to tool.name. Each gate records the name
// it was given; the Edit gate denies an edit of a file named edit-denied.
const (
	toolsID      = "tools"
	toolsPkg     = "tools-kit"
	MarkEditDeny = "TOOLS-EDIT-DENY-71d2"
)

// ClaudeFileTools are Claude Code's file tools the tools kit gates.
var ClaudeFileTools = []string{"Read", "Edit", "Glob", "Grep"}

func toolsFiles() map[string]string {
	k := Kit{Name: toolsPkg, Description: "One gate per Claude file tool."}
	for _, tool := range ClaudeFileTools {
		id := strings.ToLower(tool) + "-gate"
		body := `echo "$1" >> "$LIVE_OUT/` + id + `.argv"
in=$(cat)
`
		if tool == "Edit" {
			body += `case "$in" in
*edit-denied*) echo '{"kind":"deny","reason":"` + MarkEditDeny + `"}'; exit 0 ;;
esac
`
		}
		k.Hooks = append(k.Hooks, KitHook{ID: id, Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailClosed,
			Tools: []string{tool}, Inputs: []string{"tool=string=tool.name"}, Env: []string{"PATH", "LIVE_OUT"},
			Handler: "#!/bin/sh\n" + body + "echo '{\"kind\":\"abstain\"}'\n"})
	}
	return k.Files()
}

// claudeFileToolsGated runs a Claude session whose model calls Read, Edit,
// Glob and Grep: the gate whose matcher names each tool runs on exactly
// that tool's calls, with the bound tool.name equal to it; the Edit gate's
// deny keeps one edit from changing its file (the model reads the reason),
// while the other edit changes its file.
var claudeFileToolsGated = &Scenario{
	Name: "claude-file-tools", Test: "TestProbeClaudeTools", Harnesses: []string{"claude"},
	Script: func(w *World) fakemodel.Script {
		denied, edited := filepath.Join(w.Work, "edit-denied.txt"), filepath.Join(w.Work, "edited.txt")
		return fakemodel.Script{
			{Tool: "Read", Input: map[string]any{"file_path": denied}},
			{Tool: "Read", Input: map[string]any{"file_path": edited}},
			{Tool: "Edit", Input: map[string]any{"file_path": denied, "old_string": "old text", "new_string": "new text"}},
			{Tool: "Edit", Input: map[string]any{"file_path": edited, "old_string": "old text", "new_string": "new text"}},
			{Tool: "Glob", Input: map[string]any{"pattern": "*.txt"}},
			{Tool: "Grep", Input: map[string]any{"pattern": "needle", "path": w.Work}},
			fakemodel.Say("Done."),
		}
	},
	Play: func(w *World, c *Check) error {
		w.AllowedTools = strings.Join(ClaudeFileTools, ",")
		if err := w.WriteFile(filepath.Join(w.Work, "edit-denied.txt"), "old text\n"); err != nil {
			return err
		}
		if err := w.WriteFile(filepath.Join(w.Work, "edited.txt"), "old text\nneedle\n"); err != nil {
			return err
		}
		if _, err := w.InstallSource(toolsID, toolsPkg, toolsFiles()); err != nil {
			return err
		}
		s, err := w.Run("Use the file tools you are given.")
		c.Session = s
		if err != nil {
			c.Failf("the session failed: %v", err)
			return nil
		}
		for _, tool := range ClaudeFileTools {
			want := tool + "\n"
			if tool == "Read" || tool == "Edit" {
				want += want // two calls each
			}
			if got := w.Output(strings.ToLower(tool) + "-gate.argv"); got != want {
				c.Failf("%s gate runs (bound tool.name) = %q, want %q", tool, got, want)
			}
		}
		read := func(name string) string {
			b, _ := os.ReadFile(filepath.Join(w.Work, name))
			return string(b)
		}
		if got := read("edit-denied.txt"); got != "old text\n" {
			c.Failf("Edit gate deny: the denied edit changed the file to %q", got)
		}
		if got := read("edited.txt"); got != "new text\nneedle\n" {
			c.Failf("Edit gate abstain: the allowed edit left the file %q, want it edited", got)
		}
		if !w.Server.Contains(MarkEditDeny) {
			c.Failf("Edit gate: the deny reason %s did not reach the model", MarkEditDeny)
		}
		// The tools acted: Read returned the file, Glob and Grep found files.
		for _, r := range []struct {
			n          int
			what, want string
		}{
			{1, "Read", "needle"},
			{4, "Glob", "edit-denied.txt"},
			{5, "Grep", "edited.txt"},
		} {
			if got := ToolResult(w.Server, CallID("claude", r.n)); !strings.Contains(got, r.want) {
				c.Failf("%s: its result %q does not hold %q", r.what, got, r.want)
			}
		}
		return nil
	},
}
