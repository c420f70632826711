package fakemodel

import (
	"fmt"
	"net/http"
	"strings"
)

// anthropic answers the Anthropic Messages API as Claude Code uses it.
// shell, when set, is the harness's shell tool, called instead of Bash.
type anthropic struct{ shell string }

func (a anthropic) serve(w http.ResponseWriter, req *Request, script Script, seq int) {
	switch {
	case req.Method == http.MethodPost && strings.HasSuffix(req.Path, "/messages/count_tokens"):
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 1})
		return
	case req.Method == http.MethodPost && strings.HasSuffix(req.Path, "/messages"):
	default:
		// Claude Code may probe other endpoints; an empty object is a
		// harmless answer to all of them.
		writeJSON(w, http.StatusOK, map[string]any{})
		return
	}
	if req.JSON == nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{
			"type":  "error",
			"error": map[string]any{"type": "invalid_request_error", "message": errNotJSON.Error()},
		})
		return
	}
	n := anthropicToolResults(req.JSON)
	tools, _ := req.JSON["tools"].([]any)
	st := script.step(n, len(tools) > 0)
	model, _ := req.JSON["model"].(string)
	if model == "" {
		model = "claude-fake"
	}
	msgID := fmt.Sprintf("msg_fake_%d", seq)

	var block map[string]any // the content block, complete
	stop := "end_turn"
	if st.isCall() {
		name, input := st.Tool, st.Input
		switch {
		case name == "" && a.shell != "":
			name, input = a.shell, map[string]any{"command": st.Command, "description": "Run the command."}
		case name == "":
			name, input = "Bash", map[string]any{"command": st.Command}
		}
		block = map[string]any{
			"type":  "tool_use",
			"id":    fmt.Sprintf("toolu_fake_%d", n),
			"name":  name,
			"input": input,
		}
		if input == nil {
			block["input"] = map[string]any{}
		}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": st.text()}
	}
	usage := map[string]any{"input_tokens": 1, "output_tokens": 1}

	if stream, _ := req.JSON["stream"].(bool); !stream {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content":     []any{block},
			"stop_reason": stop, "stop_sequence": nil,
			"usage": usage,
		})
		return
	}

	sse := newSSE(w)
	sse.event("message_start", map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": usage,
		},
	})
	// The block starts empty and is filled by deltas, as a real stream
	// does; the harness must assemble it to see the step.
	var start, delta map[string]any
	if block["type"] == "tool_use" {
		start = map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": inputJSON(block["input"])}
	} else {
		start = map[string]any{"type": "text", "text": ""}
		delta = map[string]any{"type": "text_delta", "text": block["text"]}
	}
	sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
	sse.event("ping", map[string]any{"type": "ping"})
	sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse.event("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 1},
	})
	sse.event("message_stop", map[string]any{"type": "message_stop"})
}

// anthropicToolResults counts the tool_result blocks in a Messages request.
func anthropicToolResults(body map[string]any) int {
	n := 0
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		m, _ := m.(map[string]any)
		content, _ := m["content"].([]any)
		for _, c := range content {
			if c, _ := c.(map[string]any); c["type"] == "tool_result" {
				n++
			}
		}
	}
	return n
}
