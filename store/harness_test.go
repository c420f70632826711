package store

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"dalo/plan"
	"dalo/providers"
)

// TestReadConfig reads harness configurations the way dalo must not trip
// over: missing, empty, a FIFO (no blocking), a directory, a dangling
// symlink (replacing it would replace the link) and a file too large to
// read; every error names the file.
func TestReadConfig(t *testing.T) {
	tests := []struct {
		name    string
		build   func(t *testing.T, p string)
		want    []byte
		wantErr string
	}{
		{"missing", func(t *testing.T, p string) {}, nil, ""},
		{"empty", func(t *testing.T, p string) { os.WriteFile(p, nil, 0o600) }, []byte{}, ""},
		{"settings", func(t *testing.T, p string) { os.WriteFile(p, []byte("{}\n"), 0o600) }, []byte("{}\n"), ""},
		{"fifo", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}, nil, "is a FIFO, not a regular file"},
		{"directory", func(t *testing.T, p string) { os.Mkdir(p, 0o700) }, nil, "is a directory, not a file"},
		{"dangling symlink", func(t *testing.T, p string) { os.Symlink("elsewhere.json", p) }, nil, "is a symlink to elsewhere.json"},
		{"too large", func(t *testing.T, p string) {
			f, _ := os.Create(p)
			f.Truncate(maxUserFileBytes + 1)
			f.Close()
		}, nil, "more than the 67108864 dalo reads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "settings.json")
			tt.build(t, p)
			done := make(chan struct{})
			var got []byte
			var err error
			go func() { got, err = readConfig(p); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("readConfig(%s) blocked", p)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), p) {
					t.Fatalf("err = %v, want %q naming %s", err, tt.wantErr, p)
				}
				return
			}
			if err != nil || string(got) != string(tt.want) || (got == nil) != (tt.want == nil) {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestFindDispatcher: the entries call the dalo-hook beside dalo when there
// is one that can run and is of the running dalo's build, else dalo's own
// `hook dispatch`.
func TestFindDispatcher(t *testing.T) {
	self, err := os.Executable() // this test binary stands for dalo's build
	if err != nil {
		t.Fatal(err)
	}
	goTool, err := exec.LookPath("go") // a Go binary of another build
	if err != nil {
		t.Skip("no go command")
	}
	link := func(target string) func(string) error {
		return func(p string) error { return os.Symlink(target, p) }
	}
	for _, tc := range []struct {
		name string
		hook func(path string) error
		fast bool
	}{
		{name: "no dalo-hook"},
		{name: "dalo-hook", hook: link(self), fast: true},
		{name: "another build", hook: link(goTool)},
		{name: "not a Go binary", hook: func(p string) error { return os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755) }},
		{name: "not executable", hook: func(p string) error { return os.WriteFile(p, nil, 0o644) }},
		{name: "a directory", hook: func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.hook != nil {
				if err := tc.hook(filepath.Join(dir, plan.HookBinary)); err != nil {
					t.Fatal(err)
				}
			}
			d := FindDispatcher(filepath.Join(dir, "dalo"))
			want := Dispatcher{Exe: filepath.Join(dir, "dalo")}
			if tc.fast {
				want = Dispatcher{Exe: filepath.Join(dir, plan.HookBinary), Hook: true}
			}
			if d != want {
				t.Errorf("FindDispatcher = %+v, want %+v", d, want)
			}
		})
	}
}

// TestEntryCommandRewritesNothing: the command of every entry dalo writes,
// on every table, holds nothing the harness rewrites in its settings
// before it runs it (Gemini CLI replaces $s by its environment's s, which
// turned a guard that read the status into $s into "exit 0"); and the
// guard still blocks with the table's status when the dispatcher cannot
// run, whatever the variables of the environment hold.
func TestEntryCommandRewritesNothing(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gone := filepath.Join(dir, "dispatchers", "ab", "dalo-hook") // never written
	for _, tb := range ts.All() {
		for _, ev := range slices.Sorted(maps.Keys(tb.Events)) {
			for _, failClosed := range []bool{false, true} {
				c := wantEntryCommand(tb, &dispatcherCopy{Dispatcher: Dispatcher{Hook: true}, Path: gone}, dir, ev, failClosed)
				cmd := c.String()
				if x := regexp.MustCompile(`\$(\w|\{)`).FindString(cmd); x != "" {
					t.Errorf("%s %s: the entry names a variable (%s): %s", tb.Key(), ev, x, cmd)
				}
				if x := tb.Expanded(cmd); x != "" {
					t.Errorf("%s %s: %s rewrites %s in the entry: %s", tb.Key(), ev, tb.Harness, x, cmd)
				}
				if !failClosed {
					continue
				}
				sh := exec.Command("sh", "-c", cmd)
				sh.Env = append(os.Environ(), "s=0", "p=0")
				sh.Stdin = strings.NewReader(`{"hook_event_name":"` + ev + `"}`)
				var stderr bytes.Buffer
				sh.Stderr = &stderr
				err := sh.Run()
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != tb.Blocking.Exit || !strings.Contains(stderr.String(), "exit status 127") {
					t.Errorf("%s %s: the dispatcher gone, the guard ended with %v, stderr %q; want exit %d naming status 127", tb.Key(), ev, err, stderr.String(), tb.Blocking.Exit)
				}
			}
		}
	}
}
