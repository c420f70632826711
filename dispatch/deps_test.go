package dispatch_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHotPathDeps keeps the dispatch path free of CUE, of the validator,
// of the store and of the provider tables: it runs on every tool call and
// must start fast, so it reads the native protocol from the plan.
func TestHotPathDeps(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goTool, "list", "-deps", "dalo/dispatch").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "cuelang.org/") || dep == "dalo/engine" || dep == "dalo/cue" || dep == "dalo/store" || dep == "dalo/providers" {
			t.Errorf("the dispatch path imports %s", dep)
		}
	}
}
