package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"dalo/internal/fakemodel"
	"dalo/plan"
	"dalo/providers"
)

// table returns the shipped table the world's runs prove (Machine.Table).
func (w *World) table() (*providers.Table, error) {
	if w.Table == "" {
		return nil, fmt.Errorf("the world names no table to prove")
	}
	ts, err := providers.Load()
	if err != nil {
		return nil, err
	}
	return ts.Resolve(w.Table)
}

// GeminiOffered lists the tools Gemini CLI offered the model in its
// requests: the names of their function declarations.
func GeminiOffered(srv *fakemodel.Server) []string {
	seen := map[string]bool{}
	var names []string
	for _, q := range srv.Requests() {
		tools, _ := q.JSON["tools"].([]any)
		for _, tl := range tools {
			decls, _ := tl.(map[string]any)["functionDeclarations"].([]any)
			for _, d := range decls {
				if n, _ := d.(map[string]any)["name"].(string); n != "" && !seen[n] {
					seen[n] = true
					names = append(names, n)
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// geminiFileTools runs a session whose model calls Gemini CLI's other file
// tools, each once: an observer before and one after the call, matching
// all of them by their native names, see each with its name, in order,
// and the edit the replace tool makes is done. The tools Gemini CLI
// offered the model are exactly the table's.
var geminiFileTools = &Scenario{
	Name: "gemini-file-tools", Test: "TestMatrixGemini/file_tools", Harnesses: []string{"gemini"},
	Script: func(w *World) fakemodel.Script {
		return fakemodel.Script{
			{Tool: "glob", Input: map[string]any{"pattern": "*.txt"}},
			{Tool: "grep_search", Input: map[string]any{"pattern": "GM-NEEDLE"}},
			{Tool: "list_directory", Input: map[string]any{"dir_path": w.Work}},
			{Tool: "replace", Input: map[string]any{"file_path": filepath.Join(w.Work, "gm-edit.txt"), "old_string": "before-edit",
				"new_string": "after-edit", "instruction": "Replace before-edit with after-edit."}},
			fakemodel.Say(GeminiMatrixFinal),
		}
	},
	Play: func(w *World, c *Check) error {
		tb, err := w.table()
		if err != nil {
			return err
		}
		names := []string{"glob", "grep_search", "list_directory", "replace"}
		if err := w.WriteFile(filepath.Join(w.Work, "gm-edit.txt"), "GM-NEEDLE before-edit\n"); err != nil {
			return err
		}
		tools := strings.Join(names, ",")
		hooks := []MatrixHook{
			{ID: "files-before", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectObserve, Policy: plan.PolicyReport, Visibility: plan.VisibilityUser,
				Tools: tools, Fields: []string{"tool.name"}, Result: `{"kind":"observe"}`},
			{ID: "files-after", Subject: plan.SubjectToolCall, Phase: plan.PhaseAfter, Effect: plan.EffectObserve, Policy: plan.PolicyReport, Visibility: plan.VisibilityUser,
				Tools: tools, Fields: []string{"tool.name"}, Result: `{"kind":"observe"}`},
		}
		if _, ok, err := runMatrix(w, c, GeminiMatrixID, GeminiMatrixPkg, GeminiMatrixFiles(hooks), "Look at the files and edit one."); !ok {
			return err
		}
		var want []string
		for n := range tb.Tools {
			want = append(want, n)
		}
		slices.Sort(want)
		if got := GeminiOffered(w.Server); !slices.Equal(got, want) {
			c.Failf("Gemini CLI offered the tools %q; the table lists %q", got, want)
		}
		for _, id := range []string{"files-before", "files-after"} {
			var got []string
			for _, argv := range w.MatrixRuns(id) {
				got = append(got, strings.Join(argv, " "))
			}
			if strings.Join(got, ",") != tools {
				c.Failf("%s saw the tools %q, want %q", id, got, names)
			}
		}
		if b, err := os.ReadFile(filepath.Join(w.Work, "gm-edit.txt")); err != nil || string(b) != "GM-NEEDLE after-edit\n" {
			c.Failf("replace: the file holds %q (%v), want the edit made", b, err)
		}
		return nil
	},
}
