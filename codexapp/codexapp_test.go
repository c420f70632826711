package codexapp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeServer writes an executable that answers as `codex app-server`
// does, with script (a sh program reading one JSON-RPC message a line).
func fakeServer(t *testing.T, script string) string {
	exe := filepath.Join(t.TempDir(), "codex")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestListHooks(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, script string
		want         []Hook
		err          string
	}{{
		name: "listed",
		// initialize, initialized, hooks/list: it answers the two with ids,
		// a notification between, and checks the homes it was given.
		script: `[ "$1" = app-server ] || exit 9
[ "$CODEX_HOME" = "$HOME/.codex" ] || exit 8
read l; echo '{"id":1,"result":{}}'
read l; echo '{"method":"note","params":{}}'
read l; echo '{"id":2,"result":{"data":[{"hooks":[{"key":"f:pre_tool_use:0:0","command":"dalo-hook x","currentHash":"sha256:ab"}]}]}}'
`,
		want: []Hook{{Key: "f:pre_tool_use:0:0", Command: "dalo-hook x", Hash: "sha256:ab"}},
	}, {
		name:   "no hooks/list",
		script: `read l; echo '{"id":1,"result":{}}'; read l; read l; echo '{"id":2,"error":{"code":-32601,"message":"unknown method"}}'`,
		err:    "has no hook list dalo can read (hooks/list: unknown method)",
	}, {
		name:   "dies",
		script: `echo 'panic: no config' >&2; exit 1`,
		err:    "it ended before answering (panic: no config)",
	}, {
		name:   "silent",
		script: `sleep 30`,
		err:    "no answer within",
	}}
	old := ListTimeout
	defer func() { ListTimeout = old }()
	ListTimeout = 2 * time.Second
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ListHooks(fakeServer(t, tc.script), dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) || got[0] != tc.want[0] {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
