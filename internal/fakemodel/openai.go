package fakemodel

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// openAI answers the OpenAI Responses API as Codex uses it.
type openAI struct{}

func (openAI) serve(w http.ResponseWriter, req *Request, script Script, seq int) {
	switch {
	case req.Method == http.MethodPost && strings.HasSuffix(req.Path, "/responses"):
	case req.Method == http.MethodGet && strings.HasSuffix(req.Path, "/models"):
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{}})
		return
	default:
		writeJSON(w, http.StatusOK, map[string]any{})
		return
	}
	if req.JSON == nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{
			"error": map[string]any{"type": "invalid_request_error", "message": errNotJSON.Error()},
		})
		return
	}
	n := openAIToolResults(req.JSON)
	tools, _ := req.JSON["tools"].([]any)
	st := script.step(n, len(tools) > 0)
	model, _ := req.JSON["model"].(string)
	respID := fmt.Sprintf("resp_fake_%d", seq)

	var item map[string]any
	if st.isCall() {
		name, input := st.Tool, st.Input
		if name == "" {
			name, input = "exec_command", map[string]any{"cmd": st.Command}
		}
		item = map[string]any{
			"type":      "function_call",
			"id":        fmt.Sprintf("fc_fake_%d", n),
			"call_id":   fmt.Sprintf("call_fake_%d", n),
			"name":      name,
			"arguments": inputJSON(input),
			"status":    "completed",
		}
		if st.Namespace != "" {
			item["namespace"] = st.Namespace
		}
		if text, ok := input.(string); ok && st.Tool != "" {
			// A freeform (custom) tool, such as Codex's apply_patch for
			// the models it offers it to, takes its input as raw text.
			item = map[string]any{
				"type":    "custom_tool_call",
				"id":      fmt.Sprintf("ctc_fake_%d", n),
				"call_id": fmt.Sprintf("call_fake_%d", n),
				"name":    name,
				"input":   text,
				"status":  "completed",
			}
		}
	} else {
		item = map[string]any{
			"type":   "message",
			"id":     fmt.Sprintf("msg_fake_%d", seq),
			"role":   "assistant",
			"status": "completed",
			"content": []any{map[string]any{
				"type": "output_text", "text": st.text(), "annotations": []any{},
			}},
		}
	}
	response := func(status string, output []any) map[string]any {
		r := map[string]any{
			"id": respID, "object": "response", "created_at": time.Now().Unix(),
			"status": status, "model": model, "output": output,
		}
		if status == "completed" {
			r["usage"] = map[string]any{
				"input_tokens":          1,
				"input_tokens_details":  map[string]any{"cached_tokens": 0},
				"output_tokens":         1,
				"output_tokens_details": map[string]any{"reasoning_tokens": 0},
				"total_tokens":          2,
			}
		}
		return r
	}

	if stream, _ := req.JSON["stream"].(bool); !stream {
		writeJSON(w, http.StatusOK, response("completed", []any{item}))
		return
	}
	sse := newSSE(w)
	sse.event("response.created", map[string]any{
		"type": "response.created", "sequence_number": 0,
		"response": response("in_progress", []any{}),
	})
	sse.event("response.output_item.done", map[string]any{
		"type": "response.output_item.done", "sequence_number": 1,
		"output_index": 0, "item": item,
	})
	sse.event("response.completed", map[string]any{
		"type": "response.completed", "sequence_number": 2,
		"response": response("completed", []any{item}),
	})
}

// openAIToolResults counts the function_call_output items in a Responses
// request's input.
func openAIToolResults(body map[string]any) int {
	n := 0
	input, _ := body["input"].([]any)
	for _, it := range input {
		if it, _ := it.(map[string]any); it["type"] == "function_call_output" || it["type"] == "custom_tool_call_output" {
			n++
		}
	}
	return n
}
