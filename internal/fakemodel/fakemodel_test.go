package fakemodel

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// An event is one parsed server-sent event.
type event struct {
	name string
	data map[string]any
}

// post sends body as JSON and returns the response.
func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", url, resp.Status)
	}
	return resp
}

// readSSE parses a complete event stream, failing on anything that is not
// an "event:" line followed by a JSON "data:" line and a blank line.
func readSSE(t *testing.T, resp *http.Response) []event {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q, want text/event-stream", ct)
	}
	var events []event
	var cur event
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Fatalf("data of %s: %v", cur.name, err)
			}
		case line == "":
			if cur.name == "" || cur.data == nil {
				t.Fatalf("incomplete event %+v", cur)
			}
			if cur.data["type"] != cur.name {
				t.Errorf("event %s has type %v", cur.name, cur.data["type"])
			}
			events = append(events, cur)
			cur = event{}
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return events
}

func names(events []event) []string {
	var s []string
	for _, e := range events {
		s = append(s, e.name)
	}
	return s
}

func anthropicRequest(messages ...any) map[string]any {
	return map[string]any{
		"model":    "claude-test",
		"stream":   true,
		"tools":    []any{map[string]any{"name": "Bash"}},
		"messages": messages,
	}
}

func TestAnthropicToolThenText(t *testing.T) {
	s := NewAnthropic(Script{Run("echo hi"), Say("all good")})
	defer s.Close()
	url := s.URL + "/v1/messages?beta=true"

	user := map[string]any{"role": "user", "content": "run it"}
	events := readSSE(t, post(t, url, anthropicRequest(user)))
	want := []string{"message_start", "content_block_start", "ping", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop"}
	if got := names(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	block := events[1].data["content_block"].(map[string]any)
	if block["type"] != "tool_use" || block["name"] != "Bash" {
		t.Fatalf("content_block_start = %v", block)
	}
	delta := events[3].data["delta"].(map[string]any)
	if delta["type"] != "input_json_delta" {
		t.Fatalf("delta = %v", delta)
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(delta["partial_json"].(string)), &input); err != nil || input["command"] != "echo hi" {
		t.Fatalf("partial_json = %v (%v)", delta["partial_json"], err)
	}
	if sr := events[5].data["delta"].(map[string]any)["stop_reason"]; sr != "tool_use" {
		t.Fatalf("stop_reason = %v", sr)
	}

	// The next request carries the tool result, so the script moves on.
	assistant := map[string]any{"role": "assistant", "content": []any{block}}
	result := map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": block["id"], "content": "hi"},
	}}
	events = readSSE(t, post(t, url, anthropicRequest(user, assistant, result)))
	delta = events[3].data["delta"].(map[string]any)
	if delta["type"] != "text_delta" || delta["text"] != "all good" {
		t.Fatalf("delta = %v", delta)
	}
	if sr := events[5].data["delta"].(map[string]any)["stop_reason"]; sr != "end_turn" {
		t.Fatalf("stop_reason = %v", sr)
	}

	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].RawQuery != "beta=true" || reqs[0].JSON["model"] != "claude-test" {
		t.Fatalf("requests = %+v", reqs)
	}
	if !s.Contains("run it") || s.Contains("never sent") {
		t.Fatal("Contains is wrong")
	}
}

func TestAnthropicExhaustedAndSideRequests(t *testing.T) {
	s := NewAnthropic(Script{Run("true")})
	defer s.Close()
	url := s.URL + "/v1/messages"

	// Past the end of the script: final text, so the harness stops.
	result := map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "x", "content": ""},
	}}
	events := readSSE(t, post(t, url, anthropicRequest(result)))
	if d := events[3].data["delta"].(map[string]any); d["text"] != DefaultText {
		t.Fatalf("delta = %v", d)
	}

	// A request offering no tools gets text even at step 0.
	body := map[string]any{"model": "m", "stream": true, "messages": []any{map[string]any{"role": "user", "content": "title?"}}}
	events = readSSE(t, post(t, url, body))
	if d := events[3].data["delta"].(map[string]any); d["type"] != "text_delta" {
		t.Fatalf("delta = %v", d)
	}

	// Non-streaming requests get one JSON message.
	body = anthropicRequest(map[string]any{"role": "user", "content": "x"})
	body["stream"] = false
	var msg map[string]any
	if err := json.NewDecoder(post(t, url, body).Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if msg["type"] != "message" || msg["stop_reason"] != "tool_use" {
		t.Fatalf("message = %v", msg)
	}

	var count map[string]any
	if err := json.NewDecoder(post(t, url+"/count_tokens", body).Body).Decode(&count); err != nil || count["input_tokens"] == nil {
		t.Fatalf("count_tokens = %v (%v)", count, err)
	}
}

func openAIRequest(input ...any) map[string]any {
	return map[string]any{
		"model":  "gpt-test",
		"stream": true,
		"tools":  []any{map[string]any{"type": "function", "name": "exec_command"}},
		"input":  input,
	}
}

func TestOpenAIToolThenText(t *testing.T) {
	s := NewOpenAI(Script{Run("exit 7"), Say("finished")})
	defer s.Close()
	url := s.URL + "/v1/responses"

	user := map[string]any{"type": "message", "role": "user", "content": []any{
		map[string]any{"type": "input_text", "text": "go"},
	}}
	events := readSSE(t, post(t, url, openAIRequest(user)))
	want := []string{"response.created", "response.output_item.done", "response.completed"}
	if got := names(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	item := events[1].data["item"].(map[string]any)
	if item["type"] != "function_call" || item["name"] != "exec_command" || item["call_id"] == "" {
		t.Fatalf("item = %v", item)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(item["arguments"].(string)), &args); err != nil || args["cmd"] != "exit 7" {
		t.Fatalf("arguments = %v (%v)", item["arguments"], err)
	}
	completed := events[2].data["response"].(map[string]any)
	if completed["status"] != "completed" || completed["usage"] == nil {
		t.Fatalf("response.completed = %v", completed)
	}

	output := map[string]any{"type": "function_call_output", "call_id": item["call_id"], "output": "exit 7"}
	events = readSSE(t, post(t, url, openAIRequest(user, item, output)))
	item = events[1].data["item"].(map[string]any)
	content := item["content"].([]any)[0].(map[string]any)
	if item["type"] != "message" || item["role"] != "assistant" || content["type"] != "output_text" || content["text"] != "finished" {
		t.Fatalf("item = %v", item)
	}
	if !s.Contains("go") || len(s.Requests()) != 2 {
		t.Fatal("requests not recorded")
	}
}

func TestContainsDecodedAndGzip(t *testing.T) {
	s := NewOpenAI(nil)
	defer s.Close()

	// The substring has a newline and a quote, which the raw body escapes.
	text := "line one\nsaid \"hi\" <ok>"
	b, _ := json.Marshal(openAIRequest(map[string]any{"type": "message", "role": "user", "content": text}))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(b)
	zw.Close()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/responses", &gz)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	if bytes.Contains(s.Requests()[0].Raw, []byte(text)) {
		t.Fatal("test is moot: raw body holds the text unescaped")
	}
	if !s.Contains(text) {
		t.Fatal("Contains missed a JSON-escaped string")
	}
}

func TestClose(t *testing.T) {
	s := NewAnthropic(nil)
	url := s.URL
	s.Close()
	if _, err := http.Get(url + "/v1/models"); err == nil {
		t.Fatal("server still answers after Close")
	}
}
