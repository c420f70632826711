package fakemodel

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
)

// TestGeminiToolThenText drives the Gemini dialect as Gemini CLI does: the
// routing model's JSON side request, then a streamed turn that calls the
// shell, then the same turn with the call's functionResponse, which gets
// the script's text.
func TestGeminiToolThenText(t *testing.T) {
	srv := NewGemini(Script{Run("touch ran"), Say("All done.")})
	defer srv.Close()

	route := post(t, srv.URL+"/v1beta/models/flash-lite:generateContent", map[string]any{
		"contents":         []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Run it."}}}},
		"generationConfig": map[string]any{"responseMimeType": "application/json"},
	})
	var r struct {
		Candidates []struct {
			Content struct{ Parts []map[string]any }
		}
	}
	if err := json.NewDecoder(route.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if text, _ := r.Candidates[0].Content.Parts[0]["text"].(string); !json.Valid([]byte(text)) || !strings.Contains(text, "complexity_score") {
		t.Errorf("routing answer %q, want a JSON complexity score", text)
	}

	turn := func(contents []any) map[string]any {
		t.Helper()
		resp := post(t, srv.URL+"/v1beta/models/flash:streamGenerateContent?alt=sse", map[string]any{
			"contents": contents,
			"tools":    []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "run_shell_command"}}}},
		})
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type = %q", ct)
		}
		var chunk map[string]any
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				if err := json.Unmarshal([]byte(d), &chunk); err != nil {
					t.Fatal(err)
				}
			}
		}
		parts := chunk["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)
		return parts[0].(map[string]any)
	}
	user := map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Run it."}}}
	call := turn([]any{user})
	fc, _ := call["functionCall"].(map[string]any)
	if fc["name"] != "run_shell_command" || fc["args"].(map[string]any)["command"] != "touch ran" {
		t.Fatalf("first turn = %v, want a run_shell_command call of touch ran", call)
	}
	text := turn([]any{user,
		map[string]any{"role": "model", "parts": []any{call}},
		map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "run_shell_command", "response": map[string]any{"output": ""}}}}},
	})
	if text["text"] != "All done." {
		t.Errorf("second turn = %v, want the script's text", text)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests recorded, want 3", n)
	}
}
