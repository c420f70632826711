package hooktrust

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dalo/hooksfile"
	"dalo/providers"
)

// TestKey: a key names the file, the event in snake case (or as the
// harness spelled it), the group and the one handler; KeySnake reads the
// event back from a key of that file only.
func TestKey(t *testing.T) {
	for _, c := range []struct {
		event, snake string
		group        int
		want         string
	}{
		{"PreToolUse", "", 0, "/h/hooks.json:pre_tool_use:0:0"},
		{"Stop", "", 3, "/h/hooks.json:stop:3:0"},
		{"UserPromptSubmit", "", 1, "/h/hooks.json:user_prompt_submit:1:0"},
		{"PreToolUse", "pretooluse", 2, "/h/hooks.json:pretooluse:2:0"},
	} {
		got := Key("/h/hooks.json", c.event, c.snake, c.group)
		if got != c.want {
			t.Errorf("Key(%s, %q, %d) = %s, want %s", c.event, c.snake, c.group, got, c.want)
		}
		if s := KeySnake(got, "/h/hooks.json"); s == "" || !strings.Contains(c.want, ":"+s+":") {
			t.Errorf("KeySnake(%s) = %q", got, s)
		}
		if s := KeySnake(got, "/other/hooks.json"); s != "" {
			t.Errorf("KeySnake(%s) of another file = %q, want none", got, s)
		}
	}
}

// codex is the shipped Codex table that records trust, and dalo's entry
// for event in it.
func codex(t *testing.T, event string) (*providers.Table, hooksfile.Entry) {
	t.Helper()
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	tb, ok := ts.Lookup("codex", "0.171.0")
	if !ok {
		t.Fatal("no codex@0.171.0")
	}
	e, err := tb.Entry(event, "/s/dalo-hook dispatch --home /store --provider codex --event "+event, 10)
	if err != nil {
		t.Fatal(err)
	}
	return tb, e
}

// TestMoved: removing dalo's entry from between the user's moves the
// trust key of each of the user's after it, and says so; adding dalo's
// after the user's moves none.
func TestMoved(t *testing.T) {
	tb, e := codex(t, "PreToolUse")
	o := hooksfile.OwnerOf(tb, "/store", "")
	mine := `{"hooks": [{"type": "command", "command": "mine"}]}`
	with := []byte(`{"hooks": {"PreToolUse": [` + mine + `, ` + string(e) + `, ` + mine + `, ` + mine + `]}}`)
	without := []byte(`{"hooks": {"PreToolUse": [` + mine + `, ` + mine + `, ` + mine + `]}}`)
	got := Moved(o, "/h/hooks.json", with, without)
	want := []string{
		"/h/hooks.json:PreToolUse:2:0 moves to /h/hooks.json:PreToolUse:1:0",
		"/h/hooks.json:PreToolUse:3:0 moves to /h/hooks.json:PreToolUse:2:0",
	}
	for i := range want {
		want[i] = strings.ReplaceAll(want[i], "PreToolUse", "pre_tool_use")
	}
	if !slices.Equal(got, want) {
		t.Errorf("removing dalo's entry: %q, want %q", got, want)
	}
	appended := []byte(`{"hooks": {"PreToolUse": [` + mine + `, ` + mine + `, ` + mine + `, ` + string(e) + `]}}`)
	if got := Moved(o, "/h/hooks.json", without, appended); got != nil {
		t.Errorf("adding dalo's entry after the user's: %q, want none", got)
	}
	if got := Moved(o, "/h/hooks.json", nil, appended); got != nil {
		t.Errorf("a new file: %q, want none", got)
	}
}

// TestHashes asks a fake Codex app server for the hash of dalo's entry:
// only a hook listed with the entry's command, under the scratch hooks
// file, counts.
func TestHashes(t *testing.T) {
	tb, e := codex(t, "PreToolUse")
	want := map[string]hooksfile.Entry{"PreToolUse": e}
	server := func(command string) string {
		exe := filepath.Join(t.TempDir(), "codex")
		script := `#!/bin/sh
read l; echo '{"id":1,"result":{}}'
read l
read l; echo '{"id":2,"result":{"data":[{"hooks":[{"key":"'"$CODEX_HOME"'/hooks.json:pre_tool_use:0:0","command":"` + command + `","currentHash":"sha256:ab"}]}]}}'
`
		if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return exe
	}
	hashes, snakes, err := Hashes(tb, server(e.Command(tb)), want)
	if err != nil {
		t.Fatal(err)
	}
	if hashes["PreToolUse"] != "sha256:ab" || snakes["PreToolUse"] != "pre_tool_use" {
		t.Errorf("hashes %v, snakes %v", hashes, snakes)
	}
	if _, _, err := Hashes(tb, server("another command"), want); err == nil || !strings.Contains(err.Error(), "did not list dalo's PreToolUse entry with a hash (it listed 1 hooks)") {
		t.Errorf("another command listed: %v", err)
	}
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	claude, _ := ts.Lookup("claude", "2.1.332")
	if _, _, err := Hashes(claude, server(e.Command(tb)), want); err == nil || !strings.Contains(err.Error(), "keeps no trust dalo can record") {
		t.Errorf("a table without trust to record: %v", err)
	}
}
