package scenario

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A HookRun is what one hook/completed notification of Codex's app server
// reports: one native event's hooks, how they ended, and what they showed,
// by kind ("warning" for a systemMessage, "feedback" for a block reason,
// "context" for added context).
type HookRun struct {
	EventName string `json:"eventName"`
	Status    string `json:"status"`
	// ExecutionMode is "sync" or "async" (an entry with async: true,
	// Codex 0.148 and later); empty where Codex does not say.
	ExecutionMode string `json:"executionMode"`
	Entries       []struct {
		Kind string `json:"kind"`
		Text string `json:"text"`
	} `json:"entries"`
}

// Entry returns the text of the run's first entry of kind holding every
// one of parts, or false.
func (r HookRun) Entry(kind string, parts ...string) (string, bool) {
next:
	for _, e := range r.Entries {
		if e.Kind != kind {
			continue
		}
		for _, p := range parts {
			if !strings.Contains(e.Text, p) {
				continue next
			}
		}
		return e.Text, true
	}
	return "", false
}

// An AppThread is how a Codex app-server session's thread runs: its
// approval policy, sandbox mode and configuration, the client's decision
// on every request the server sends (an approval), and whether each turn
// is interrupted when its first command starts (turn/interrupt), as a
// user pressing Esc does.
type AppThread struct {
	Policy, Sandbox, Decision string
	Config                    map[string]any
	Interrupt                 bool
}

// AsExec is a thread as codex exec runs one: no approvals, no sandbox.
var AsExec = AppThread{Policy: "never", Sandbox: "danger-full-access", Decision: "decline"}

// An AppRequest is one request the app server sent its client.
type AppRequest struct {
	Method string
	Params map[string]any
}

// An AppItem is a command execution item as the app server completed it:
// the command and its status (completed, failed, declined).
type AppItem struct {
	Command string `json:"command"`
	Status  string `json:"status"`
}

// An AppSession is what one Codex app-server session sent its client: the
// hook runs, the server's requests, the command executions, and the
// session, whose Stdout is the protocol, one message a line.
type AppSession struct {
	Runs     []HookRun
	Requests []AppRequest
	Items    []AppItem
	Session
}

// Event returns the runs of the native event (app-server spelling, e.g.
// "userPromptSubmit"), in order.
func Event(runs []HookRun, name string) []HookRun {
	var out []HookRun
	for _, r := range runs {
		if r.EventName == name {
			out = append(out, r)
		}
	}
	return out
}

// AppServer runs a turn of each prompt in one Codex app-server session
// (the JSON-RPC protocol its IDE integrations speak), in the project, as
// codex exec runs one (AsExec), to the session's end (its end hooks run),
// and returns the hook runs it reported: where Codex shows the user what
// hooks said, which exec prints nowhere.
func (w *World) AppServer(prompts ...string) ([]HookRun, Session, error) {
	a, err := w.AppServerWith(AsExec, prompts...)
	return a.Runs, a.Session, err
}

// AppServerWith runs one Codex app-server session in the project: it
// starts a thread as th says, answers every request the server sends
// with th.Decision, runs one turn per prompt, each to its turn/completed,
// then closes the server's stdin and waits for it to exit, bounded by
// SessionTimeout; the server's process group is killed when it ends. An
// error is a protocol error, a timeout, or a server that ended first.
func (w *World) AppServerWith(th AppThread, prompts ...string) (a AppSession, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), SessionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.Bin, "app-server")
	cmd.Dir = w.Work
	cmd.Env = w.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return a, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return a, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return a, fmt.Errorf("codex app-server: %w", err)
	}
	c := &appClient{in: in, sc: bufio.NewScanner(out), th: th, a: &a}
	c.sc.Buffer(nil, 16<<20)
	// The session is read once the server is gone and waited for: only
	// then has exec stopped copying into stderr, and only then does an
	// early return not wait on a server still running its turn.
	defer func() {
		in.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		a.Session = Session{Stdout: c.lines.String(), Stderr: stderr.String(), Elapsed: time.Since(start), TimedOut: ctx.Err() != nil}
		if a.TimedOut && err == nil {
			err = fmt.Errorf("codex app-server: no end within %v", SessionTimeout)
		}
		if strings.TrimSpace(a.Stderr) != "" {
			w.logf("codex app-server stderr: %s", firstLine(a.Stderr))
		}
	}()
	if err := c.session(w.Work, prompts); err != nil {
		return a, fmt.Errorf("codex app-server: %w", err)
	}
	// The server ends once its stdin does: read what it still says.
	in.Close()
	c.read("", func(appMessage) bool { return false })
	w.logf("codex app-server session: %d hook runs, %d model requests", len(a.Runs), len(w.Server.Requests()))
	return a, nil
}

