package dispatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"dalo/plan"
)

// Fuzz targets for what dispatch parses from untrusted bytes: a handler's
// stdout and a harness's native payload. Their seed corpora, and whatever
// a run finds, are regression cases under testdata/fuzz.

// FuzzParseResult: whatever a handler writes, parseResult accepts exactly
// one JSON object of a declared result shape within the limits, and its
// error never quotes more than a few dozen characters of the output (under
// model_and_user the error is model context).
func FuzzParseResult(f *testing.F) {
	kinds := []string{"observe", "allow", "deny", "add_context", "continue_workflow", "rewrite_input", "replace_output"}
	lim := plan.Limits{ResponseBytes: 1 << 10, ResultTextBytes: 64, RewrittenInputBytes: 64}
	f.Add([]byte(`{"kind":"allow"}`))
	f.Add([]byte(`{"kind":"deny","reason":"no \u00e9"}`))
	f.Fuzz(func(t *testing.T, out []byte) {
		r, err := parseResult(out, kinds, lim)
		// What it reads by hand, encoding/json reads the same.
		if want, werr := decodeResult(out, kinds, lim); !reflect.DeepEqual(r, want) || fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Fatalf("%q: parseResult %#v, %v; by encoding/json %#v, %v", out, r, err, want, werr)
		}
		if err != nil {
			if n := len(err.Error()); n > 400 {
				t.Fatalf("a %d-byte error quotes the output: %.200q", n, err)
			}
			return
		}
		var obj map[string]json.RawMessage
		if !json.Valid(out) || json.Unmarshal(out, &obj) != nil || obj == nil {
			t.Fatalf("accepted %q, which is not one JSON object", out)
		}
		var kind string
		if json.Unmarshal(obj["kind"], &kind) != nil || kind != r.Kind || kind != "abstain" && !slices.Contains(kinds, kind) {
			t.Fatalf("accepted %q as kind %q", out, r.Kind)
		}
		key := plan.ResultShapes[kind].Key
		for k := range obj {
			if k != "kind" && k != key {
				t.Fatalf("accepted %q with key %q", out, k)
			}
		}
		switch plan.ResultShapes[kind].Type {
		case plan.ShapeText:
			var text string
			json.Unmarshal(obj[key], &text)
			if r.Text != text || len(text) > lim.ResultTextBytes || strings.ContainsRune(text, 0) || strings.TrimSpace(text) == "" || !utf8.ValidString(text) {
				t.Fatalf("accepted %q with text %q", out, r.Text)
			}
		case plan.ShapeObject:
			var b bytes.Buffer
			json.Compact(&b, obj[key])
			if !bytes.Equal(r.JSON, b.Bytes()) || r.JSON[0] != '{' || key == "input" && len(r.JSON) > lim.RewrittenInputBytes {
				t.Fatalf("accepted %q with %s %s", out, key, r.JSON)
			}
		default:
			if r.Text != "" || r.JSON != nil {
				t.Fatalf("accepted %q with a value for kind %s", out, kind)
			}
		}
	})
}

// FuzzExtractFields: whatever the harness sends, extractFields reads a
// portable field exactly when its native key holds a value of its type,
// and errors only on a payload that is not one JSON object.
func FuzzExtractFields(f *testing.F) {
	n := &plan.Native{
		Fields: []plan.Field{
			{Field: "session.id", Key: "session_id", Type: "string"},
			{Field: "session.cwd", Key: "cwd", Type: "path"},
			{Field: "tool.name", Key: "tool_name", Type: "string"},
			{Field: "workflow.already_continued", Key: "stop_hook_active", Type: "boolean"},
		},
		ActorKey: "agent_id",
	}
	f.Add([]byte(`{"session_id":"s","cwd":"/w\u00e9","tool_name":"Bash","tool_input":{"command":"echo \"a\"\n"},"stop_hook_active":true,"agent_id":"x"}`))
	f.Add([]byte(`{"session_id":"a","session_id":"b","stop_hook_active":"true","agent_id":null}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		fields, err := extractFields(payload, n)
		var obj map[string]json.RawMessage
		isObject := json.Unmarshal(payload, &obj) == nil && obj != nil
		if (err == nil) != isObject {
			t.Fatalf("payload %q: error %v, but a JSON object: %t", payload, err, isObject)
		}
		if err != nil {
			return
		}
		for _, s := range n.Fields {
			var want any
			if s.Type == "boolean" {
				var b *bool
				if json.Unmarshal(obj[s.Key], &b) == nil && b != nil {
					want = *b
				}
			} else {
				var str *string
				if json.Unmarshal(obj[s.Key], &str) == nil && str != nil {
					want = *str
				}
			}
			if got, ok := fields[s.Field]; ok != (want != nil) || ok && got != want {
				t.Fatalf("payload %q: %s is %v (%t), want %v", payload, s.Field, got, ok, want)
			}
		}
		kind, id := fields["actor.kind"], fields["actor.id"]
		if !(kind == "main" && id == "main" || kind == "subagent" && id != "" && id != nil) {
			t.Fatalf("payload %q: actor %v %v", payload, kind, id)
		}
	})
}
