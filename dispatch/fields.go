package dispatch

import (
	"encoding/json"
	"fmt"
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

// A Source says where a harness keeps one portable field in its native
// payload.
type Source struct {
	Field  string   // portable name: session.id
	Key    string   // top-level native key: session_id
	Type   string   // string, path or boolean
	Events []string // native events it is read on; nil: every event
}

// ExtractFields reads the portable fields of payload, a native JSON object,
// as table says. agentKey names the native key whose presence marks a
// subagent: actor.kind is then "subagent" and actor.id its value, else both
// are "main".
func ExtractFields(event string, payload []byte, table []Source, agentKey string) (Fields, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(payload, &obj); err != nil {
		return nil, fmt.Errorf("native payload is not a JSON object: %v", err)
	}
	if obj == nil {
		return nil, fmt.Errorf("native payload is not a JSON object: null")
	}
	f := make(Fields, len(table)+2)
	for _, s := range table {
		if s.Events != nil && !contains(s.Events, event) {
			continue
		}
		raw, ok := obj[s.Key]
		if !ok {
			continue
		}
		switch s.Type {
		case "boolean":
			var b *bool
			if json.Unmarshal(raw, &b) == nil && b != nil {
				f[s.Field] = *b
			}
		default:
			var str *string
			if json.Unmarshal(raw, &str) == nil && str != nil {
				f[s.Field] = *str
			}
		}
	}
	f["actor.kind"], f["actor.id"] = "main", "main"
	if raw, ok := obj[agentKey]; ok && agentKey != "" {
		var id *string
		if json.Unmarshal(raw, &id) == nil && id != nil && *id != "" {
			f["actor.kind"], f["actor.id"] = "subagent", *id
		}
	}
	return f, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
