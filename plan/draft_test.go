package plan

import (
	"maps"
	"slices"
	"testing"
)

// TestDraftEffects pins, for every effect, the result kinds a handler may
// answer and the failure policies a hook may declare, written here from
// draft 0.1's sentences (and docs/design.md §3, which restores the table
// the draft lost) rather than read from the CUE known.go is generated
// from: a change to the rules that the draft does not make fails here.
func TestDraftEffects(t *testing.T) {
	// "Results must match the declared effect; abstain is the explicit
	// no-op for any effect."
	wantKinds := map[string][]string{
		"observe":           {"abstain", "observe"},
		"add_context":       {"abstain", "add_context"},
		"gate":              {"abstain", "allow", "deny"},
		"rewrite_input":     {"abstain", "rewrite_input"},
		"replace_output":    {"abstain", "replace_output"},
		"continue_workflow": {"abstain", "continue_workflow"},
	}
	// "failure_policy is report, fail_open, or fail_closed; the last is
	// valid only for pre-action enforcement or completion control.
	// Observations and output replacements require report."
	wantPolicies := map[string][]string{
		"observe":           {"report"},
		"add_context":       {"fail_open", "report"},
		"gate":              {"fail_closed", "fail_open", "report"},
		"rewrite_input":     {"fail_closed", "fail_open", "report"},
		"replace_output":    {"report"},
		"continue_workflow": {"fail_closed", "fail_open", "report"},
	}
	if got, want := slices.Sorted(maps.Keys(ResultKinds)), slices.Sorted(maps.Keys(wantKinds)); !slices.Equal(got, want) {
		t.Errorf("effects with result kinds %v, want %v", got, want)
	}
	if got, want := slices.Sorted(maps.Keys(FailurePolicies)), slices.Sorted(maps.Keys(wantPolicies)); !slices.Equal(got, want) {
		t.Errorf("effects with failure policies %v, want %v", got, want)
	}
	for effect, want := range wantKinds {
		if got := slices.Sorted(slices.Values(ResultKinds[effect])); !slices.Equal(got, want) {
			t.Errorf("%s answers %v, want %v", effect, got, want)
		}
	}
	for effect, want := range wantPolicies {
		if got := slices.Sorted(slices.Values(FailurePolicies[effect])); !slices.Equal(got, want) {
			t.Errorf("%s admits policies %v, want %v", effect, got, want)
		}
	}
}