// An appClient speaks the app-server protocol, keeping what it reads.
type appClient struct {
	in    io.Writer
	sc    *bufio.Scanner
	th    AppThread
	a     *AppSession
	lines bytes.Buffer
}

type appMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (c *appClient) send(msg map[string]any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing %v: %w", msg["method"], err)
	}
	return nil
}

// read reads messages, keeping hook runs, requests and command items and
// answering each request with the thread's decision, until one satisfies
// done, which it returns. Without what (the message awaited) the end of
// the protocol is no error.
func (c *appClient) read(what string, done func(appMessage) bool) (appMessage, error) {
	for c.sc.Scan() {
		c.lines.Write(c.sc.Bytes())
		c.lines.WriteByte('\n')
		var m appMessage
		if err := json.Unmarshal(c.sc.Bytes(), &m); err != nil {
			return m, fmt.Errorf("not a protocol message: %q", c.sc.Text())
		}
		if m.Error != nil {
			return m, fmt.Errorf("error answer: %s", m.Error)
		}
		switch {
		case m.ID != nil && m.Method != "":
			var p map[string]any
			json.Unmarshal(m.Params, &p)
			c.a.Requests = append(c.a.Requests, AppRequest{m.Method, p})
			if err := c.send(map[string]any{"id": m.ID, "result": map[string]any{"decision": c.th.Decision}}); err != nil {
				return m, err
			}
		case m.Method == "hook/completed":
			var p struct{ Run HookRun }
			if err := json.Unmarshal(m.Params, &p); err != nil {
				return m, fmt.Errorf("hook/completed: %v", err)
			}
			c.a.Runs = append(c.a.Runs, p.Run)
		case m.Method == "item/completed":
			var p struct {
				Item struct {
					Type string `json:"type"`
					AppItem
				} `json:"item"`
			}
			if err := json.Unmarshal(m.Params, &p); err != nil {
				return m, fmt.Errorf("item/completed: %v", err)
			}
			if p.Item.Type == "commandExecution" {
				c.a.Items = append(c.a.Items, p.Item.AppItem)
			}
		}
		if done(m) {
			return m, nil
		}
	}
	if what != "" {
		return appMessage{}, fmt.Errorf("ended before %s (%v)", what, c.sc.Err())
	}
	return appMessage{}, nil
}

// answer matches the answer to the request id.
func answer(id int) func(appMessage) bool {
	return func(m appMessage) bool { return string(m.ID) == strconv.Itoa(id) && m.Method == "" }
}

// session initializes, starts the thread in dir and runs one turn per
// prompt, each to its turn/completed.
func (c *appClient) session(dir string, prompts []string) error {
	if err := c.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{
		"clientInfo": map[string]any{"name": "dalo", "version": "0"}}}); err != nil {
		return err
	}
	if _, err := c.read("the initialize answer", answer(1)); err != nil {
		return err
	}
	config := c.th.Config
	if config == nil {
		config = map[string]any{}
	}
	c.send(map[string]any{"method": "initialized"})
	c.send(map[string]any{"id": 2, "method": "thread/start", "params": map[string]any{
		"cwd": dir, "approvalPolicy": c.th.Policy, "sandbox": c.th.Sandbox, "config": config}})
	m, err := c.read("the thread/start answer", answer(2))
	if err != nil {
		return err
	}
	var started struct {
		Thread struct{ ID string } `json:"thread"`
	}
	if err := json.Unmarshal(m.Result, &started); err != nil || started.Thread.ID == "" {
		return fmt.Errorf("thread/start answer: no thread id (%v)", err)
	}
	for i, prompt := range prompts {
		id := 3 + i
		if err := c.send(map[string]any{"id": id, "method": "turn/start", "params": map[string]any{
			"threadId": started.Thread.ID,
			"input":    []any{map[string]any{"type": "text", "text": prompt}}}}); err != nil {
			return err
		}
		var turn struct {
			Turn struct{ ID string } `json:"turn"`
		}
		interrupted := false
		_, err := c.read(fmt.Sprintf("turn %d completed", i+1), func(m appMessage) bool {
			switch {
			case m.Method == "" && string(m.ID) == strconv.Itoa(id):
				json.Unmarshal(m.Result, &turn)
			case c.th.Interrupt && !interrupted && m.Method == "item/started" && strings.Contains(string(m.Params), `"type":"commandExecution"`):
				interrupted = true
				c.send(map[string]any{"id": 100 + i, "method": "turn/interrupt", "params": map[string]any{
					"threadId": started.Thread.ID, "turnId": turn.Turn.ID}})
			}
			return m.Method == "turn/completed"
		})
		if err != nil {
			return err
		}
	}
	return nil
}
