package dispatch

import (
	"strings"
	"testing"
)

func TestParseResult(t *testing.T) {
	gate := []string{"allow", "deny", "abstain"}
	rewrite := []string{"rewrite_input", "abstain"}
	big := `{"kind":"rewrite_input","input":{"c":"` + strings.Repeat("x", MaxRewriteInput) + `"}}`
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
		{`{"kind":"deny","reason":"` + strings.Repeat("r", MaxText+1) + `"}`, gate, "", "over the 16384-byte limit"},
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
		{big, rewrite, "", "over the 1048576-byte limit"},
		{"{\"kind\":\"allow\"}\xff", gate, "", "not valid UTF-8"},
	}
	for _, tt := range tests {
		name := tt.out
		if len(name) > 60 {
			name = name[:60]
		}
		r, err := ParseResult([]byte(tt.out), tt.kinds)
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
