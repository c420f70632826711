package fakemodel

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultText is the final answer given once a script is exhausted, and to
// requests that offer the model no tools. Ending with text rather than
// another tool call is what lets a harness finish its turn.
const DefaultText = "Done."

// A Step is one scripted model turn. Exactly one of Command, Tool or Text
// should be set; a Step with none of them answers [DefaultText].
type Step struct {
	// Command asks the harness to run a shell command through its native
	// shell tool: Bash {"command": ...} on Anthropic, exec_command
	// {"cmd": ...} on OpenAI.
	Command string

	// Tool and Input call an arbitrary tool, for tools other than the
	// shell. Input is marshalled as the tool's JSON arguments; on OpenAI a
	// string Input calls a freeform (custom) tool with that text instead.
	Tool  string
	Input any
	// Namespace is, on OpenAI, the namespace of Tool's function: Codex
	// offers an MCP server's tools as the functions of a namespace
	// (mcp__<server>).
	Namespace string

	// Text is a final assistant answer, which ends the harness's turn.
	Text string
}

// Run returns a step that asks the harness to run command in its shell tool.
func Run(command string) Step { return Step{Command: command} }

// Say returns a step that answers text and ends the turn.
func Say(text string) Step { return Step{Text: text} }

// A Script is the sequence of model turns a server plays. Step i is answered
// to a request that already holds i tool results.
type Script []Step

// step returns the step to answer when the conversation holds n tool results
// and reports whether the request may be answered with a tool call at all.
func (s Script) step(n int, toolsOffered bool) Step {
	if n < 0 || n >= len(s) {
		return Say(DefaultText)
	}
	st := s[n]
	if !toolsOffered && st.isCall() {
		// A side request (a title, a summary) offers no tools; answering
		// it with a call would confuse the harness, and would not advance
		// the script anyway.
		return Say(DefaultText)
	}
	return st
}

func (st Step) isCall() bool { return st.Command != "" || st.Tool != "" }

func (st Step) text() string {
	if st.Text == "" {
		return DefaultText
	}
	return st.Text
}

// A Request is one HTTP request received by a server.
type Request struct {
	Method   string
	Path     string
	RawQuery string
	Header   http.Header

	// Raw is the request body as sent, after removing any gzip
	// Content-Encoding.
	Raw []byte

	// JSON is Raw decoded, or nil when Raw is not a JSON object.
	JSON map[string]any

	// Time is when the server received the request, so that a test can
	// order model requests against what else the harness did (a hook's
	// run).
	Time time.Time
}

// Contains reports whether substr occurs in the body, either verbatim or in
// one of its decoded JSON strings. Searching decoded strings matters because
// text that reaches the model is usually JSON-escaped in the raw body
// (newlines, quotes, non-ASCII).
func (r Request) Contains(substr string) bool {
	if bytes.Contains(r.Raw, []byte(substr)) {
		return true
	}
	return containsString(r.JSON, substr)
}

func containsString(v any, substr string) bool {
	switch v := v.(type) {
	case string:
		return strings.Contains(v, substr)
	case map[string]any:
		for k, e := range v {
			if strings.Contains(k, substr) || containsString(e, substr) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if containsString(e, substr) {
				return true
			}
		}
	}
	return false
}

// A dialect answers the model requests of one wire API.
type dialect interface {
	// serve answers r, whose body has already been recorded as req.
	serve(w http.ResponseWriter, req *Request, script Script, seq int)
}

// A Server is a fake model server listening on 127.0.0.1.
type Server struct {
	// URL is the base URL of the server, "http://127.0.0.1:port", with no
	// trailing slash. Claude Code takes it as ANTHROPIC_BASE_URL; Codex
	// takes URL+"/v1" as a provider's base_url.
	URL string

	script  Script
	dialect dialect
	ln      net.Listener
	srv     *http.Server
	done    chan struct{}

	mu   sync.Mutex
	reqs []Request
}

// NewAnthropic starts a server speaking the Anthropic Messages API.
// It panics if it cannot listen, as httptest.NewServer does, since a test
// cannot do anything useful without it.
func NewAnthropic(script Script) *Server { return start(script, anthropic{}) }

// NewAnthropicShell is NewAnthropic for a harness whose shell tool on the
// Messages API is called shell, not Bash (GitHub Copilot CLI's bash, Qwen
// Code's run_shell_command): a Command step calls it with the command and
// a description, which both require.
func NewAnthropicShell(script Script, shell string) *Server {
	return start(script, anthropic{shell: shell})
}

// NewOpenAI starts a server speaking the OpenAI Responses API.
func NewOpenAI(script Script) *Server { return start(script, openAI{}) }

// NewGemini starts a server speaking the Gemini API (generateContent and
// streamGenerateContent); Gemini CLI takes its URL as
// GOOGLE_GEMINI_BASE_URL.
func NewGemini(script Script) *Server { return start(script, gemini{}) }

func start(script Script, d dialect) *Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("fakemodel: listen: %v", err))
	}
	s := &Server{
		URL:     "http://" + ln.Addr().String(),
		script:  append(Script(nil), script...),
		dialect: d,
		ln:      ln,
		done:    make(chan struct{}),
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.handle), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln)
	}()
	return s
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	received := time.Now()
	raw, err := readBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{
		Method:   r.Method,
		Path:     r.URL.Path,
		RawQuery: r.URL.RawQuery,
		Header:   r.Header.Clone(),
		Raw:      raw,
		Time:     received,
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil {
		req.JSON = m
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	seq := len(s.reqs)
	s.mu.Unlock()
	s.dialect.serve(w, &req, s.script, seq)
}

func readBody(r *http.Request) ([]byte, error) {
	var body io.Reader = r.Body
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		body = zr
	default:
		// Recorded as sent; the JSON decode will fail and the request is
		// answered as if it had no conversation.
	}
	return io.ReadAll(body)
}

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Contains reports whether any request received so far contains substr, as
// [Request.Contains] does.
func (s *Server) Contains(substr string) bool {
	for _, r := range s.Requests() {
		if r.Contains(substr) {
			return true
		}
	}
	return false
}

// Close stops the server, waiting briefly for answers in progress so that a
// harness still reading a stream is not cut off mid-event.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
	}
	<-s.done
}

// writeJSON answers v as a plain JSON body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// An sseWriter writes server-sent events, flushing each one so the harness
// sees the stream as it would from a real API.
type sseWriter struct {
	w   http.ResponseWriter
	err error
}

func newSSE(w http.ResponseWriter) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w}
}

func (s *sseWriter) event(name string, data any) {
	if s.err != nil {
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		s.err = err
		return
	}
	_, s.err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// inputJSON returns the JSON arguments of a tool call step.
func inputJSON(v any) string {
	if v == nil {
		return "{}"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// errNotJSON is answered to a model request whose body is not JSON.
var errNotJSON = errors.New("fakemodel: request body is not a JSON object")
