package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"dalo/providers"
)

// fakeHarness stands in for a harness command in the conformance suite:
// each script has every harness a provider table names on PATH, in
// $WORK/.harnesses, each running `fakeharness NAME ARGS...`, as a user
// has the harness installed. A script that needs another one writes its
// own there.
//
// For --version it leaves started.tmp in the configuration home its
// table's variable names (Gemini CLI leaves files there at every start),
// and prints $FAKE_<NAME>_VERSION, else what the newest
// provider table of NAME says its harness prints: a bare --provider NAME
// then finds exactly that table. As codex app-server it answers initialize
// and hooks/list the way Codex's app server does, listing the hooks of
// $CODEX_HOME/hooks.json with Codex's keys and a hash of each hook's
// definition. The hash is not Codex's (internal/live proves dalo against
// the real one); it covers what Codex's does, the event, command, timeout
// and matcher, so that a changed entry gets a new one. With
// FAKE_CODEX_NO_HOOK_LIST set it has no hooks/list, as a Codex from before
// it would; with FAKE_CODEX_HANG it never answers.
func fakeHarness() int {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "fakeharness: want NAME ARGS...")
		return 2
	}
	name, args := os.Args[1], os.Args[2:]
	switch {
	case len(args) == 1 && args[0] == "--version":
		// As Gemini CLI does, it leaves a file in its configuration home
		// at every start.
		if ts, err := providers.Load(); err == nil {
			if t, ok := ts.Newest(name); ok {
				if dir := os.Getenv(t.Config.Home.Env); dir != "" {
					os.MkdirAll(dir, 0o755)
					os.WriteFile(filepath.Join(dir, "started.tmp"), nil, 0o644)
				}
			}
		}
		v := os.Getenv("FAKE_" + strings.ToUpper(name) + "_VERSION")
		if v == "" {
			ts, err := providers.Load()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			t, ok := ts.Newest(name)
			if !ok {
				fmt.Fprintf(os.Stderr, "fakeharness: no table for %s\n", name)
				return 1
			}
			v = t.VersionOutput.Text
		}
		fmt.Println(v)
		return 0
	case name == "codex" && len(args) == 1 && args[0] == "app-server":
	default:
		fmt.Fprintf(os.Stderr, "fakeharness: %s: unsupported arguments %q\n", name, args)
		return 2
	}
	if os.Getenv("FAKE_CODEX_HANG") != "" {
		select {}
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 16<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		switch {
		case req.Method == "initialize":
			out.Encode(map[string]any{"id": req.ID, "result": map[string]any{"userAgent": "fakeharness"}})
		case req.Method == "hooks/list" && os.Getenv("FAKE_CODEX_NO_HOOK_LIST") == "":
			hooks, err := fakeHookList()
			if err != nil {
				out.Encode(map[string]any{"id": req.ID, "error": map[string]any{"code": -32603, "message": err.Error()}})
				continue
			}
			out.Encode(map[string]any{"id": req.ID, "result": map[string]any{"data": []any{map[string]any{"hooks": hooks, "warnings": []any{}, "errors": []any{}}}}})
		default:
			out.Encode(map[string]any{"id": req.ID, "error": map[string]any{"code": -32601, "message": "Method not found: " + req.Method}})
		}
	}
	return 0
}

// fakeHookList lists the hooks of $CODEX_HOME/hooks.json as hooks/list does.
func fakeHookList() ([]map[string]any, error) {
	file := filepath.Join(os.Getenv("CODEX_HOME"), "hooks.json")
	if r, err := filepath.EvalSymlinks(file); err == nil {
		file = r
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return []map[string]any{}, nil
	}
	var doc struct {
		Hooks map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout *int   `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var out []map[string]any
	for ev, groups := range doc.Hooks {
		for g, group := range groups {
			for h, hook := range group.Hooks {
				timeout := 600
				if hook.Timeout != nil {
					timeout = *hook.Timeout
				}
				matcher := ""
				if group.Matcher != nil {
					matcher = *group.Matcher
				}
				sum := sha256.Sum256([]byte(strings.Join([]string{ev, hook.Command, strconv.Itoa(timeout), matcher}, "\x00")))
				out = append(out, map[string]any{
					"key":         fmt.Sprintf("%s:%s:%d:%d", file, fakeSnake(ev), g, h),
					"eventName":   ev,
					"command":     hook.Command,
					"timeoutSec":  timeout,
					"currentHash": "sha256:" + hex.EncodeToString(sum[:]),
					"trustStatus": "untrusted",
				})
			}
		}
	}
	return out, nil
}

func fakeSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
