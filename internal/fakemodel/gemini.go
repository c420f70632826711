package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// gemini answers the Gemini API (generativelanguage) as Gemini CLI uses
// it: a first generateContent to its routing model, which wants a JSON
// text scoring the prompt's complexity, then streamGenerateContent
// (?alt=sse) for the turn, whose candidate part is a functionCall or text.
// A later request replays the call and carries a functionResponse: the
// script advances by the function responses a request holds.
type gemini struct{}

func (gemini) serve(w http.ResponseWriter, req *Request, script Script, seq int) {
	stream := strings.HasSuffix(req.Path, ":streamGenerateContent")
	switch {
	case req.Method == http.MethodPost && (stream || strings.HasSuffix(req.Path, ":generateContent")):
	case req.Method == http.MethodPost && strings.HasSuffix(req.Path, ":countTokens"):
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": 1})
		return
	default:
		writeJSON(w, http.StatusOK, map[string]any{})
		return
	}
	if req.JSON == nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{
			"error": map[string]any{"code": 400, "status": "INVALID_ARGUMENT", "message": errNotJSON.Error()},
		})
		return
	}
	var part map[string]any
	if !stream && geminiWantsJSON(req.JSON) {
		// A side request that asks for JSON (the routing model's
		// complexity score): a simple, valid answer.
		part = map[string]any{"text": `{"complexity_reasoning": "a scripted turn", "complexity_score": 1}`}
	} else {
		n := geminiToolResults(req.JSON)
		tools, _ := req.JSON["tools"].([]any)
		st := script.step(n, len(tools) > 0)
		if st.isCall() {
			name, input := st.Tool, st.Input
			if name == "" {
				name, input = "run_shell_command", map[string]any{"command": st.Command}
			}
			if input == nil {
				input = map[string]any{}
			}
			part = map[string]any{"functionCall": map[string]any{"name": name, "args": input}}
		} else {
			part = map[string]any{"text": st.text()}
		}
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
		"modelVersion":  "gemini-fake",
		"responseId":    fmt.Sprintf("resp_fake_%d", seq),
	}
	if !stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	// Server-sent events without event names: one data line per chunk.
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	b, _ := json.Marshal(resp)
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// geminiWantsJSON says whether a generateContent request asks for a JSON
// answer (generationConfig.responseMimeType application/json).
func geminiWantsJSON(body map[string]any) bool {
	cfg, _ := body["generationConfig"].(map[string]any)
	mt, _ := cfg["responseMimeType"].(string)
	return mt == "application/json"
}

// geminiToolResults counts the functionResponse parts in a request's
// contents.
func geminiToolResults(body map[string]any) int {
	n := 0
	contents, _ := body["contents"].([]any)
	for _, c := range contents {
		c, _ := c.(map[string]any)
		parts, _ := c["parts"].([]any)
		for _, p := range parts {
			if p, _ := p.(map[string]any); p["functionResponse"] != nil {
				n++
			}
		}
	}
	return n
}
