package dispatch

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"dalo/plan"
)

func TestParseResult(t *testing.T) {
	lim := plan.DraftLimits
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
		{`{"kind":"abstain"}`, []string{"observe", "abstain"}, "abstain", ""},
		// Which kinds an effect admits is the caller's (plan.ResultKinds, abstain included).
		{`{"kind":"abstain"}`, []string{"observe"}, "", "result kind abstain does not match the declared effect (admitted: observe)"},
		{`{"kind":"rewrite_input","input":{"command":"echo reviewed"}}`, rewrite, "rewrite_input", ""},
		{`{"kind":"observe"}`, gate, "", "does not match the declared effect"},
		{`{"kind":"add_context","context":"x"}`, gate, "", "does not match the declared effect"},
		{`{"kind":"deny","reason":"a\u0000b"}`, gate, "", "NUL"},
		{`{"kind":"deny","reason":"` + strings.Repeat("r", lim.ResultTextBytes+1) + `"}`, gate, "", fmt.Sprintf("over the %d-byte limit", lim.ResultTextBytes)},
		{`{"kind":"deny","reason":"` + strings.Repeat("r", lim.ResultTextBytes) + `"}`, gate, "deny", ""},
		{`{"kind":"deny","reason":"  "}`, gate, "", "reason is blank: only white space"},
		{`{"kind":"deny","reason":""}`, gate, "", "reason is empty"},
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
		r, err := parseResult([]byte(tt.out), tt.kinds, lim)
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
		_, err := parseResult([]byte(tt.out), kinds, lim)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.out, err)
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("%s: error %v, want %q", tt.out, err, tt.err)
		}
	}
}

// TestParseResultQuotesBounded checks that a diagnostic quotes at most a
// short prefix of whatever the handler wrote: it may reach the model.
func TestParseResultQuotesBounded(t *testing.T) {
	lim := plan.DraftLimits
	huge := strings.Repeat("k", 1<<20)
	for _, out := range []string{
		`{"kind":"` + huge + `"}`,
		`{"kind":"allow","` + huge + `":1}`,
		`{"` + huge + `":1,"` + huge + `":2}`,
		`"` + huge + `"`,
		`{"kind":"deny","reason":"` + huge + `"}`,
		huge,
	} {
		_, err := parseResult([]byte(out), []string{"allow", "deny"}, lim)
		if err == nil {
			t.Fatalf("%.40s: no error", out)
		}
		if len(err.Error()) > 200 {
			t.Errorf("%.40s: diagnostic of %d bytes: %.300s", out, len(err.Error()), err)
		}
	}
	_, err := parseResult([]byte(`{"kind":"`+huge+`"}`), nil, lim)
	if want := `result kind "` + strings.Repeat("k", maxQuoted) + `"… is unknown`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestParseResultShapes checks every result kind against its shape in
// the rules (plan.ResultShapes): the kind with its one key of its type is
// a result, with another key it is not, and a kind the rules have no shape
// for is unknown.
func TestParseResultShapes(t *testing.T) {
	values := map[string]string{plan.ShapeText: `"ok"`, plan.ShapeObject: `{"c":1}`}
	for kind, shape := range plan.ResultShapes {
		whole := `{"kind":"` + kind + `"}`
		if shape.Key != "" {
			whole = `{"kind":"` + kind + `","` + shape.Key + `":` + values[shape.Type] + `}`
		}
		if _, err := parseResult([]byte(whole), []string{kind}, plan.DraftLimits); err != nil {
			t.Errorf("%s: %v", whole, err)
		}
		var m map[string]json.RawMessage
		json.Unmarshal([]byte(whole), &m)
		m["why"] = json.RawMessage(`"x"`)
		extra, _ := json.Marshal(m)
		if _, err := parseResult(extra, []string{kind}, plan.DraftLimits); err == nil || !strings.Contains(err.Error(), `unknown key "why"`) {
			t.Errorf("%s: error %v, want the unknown key", extra, err)
		}
	}
	if _, err := parseResult([]byte(`{"kind":"approve"}`), []string{"approve"}, plan.DraftLimits); err == nil || !strings.Contains(err.Error(), "is unknown") {
		t.Errorf("kind without a shape: error %v", err)
	}
}

// TestComposeBoundsFailure checks that a failure diagnostic reaches the
// model cut to the plan's result_text_bytes, the cut marked.
func TestComposeBoundsFailure(t *testing.T) {
	lim := plan.Limits{ResponseBytes: 64, ResultTextBytes: 100, RewrittenInputBytes: 12}
	for _, policy := range []string{"report", "fail_closed"} {
		h := &plan.PlannedHook{Package: "p", Hook: "h", Effect: "gate", FailurePolicy: policy, ErrorVisibility: "model_and_user"}
		o := compose([]run{{hook: h, failure: strings.Repeat("x", 1<<20)}}, lim)
		notes := o.Context
		if policy == "fail_closed" {
			notes = o.Deny
		}
		if len(notes) != 1 {
			t.Fatalf("%s: outcome %+v", policy, o)
		}
		text := joinNotes(notes)
		if len(text) > 2*lim.ResultTextBytes || !strings.Contains(text, "(truncated)") {
			t.Errorf("%s: %d bytes to the model: %q", policy, len(text), text)
		}
	}
}
