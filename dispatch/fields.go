package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"dalo/plan"
)

// Fields are the portable event fields of one native payload, by name
// (session.id, tool.name, workflow.already_continued, ...). A value is a
// string (string and path fields) or a bool. A field the payload lacks, or
// gives as null or with the wrong JSON type, is absent: a hook that binds it
// fails under its policy.
type Fields map[string]any

// String returns the string field name and whether it is present.
func (f Fields) String(name string) (string, bool) {
	s, ok := f[name].(string)
	return s, ok
}

// extractFields reads the portable fields of payload, a native JSON object,
// where the event's native protocol n says they are. actor.kind is
// "subagent" and actor.id the value of n.ActorKey when the payload has it
// as a non-empty string; else both are "main".
func extractFields(payload []byte, n *plan.Native) (Fields, error) {
	get, err := payloadValues(payload, func(key string) bool {
		return key == n.ActorKey && key != "" || slices.ContainsFunc(n.Fields, func(f plan.Field) bool { return f.Key == key })
	})
	if err != nil {
		return nil, err
	}
	f := make(Fields, len(n.Fields)+2)
	for _, s := range n.Fields {
		switch v := get(s.Key).(type) {
		case bool:
			if s.Type == "boolean" {
				f[s.Field] = v
			}
		case string:
			if s.Type != "boolean" {
				f[s.Field] = v
			}
		}
	}
	f["actor.kind"], f["actor.id"] = "main", "main"
	if n.ActorKey != "" {
		if id, ok := get(n.ActorKey).(string); ok && id != "" {
			f["actor.kind"], f["actor.id"] = "subagent", id
		}
	}
	return f, nil
}

// payloadValues reads the native payload, which must be one JSON object,
// and returns what each top-level key want asks for holds, decoded as
// into an any (nil when the key is missing). It reads by hand
// (plan.DecodeObject, which only checks the other values: a tool's input
// may be a file of megabytes), and with encoding/json what that cannot
// read, decoding only the keys asked for.
func payloadValues(payload []byte, want func(key string) bool) (func(key string) any, error) {
	if obj, ok := plan.DecodeObject(payload, want); ok {
		return func(key string) any { return obj[key] }, nil
	}
	obj, err := payloadObject(payload)
	if err != nil {
		return nil, err
	}
	return func(key string) any {
		var v any
		if raw, ok := obj[key]; ok && json.Unmarshal(raw, &v) == nil {
			return v
		}
		return nil
	}, nil
}

// payloadObject decodes the native payload, which must be one JSON object;
// when it is not, it says in the user's terms what it is instead.
func payloadObject(payload []byte) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	err := json.Unmarshal(payload, &obj)
	if err == nil && obj != nil {
		return obj, nil
	}
	var v any
	if err := json.Unmarshal(payload, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("the native payload is not JSON: %v (at byte %d)", se, se.Offset)
		}
		return nil, fmt.Errorf("the native payload is not JSON: %v", err)
	}
	what := "null"
	switch v.(type) {
	case []any:
		what = "an array"
	case string:
		what = "a string"
	case float64:
		what = "a number"
	case bool:
		what = "a boolean"
	}
	return nil, fmt.Errorf("the native payload is %s, not a JSON object", what)
}
