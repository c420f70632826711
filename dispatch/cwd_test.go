package dispatch_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/dispatch"
	"dalo/dispatch/dispatchtest"
	"dalo/plan"
)

// TestCwdIsTheHandlers holds draft 0.1's "cwd is currently only
// tool_root … A project directory can be passed as a bound input;
// changing cwd is the handler's explicit responsibility": where the
// harness starts dalo in the project (dalo's working directory, and the
// session's cwd in the payload), a handler that binds session.cwd still
// starts in its staged root, and gets the project only as its argument.
func TestCwdIsTheHandlers(t *testing.T) {
	out := t.TempDir()
	project, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	providers := []string{"claude", "codex"}
	payloads := map[string]map[string]any{} // read before leaving the package directory
	for _, provider := range providers {
		payloads[provider] = recorded(t, provider, "UserPromptSubmit")
	}
	t.Chdir(project)
	for _, provider := range providers {
		h := dispatchtest.Hook{ID: "where", Subject: "prompt", Phase: "before", Effect: "observe",
			Script:   "#!/bin/sh\npwd > " + out + "/cwd\nprintf '%s' \"$1\" > " + out + "/arg\nprintf '{\"kind\":\"observe\"}'\n",
			Argv:     []string{"${input.project}"},
			Inputs:   []plan.PlannedInput{{Name: "project", Type: "path", Required: true}},
			Bindings: []plan.PlannedBinding{{Input: "project", Field: "session.cwd", Type: "path"}}}
		home := t.TempDir()
		p, err := dispatchtest.Install(home, provider, map[string][]dispatchtest.Hook{"UserPromptSubmit": {h}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { writable(home) })
		m := payloads[provider]
		m["cwd"] = project
		res, err := dispatch.Dispatch(dispatch.Request{Home: home, Provider: provider, Event: "UserPromptSubmit", Payload: mustJSON(m), Getenv: getenv})
		if err != nil || res.Exit != 0 {
			t.Fatalf("%s: exit %d, err %v, stderr %s", provider, res.Exit, err, res.Stderr)
		}
		read := func(name string) string {
			data, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatalf("%s: the handler did not run: %v", provider, err)
			}
			return strings.TrimSpace(string(data))
		}
		if got, root := read("cwd"), p.Events["UserPromptSubmit"][0].Tool.Root; got != root {
			t.Errorf("%s: the handler started in %s, want its staged root %s (not the project %s)", provider, got, root, project)
		}
		if got := read("arg"); got != project {
			t.Errorf("%s: the bound project directory reached the handler as %q, want %q", provider, got, project)
		}
	}
}
