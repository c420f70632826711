// Package codexapp is a client of Codex's app server (codex app-server),
// the JSON-RPC protocol over stdin and stdout that Codex's own clients
// use: what dalo asks of a Codex binary that a file cannot tell it, the
// hash Codex gives each hook it reads (its trust records those).
package codexapp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A Hook is one hook as Codex lists it: the key it knows the hook by
// (FILE:EVENT:GROUP:INDEX), its command and the hash of its definition,
// which its trust records.
type Hook struct {
	Key     string `json:"key"`
	Command string `json:"command"`
	Hash    string `json:"currentHash"`
}

// ListTimeout bounds a run of the app server that lists hooks (a
// variable only so that a test need not wait for it).
var ListTimeout = 60 * time.Second

// ListHooks runs `<exe> app-server` with its home (HOME and CODEX_HOME)
// in dir, and asks it for the hooks it reads there (hooks/list): what
// hooks.json in dir/.codex holds, each with its key and hash. It runs
// under a timeout, in a process group of its own that is killed at the end.
func ListHooks(exe, dir string) ([]Hook, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ListTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "app-server")
	cmd.Dir = dir
	// The user's environment, as when they run it, but for the homes.
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "HOME=") && !strings.HasPrefix(e, "CODEX_HOME=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+dir, "CODEX_HOME="+filepath.Join(dir, ".codex"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s app-server: %w", exe, err)
	}
	defer func() {
		in.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 64<<20)
	fail := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if ctx.Err() != nil {
			msg = fmt.Sprintf("no answer within %v", ListTimeout)
		}
		return fmt.Errorf("%s app-server: %s", exe, msg)
	}
	// ended says the server ended before it answered, quoting its
	// stderr, which is whole only once Wait returned.
	ended := func() error {
		in.Close()
		cmd.Wait()
		return fail("it ended before answering (%v)", firstLine(stderr.String()))
	}
	send := func(m map[string]any) error {
		b, _ := json.Marshal(m)
		if _, err := in.Write(append(b, '\n')); err != nil {
			return ended()
		}
		return nil
	}
	type answer struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	read := func(id int) (*answer, error) {
		for sc.Scan() {
			var a answer
			if json.Unmarshal(sc.Bytes(), &a) != nil {
				continue
			}
			if a.Method == "" && string(a.ID) == strconv.Itoa(id) {
				return &a, nil
			}
		}
		return nil, ended()
	}
	if err := send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"clientInfo": map[string]any{"name": "dalo", "version": "0"}}}); err != nil {
		return nil, err
	}
	a, err := read(1)
	if err != nil {
		return nil, err
	}
	if a.Error != nil {
		return nil, fail("initialize: %s", a.Error.Message)
	}
	if err := send(map[string]any{"method": "initialized"}); err != nil {
		return nil, err
	}
	if err := send(map[string]any{"id": 2, "method": "hooks/list", "params": map[string]any{"cwds": []string{dir}}}); err != nil {
		return nil, err
	}
	if a, err = read(2); err != nil {
		return nil, err
	}
	if a.Error != nil {
		return nil, fail("it has no hook list dalo can read (hooks/list: %s); this Codex cannot have its trust recorded by dalo: trust dalo's entries in its /hooks review", a.Error.Message)
	}
	var list struct {
		Data []struct {
			Hooks    []Hook          `json:"hooks"`
			Warnings json.RawMessage `json:"warnings"`
			Errors   json.RawMessage `json:"errors"`
		} `json:"data"`
	}
	if err := json.Unmarshal(a.Result, &list); err != nil {
		return nil, fail("hooks/list answered %s: %v", truncate(string(a.Result), 200), err)
	}
	var hooks []Hook
	for _, d := range list.Data {
		hooks = append(hooks, d.Hooks...)
	}
	return hooks, nil
}

// firstLine is the first line of s, cut to 200 bytes: what an error
// quotes of a program's stderr.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "nothing on stderr"
	}
	return truncate(s, 200)
}

// truncate cuts s to n bytes, marked.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
