package dispatch

import (
	"strings"
	"testing"

	"dalo/plan"
)

// TestCapContext checks that the joined model context stays within
// maxContext: notes are dropped whole from the end in hook-identity order,
// and the user is told which hooks' context was dropped.
func TestCapContext(t *testing.T) {
	lim := plan.Limits{ResponseBytes: 1 << 10, ResultTextBytes: 20, RewrittenInputBytes: 12} // maxContext 80
	ctx := func(id string, n int) run {
		return run{hook: &plan.PlannedHook{Package: "p", Hook: id, Effect: "add_context"},
			result: &Result{Kind: "add_context", Text: strings.Repeat("x", n)}}
	}
	tests := []struct {
		name    string
		runs    []run
		kept    []string
		dropped string // "" : the user is told nothing
	}{
		{"fits", []run{ctx("a", 20), ctx("b", 20)}, []string{"p/a", "p/b"}, ""},
		// "[p/a] " is 6 bytes, the separator 2: 26+2+26+2+24 is 80.
		{"exactly", []run{ctx("a", 20), ctx("b", 20), ctx("c", 18)}, []string{"p/a", "p/b", "p/c"}, ""},
		{"one over", []run{ctx("a", 20), ctx("b", 20), ctx("c", 19)}, []string{"p/a", "p/b"}, "p/c"},
		{"several", []run{ctx("a", 19), ctx("b", 19), ctx("c", 19), ctx("d", 1), ctx("e", 1)}, []string{"p/a", "p/b", "p/c"}, "p/d, p/e"},
		// A later small note is dropped too: only whole notes from the end.
		{"from the end", []run{ctx("a", 20), ctx("b", 20), ctx("c", 18), ctx("d", 20), ctx("e", 0)}, []string{"p/a", "p/b", "p/c"}, "p/d, p/e"},
	}
	for _, tt := range tests {
		o := compose(tt.runs, lim)
		if got := strings.Join(sources(o.Context), " "); got != strings.Join(tt.kept, " ") {
			t.Errorf("%s: kept %q, want %q", tt.name, got, tt.kept)
		}
		if n := len(joinNotes(o.Context)); n > maxContext(lim) {
			t.Errorf("%s: %d bytes of context, bound %d", tt.name, n, maxContext(lim))
		}
		user := joinUser(o.User)
		switch {
		case tt.dropped == "" && user != "":
			t.Errorf("%s: user told %q", tt.name, user)
		case tt.dropped != "" && !strings.HasSuffix(user, "the model did not get the context of "+tt.dropped):
			t.Errorf("%s: user told %q, want the context of %s dropped", tt.name, user, tt.dropped)
		}
	}
}
