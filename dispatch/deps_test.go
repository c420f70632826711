package dispatch_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHotPathDeps keeps the dispatch path free of CUE and of the
// validator: it runs on every tool call and must start fast.
func TestHotPathDeps(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goTool, "list", "-deps", "dalo/dispatch", "dalo/providers/claude", "dalo/providers/codex").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "cuelang.org/") || dep == "dalo/engine" || dep == "dalo/cue" || dep == "dalo/store" || dep == "dalo/providers" {
			t.Errorf("the dispatch path imports %s", dep)
		}
	}
}
