package engine

import (
	"slices"
	"testing"
)

func TestFailurePolicies(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		effect string
		want   []string
		closed string
	}{
		{"observe", []string{"report"}, ""},
		{"replace_output", []string{"report"}, ""},
		{"add_context", []string{"report", "fail_open"}, ""},
		{"gate", []string{"report", "fail_open", "fail_closed"}, "deny"},
		{"rewrite_input", []string{"report", "fail_open", "fail_closed"}, "deny"},
		{"continue_workflow", []string{"report", "fail_open", "fail_closed"}, "continue"},
	} {
		got, closed, err := r.FailurePolicies(c.effect)
		if err != nil || !slices.Equal(got, c.want) || closed != c.closed {
			t.Errorf("FailurePolicies(%s) = %v, %q, %v; want %v, %q", c.effect, got, closed, err, c.want, c.closed)
		}
	}
	if _, _, err := r.FailurePolicies("nonsense"); err == nil {
		t.Error("an unknown effect has failure policies")
	}
}
