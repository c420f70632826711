package scenario

import (
	"encoding/json"
	"fmt"
	"strings"

	"dalo/internal/fakemodel"
)

// What the model server received, read the way the scenarios check it.

// CallID is the id the fake model gives its n-th tool call on harness.
func CallID(harness string, n int) string {
	if harness == "claude" {
		return fmt.Sprintf("toolu_fake_%d", n)
	}
	return fmt.Sprintf("call_fake_%d", n)
}

// ModelText returns the decoded string of request q that holds substr,
// or "".
func ModelText(q fakemodel.Request, substr string) string {
	var find func(v any) string
	find = func(v any) string {
		switch v := v.(type) {
		case string:
			if strings.Contains(v, substr) {
				return v
			}
		case map[string]any:
			for _, e := range v {
				if s := find(e); s != "" {
					return s
				}
			}
		case []any:
			for _, e := range v {
				if s := find(e); s != "" {
					return s
				}
			}
		}
		return ""
	}
	return find(q.JSON)
}

// ToolResult returns what the model last read as the result of Claude
// Code's tool call id (an Anthropic tool_result), as JSON, or "".
func ToolResult(srv *fakemodel.Server, id string) string {
	var found string
	for _, q := range srv.Requests() {
		msgs, _ := q.JSON["messages"].([]any)
		for _, m := range msgs {
			m, _ := m.(map[string]any)
			content, _ := m["content"].([]any)
			for _, c := range content {
				if c, _ := c.(map[string]any); c["type"] == "tool_result" && c["tool_use_id"] == id {
					b, _ := json.Marshal(c["content"])
					found = string(b)
				}
			}
		}
	}
	return found
}

// Turns returns the requests that asked the model for a turn of the
// session: a POST to the harness's model endpoint offering tools (what a
// harness asks besides, a title or a summary, offers none).
func Turns(srv *fakemodel.Server) []fakemodel.Request {
	var qs []fakemodel.Request
	for _, q := range srv.Requests() {
		tools, _ := q.JSON["tools"].([]any)
		turn := strings.HasSuffix(q.Path, "/messages") || strings.HasSuffix(q.Path, "/responses") || strings.HasSuffix(q.Path, ":streamGenerateContent")
		if q.Method == "POST" && turn && len(tools) > 0 {
			qs = append(qs, q)
		}
	}
	return qs
}
