package providers_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"dalo/dispatch"
	"dalo/providers"
	"dalo/store"
)

// TestOutputsAreChannels keeps the two views of a table's native protocol
// one rule: every output a row states for a single hook (each result kind
// of each supported effect, each supported failure delivery) must be
// exactly what the dispatcher renders from the event's channels for that
// hook's outcome. A row that says one thing while dispatch does another
// fails here, whichever is wrong.
func TestOutputsAreChannels(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	const src = "p/h"
	note := func(text string, failure bool) []dispatch.Note {
		return []dispatch.Note{{Source: src, Text: text, Failure: failure}}
	}
	joined := func(text string) string { return "[" + src + "] " + text }
	input := json.RawMessage(`{"command":"echo reviewed"}`)
	output := json.RawMessage(`{"stdout":"reviewed"}`)
	checked := 0
	for _, tb := range ts.All() {
		for s, phases := range tb.Rows {
			for p, r := range phases {
				if r.Status != providers.Supported {
					continue
				}
				n, err := store.NativeOf(tb, r.NativeEvent)
				if err != nil {
					t.Fatal(err)
				}
				check := func(what string, o providers.NativeOutput, oc *dispatch.Outcome, vals map[string]any) {
					t.Helper()
					checked++
					want, wantErr, wantExit, err := o.Render(vals)
					if err != nil {
						t.Fatalf("%s %s/%s %s: %v", tb.Key(), s, p, what, err)
					}
					if wantErr != "" && !strings.HasSuffix(wantErr, "\n") {
						wantErr += "\n"
					}
					got := dispatch.Render(&n, oc)
					if !sameJSON(t, got.Stdout, want) || string(got.Stderr) != wantErr || got.Exit != wantExit {
						t.Errorf("%s %s/%s %s: the row says\n  stdout %s  stderr %q exit %d\nthe channels of %s render\n  stdout %s  stderr %q exit %d",
							tb.Key(), s, p, what, want, wantErr, wantExit, r.NativeEvent, got.Stdout, got.Stderr, got.Exit)
					}
				}
				for e, ef := range r.Effects {
					if ef.Status != providers.Supported {
						continue
					}
					for k, o := range ef.Outputs {
						oc := &dispatch.Outcome{}
						switch k {
						case "add_context":
							oc.Context = note("context", false)
						case "deny":
							oc.Deny = note("reason", false)
						case "continue_workflow":
							oc.Continue = note("reason", false)
						case "rewrite_input":
							oc.UpdatedInput = input
						case "replace_output":
							oc.UpdatedOutput = output
						}
						check(e+" "+k, o, oc, map[string]any{
							"$context": joined("context"), "$reason": joined("reason"),
							"$input": input, "$output": output,
						})
					}
				}
				gate := p == "before" && (s == "prompt" || s == "tool_call")
				stop := s == "workflow" && p == "stop"
				for pol, vs := range r.Failures {
					for vis := range vs {
						o, ok := tb.FailureOutput(s, p, pol, vis)
						if !ok {
							continue
						}
						// One diagnostic text stands for the user's and the
						// model's, as the row's $diagnostic does.
						diag := joined("diagnostic")
						model := "diagnostic"
						if vis == "user" {
							model = "generic"
						}
						oc := &dispatch.Outcome{User: []string{diag}}
						switch {
						case pol == "fail_closed" && gate:
							// A deny reason the user alone reads carries
							// the user's diagnostic (user_only).
							oc.Deny = []dispatch.Note{{Source: src, Text: model, UserText: diag}}
						case pol == "fail_closed" && stop:
							oc.Continue = note(model, false)
						case vis == "model_and_user":
							oc.Context = note("diagnostic", true)
						}
						check(pol+" "+vis, o, oc, map[string]any{"$diagnostic": diag, "$generic": joined("generic")})
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d outputs checked; the walk is broken", checked)
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
