package scenario

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A HookRun is what one hook/completed notification of Codex's app server
// reports: one native event's hooks and what they showed, by kind
// ("warning" for a systemMessage, "feedback" for a block reason, "context"
// for added context).
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

// Entry returns the text of r's first entry of kind holding every one of
// parts, or false.
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
// codex exec runs one (no approvals, no sandbox), then closes its stdin
// and reads it to its end (the session ends, and its end hooks run), and
// returns the hook runs it reported: where Codex shows the user what hooks
// said, which exec prints nowhere. The session's Stdout is the protocol,
// one message a line.
func (w *World) AppServer(prompts ...string) (runs []HookRun, sess Session, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), SessionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.Bin, "app-server")
	cmd.Dir = w.Work
	cmd.Env = w.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr, lines bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, Session{}, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, Session{}, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, Session{}, fmt.Errorf("codex app-server: %w", err)
	}
	// The session is read once the server is gone and waited for: only
	// then has exec stopped copying into stderr, and only then does an
	// early return not wait on a server still running its turn.
	defer func() {
		in.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		sess = Session{Stdout: lines.String(), Stderr: stderr.String(), Elapsed: time.Since(start), TimedOut: ctx.Err() != nil}
		if strings.TrimSpace(sess.Stderr) != "" {
			w.logf("codex app-server stderr: %s", firstLine(sess.Stderr))
		}
	}()
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	send := func(msg map[string]any) error {
		b, _ := json.Marshal(msg)
		_, err := in.Write(append(b, '\n'))
		return err
	}
	// read reads messages until one is the answer to id, or the
	// notification method; it keeps the hook runs.
	read := func(id int, method string) (json.RawMessage, error) {
		for sc.Scan() {
			lines.Write(sc.Bytes())
			lines.WriteByte('\n')
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				return nil, fmt.Errorf("not a protocol message: %q", sc.Text())
			}
			switch {
			case m.Error != nil:
				return nil, fmt.Errorf("error answer: %s", m.Error)
			case m.ID != nil && m.Method != "":
				// A request of the server's (an approval): declined.
				if err := send(map[string]any{"id": m.ID, "result": map[string]any{"decision": "decline"}}); err != nil {
					return nil, err
				}
			case m.Method == "hook/completed":
				var p struct{ Run HookRun }
				if err := json.Unmarshal(m.Params, &p); err != nil {
					return nil, fmt.Errorf("hook/completed: %v", err)
				}
				runs = append(runs, p.Run)
			}
			if method != "" && m.Method == method || method == "" && m.Method == "" && string(m.ID) == strconv.Itoa(id) {
				return m.Result, nil
			}
		}
		return nil, fmt.Errorf("the app server ended first (%v)", sc.Err())
	}
	if err := send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{
		"clientInfo": map[string]any{"name": "dalo-verify", "version": "0"}}}); err != nil {
		return nil, Session{}, err
	}
	if _, err := read(1, ""); err != nil {
		return nil, Session{}, fmt.Errorf("codex app-server initialize: %w", err)
	}
	send(map[string]any{"method": "initialized"})
	send(map[string]any{"id": 2, "method": "thread/start", "params": map[string]any{
		"cwd": w.Work, "approvalPolicy": "never", "sandbox": "danger-full-access", "config": map[string]any{}}})
	res, err := read(2, "")
	var started struct {
		Thread struct{ ID string } `json:"thread"`
	}
	if err == nil {
		err = json.Unmarshal(res, &started)
	}
	if err != nil || started.Thread.ID == "" {
		return runs, Session{}, fmt.Errorf("codex app-server thread/start: no thread (%v)", err)
	}
	for i, prompt := range prompts {
		send(map[string]any{"id": 3 + i, "method": "turn/start", "params": map[string]any{
			"threadId": started.Thread.ID, "input": []any{map[string]any{"type": "text", "text": prompt}}}})
		if _, err := read(0, "turn/completed"); err != nil {
			return runs, Session{}, fmt.Errorf("codex app-server turn %d: %w", i+1, err)
		}
	}
	// The session ends with the server's stdin; what it sends until it
	// exits (the end hooks' runs) is read too.
	in.Close()
	if _, err := read(-1, "\x00"); err != nil && ctx.Err() != nil {
		return runs, Session{}, fmt.Errorf("codex app-server: no end within %v", SessionTimeout)
	}
	w.logf("codex app-server session: %d hook runs, %d model requests", len(runs), len(w.Server.Requests()))
	return runs, Session{}, nil
}
