package plan

import (
	"reflect"
	"testing"
)

// TestRules pins what the rules compile to (known.go) against the draft,
// written here rather than read from the same CUE: the result shapes, what
// fail_closed does per effect, and the interpreters.
func TestRules(t *testing.T) {
	wantShapes := map[string]ResultShape{
		"observe": {}, "abstain": {}, "allow": {},
		"add_context":       {Key: "context", Type: ShapeText},
		"deny":              {Key: "reason", Type: ShapeText},
		"continue_workflow": {Key: "reason", Type: ShapeText},
		"rewrite_input":     {Key: "input", Type: ShapeObject},
		"replace_output":    {Key: "output", Type: ShapeObject},
	}
	if !reflect.DeepEqual(ResultShapes, wantShapes) {
		t.Errorf("result shapes %v, want %v", ResultShapes, wantShapes)
	}
	wantFail := map[string]string{"gate": FailDeny, "rewrite_input": FailDeny, "continue_workflow": FailContinue}
	if !reflect.DeepEqual(FailClosed, wantFail) {
		t.Errorf("fail_closed %v, want %v", FailClosed, wantFail)
	}
	for effect := range FailClosed {
		if !reflect.DeepEqual(FailurePolicies[effect], []string{"report", "fail_open", "fail_closed"}) {
			t.Errorf("%s admits %v, want report, fail_open, fail_closed", effect, FailurePolicies[effect])
		}
	}
	want := map[string]Runtime{"executable": {}, "node": {Interpreter: "node"}, "python": {Interpreter: "python3", Args: []string{"-E", "-s", "-B"}}}
	if !reflect.DeepEqual(Runtimes, want) {
		t.Errorf("runtimes %v, want %v", Runtimes, want)
	}
}

// TestDraftLimits pins the response limits to the draft's numbers: "Dalo
// limits a handler response to 4 MiB, text fields to 16 KiB without NUL
// characters, and a rewritten input object to 1 MiB."
func TestDraftLimits(t *testing.T) {
	got := [3]int{DraftLimits.ResponseBytes, DraftLimits.ResultTextBytes, DraftLimits.RewrittenInputBytes}
	if want := [3]int{4 << 20, 16 << 10, 1 << 20}; got != want {
		t.Errorf("response, result text and rewritten input limits %v, the draft says %v", got, want)
	}
}

// A tool runs where the platforms it declares include the system's; one
// that declares none is not held back; on a system the rules do not name,
// only such a tool runs.
func TestToolRunsOn(t *testing.T) {
	for _, tc := range []struct {
		platforms []string
		goos      string
		want      bool
	}{
		{nil, "linux", true},
		{nil, "darwin", true},
		{nil, "freebsd", true},
		{[]string{"macos"}, "linux", false},
		{[]string{"macos"}, "darwin", true},
		{[]string{"linux"}, "darwin", false},
		{[]string{"linux"}, "linux", true},
		{[]string{"macos", "linux"}, "linux", true},
		{[]string{"linux", "linux"}, "linux", true},
		{[]string{"linux", "macos"}, "freebsd", false},
		{[]string{"windows"}, "windows", false},
	} {
		if got := ToolRunsOn(tc.platforms, tc.goos); got != tc.want {
			t.Errorf("ToolRunsOn(%q, %s) = %t, want %t", tc.platforms, tc.goos, got, tc.want)
		}
	}
}
