package store

import (
	"slices"
	"testing"

	"dalo/plan"
)

// TestChangedBinds: a refusal names the fields of the binds that changed.
func TestChangedBinds(t *testing.T) {
	tool := plan.ToolBinds{Tool: "guard", Runtime: "executable", Entry: "guard.sh", Argv: []string{"a"}, Env: []string{"PATH"}, Cwd: "tool_root"}
	hook := plan.HookBinds{Hook: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", FailurePolicy: "fail_closed", TimeoutMS: 2000}
	for _, tc := range []struct {
		name          string
		approved, now any
		want          []string
	}{
		{"argv", tool, func() plan.ToolBinds { b := tool; b.Argv = []string{"b"}; return b }(), []string{"argv"}},
		{"env and runtime", tool, func() plan.ToolBinds { b := tool; b.Env = nil; b.Runtime = "node"; return b }(), []string{"env", "runtime"}},
		{"files only", tool, func() plan.ToolBinds {
			b := tool
			b.Files = map[string]plan.FileDigest{"guard.sh": {SHA256: "x"}}
			return b
		}(), []string{"binds"}},
		{"policy and timeout", hook, func() plan.HookBinds { b := hook; b.FailurePolicy = "fail_open"; b.TimeoutMS = 10; return b }(), []string{"failure_policy", "timeout_ms"}},
	} {
		if got := changedBinds(tc.approved, tc.now); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
