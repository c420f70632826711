package dispatch_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHotPathDeps keeps the dispatch path free of CUE, of the validator,
// of the store and of the provider tables: it runs on every tool call and
// must start fast, so it reads the native protocol from the plan. dalo-hook
// is the binary harness entries call, so nothing it links may pull them in
// either: Go initialises every linked package on every start. Nor package
// net, which links cgo, and so the dynamic loader, into every start (about
// a millisecond, bench/dispatch.sh with CGO_ENABLED=0 against without).
func TestHotPathDeps(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	for _, pkg := range []string{"dalo/dispatch", "dalo/cmd/dalo-hook"} {
		out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "cuelang.org/") || dep == "dalo/engine" || dep == "dalo/cue" || dep == "dalo/store" || dep == "dalo/providers" ||
				dep == "net" || dep == "runtime/cgo" {
				t.Errorf("%s imports %s", pkg, dep)
			}
		}
	}
}
