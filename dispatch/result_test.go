package dispatch

import (
	"fmt"
	"strings"
	"testing"

	"dalo/store"
	"dalo/store/plan"
)

// rulesLimits are the response limits as install copies them into the
// plan, from the rules. The test, not the dispatch path, links CUE here
// (TestHotPathDeps checks the path alone).
func rulesLimits(t *testing.T) plan.Limits {
	t.Helper()
	lim, err := store.Limits()
	if err != nil {
		t.Fatal(err)
	}
	return lim
}

func TestParseResult(t *testing.T) {
	lim := rulesLimits(t)
	gate := []string{"allow", "deny", "abstain"}
	rewrite := []string{"rewrite_input", "abstain"}
	big := `{"kind":"rewrite_input","input":{"c":"` + strings.Repeat("x", lim.RewrittenInputBytes) + `"}}`
	tests := []struct {
		out   string
		kinds []string
		kind  string // want this kind, or
		err   string // this error
	}{
		{`{"kind":"allow"}`, gate, "allow", ""},
		{` {"kind":"deny","reason":"Policy failed."}` + "\n", gate, "deny", ""},
		{`{"kind":"abstain"}`, []string{"observe"}, "abstain", ""},
		{`{"kind":"rewrite_input","input":{"command":"echo reviewed"}}`, rewrite, "rewrite_input", ""},
		{`{"kind":"observe"}`, gate, "", "does not match the declared effect"},
		{`{"kind":"add_context","context":"x"}`, gate, "", "does not match the declared effect"},
		{`{"kind":"deny","reason":"a\u0000b"}`, gate, "", "NUL"},
		{`{"kind":"deny","reason":"` + strings.Repeat("r", lim.ResultTextBytes+1) + `"}`, gate, "", fmt.Sprintf("over the %d-byte limit", lim.ResultTextBytes)},
		{`{"kind":"deny","reason":"` + strings.Repeat("r", lim.ResultTextBytes) + `"}`, gate, "deny", ""},
		{`{"kind":"deny","reason":"  "}`, gate, "", "reason is empty"},
		{`{"kind":"deny"}`, gate, "", "has no reason"},
		{`{"kind":"deny","reason":7}`, gate, "", "reason is not a string"},
		{`{"kind":"allow","extra":1}`, gate, "", `unknown key "extra"`},
		{`{"kind":"allow","kind":"deny"}`, gate, "", `key "kind" twice`},
		{`{"kind":"allow"}{"kind":"deny","reason":"x"}`, gate, "", "data after its JSON object"},
		{`{"kind":"allow"} trailing`, gate, "", "data after its JSON object"},
		{`{"kind":`, gate, "", "not JSON"},
		{``, gate, "", "stdout is empty"},
		{`[{"kind":"allow"}]`, gate, "", "not a JSON object"},
		{`{"kind":"maybe"}`, gate, "", `kind "maybe" is unknown`},
		{`{"reason":"x"}`, gate, "", "has no kind"},
		{`{"kind":"rewrite_input","input":"echo"}`, rewrite, "", "input is not a JSON object"},
		{big, rewrite, "", fmt.Sprintf("over the %d-byte limit of a rewritten input", lim.RewrittenInputBytes)},
		{"{\"kind\":\"allow\"}\xff", gate, "", "not valid UTF-8"},
	}
	for _, tt := range tests {
		name := tt.out
		if len(name) > 60 {
			name = name[:60]
		}
		r, err := ParseResult([]byte(tt.out), tt.kinds, lim)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: unexpected error %v", name, err)
		case tt.err == "" && r.Kind != tt.kind:
			t.Errorf("%s: kind %s, want %s", name, r.Kind, tt.kind)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: error %v, want one containing %q", name, err, tt.err)
		}
	}
}

// TestParseResultLimits checks that the limits are the plan's, not numbers
// of the dispatcher's own.
func TestParseResultLimits(t *testing.T) {
	lim := plan.Limits{ResponseBytes: 64, ResultTextBytes: 5, RewrittenInputBytes: 12}
	tests := []struct {
		out, err string
	}{
		{`{"kind":"deny","reason":"12345"}`, ""},
		{`{"kind":"deny","reason":"123456"}`, "result reason is 6 bytes, over the 5-byte limit"},
		{`{"kind":"add_context","context":"123456"}`, "result context is 6 bytes, over the 5-byte limit"},
		{`{"kind":"rewrite_input","input":{"c":"1234"}}`, ""},
		{`{"kind":"rewrite_input","input":{"c":"12345"}}`, "result input is 13 bytes, over the 12-byte limit of a rewritten input"},
	}
	kinds := []string{"deny", "add_context", "rewrite_input"}
	for _, tt := range tests {
		_, err := ParseResult([]byte(tt.out), kinds, lim)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.out, err)
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("%s: error %v, want %q", tt.out, err, tt.err)
		}
	}
}
