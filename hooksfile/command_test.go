package hooksfile

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEntryCommand: every command dalo writes reads back as what it was
// written from, whatever the paths hold, and runs without a shell as the
// same command line.
func TestEntryCommand(t *testing.T) {
	for _, prog := range []string{"/s/dispatchers/ab/dalo-hook", "/my bin/dalo", "/it's/dalo", "/a'b'/'c/dalo-hook", "/tail'/dalo"} {
		for _, c := range []Command{
			{Program: prog, Dalo: filepath.Base(prog) == "dalo", Home: "/store", Provider: "claude", Event: "PreToolUse"},
			{Program: prog, Dalo: filepath.Base(prog) == "dalo", Home: "/my store's", Provider: "codex", Event: "PreToolUse", FailClosed: true, Block: 2},
			{Program: prog, Dalo: filepath.Base(prog) == "dalo", Home: "/store", Provider: "claude", Event: "Stop", FailClosed: true, Block: 2, Continued: "stop_hook_active"},
			{Program: prog, Dalo: filepath.Base(prog) == "dalo", Provider: "claude", Event: "Stop"},
			{Program: prog, Dalo: filepath.Base(prog) == "dalo", Home: "/store", Provider: "copilot", Event: "PreToolUse", Open: true},
			// A project's scope (dalo sync).
			{Program: prog, Dalo: filepath.Base(prog) == "dalo", Home: "/store", Project: "0123456789abcdef", Provider: "claude", Event: "PreToolUse", FailClosed: true, Block: 2},
		} {
			got, ok := ParseCommand(c.String())
			if !ok || got != c {
				t.Errorf("ParseCommand(%q) = %+v, %v; want %+v", c.String(), got, ok, c)
			}
			var want []string
			if c.Dalo {
				want = []string{prog, "hook", "dispatch"}
			} else {
				want = []string{prog, "dispatch"}
			}
			if c.Home != "" {
				want = append(want, "--home", c.Home)
			}
			if c.Project != "" {
				want = append(want, "--project", c.Project)
			}
			want = append(want, "--provider", c.Provider, "--event", c.Event)
			if c.FailClosed {
				want = append(want, "--fail-closed")
			}
			if got := c.Argv(); !slices.Equal(got, want) {
				t.Errorf("Argv of %q = %q, want %q", c.String(), got, want)
			}
		}
	}
}

// TestEntryCommandProject: only a project scope's id, 16 hexadecimal
// digits, makes a command dalo's: a path there is not one.
func TestEntryCommandProject(t *testing.T) {
	for _, id := range []string{"../../etc", "0123456789ABCDEF", "0123", "0123456789abcdef0"} {
		c := Command{Program: "/s/dalo-hook", Home: "/store", Project: id, Provider: "claude", Event: "PreToolUse"}
		if got, ok := ParseCommand(c.String()); ok {
			t.Errorf("ParseCommand(%q) = %+v, took project %q", c.String(), got, id)
		}
	}
}

// TestEntryCommandGuards runs each guard with a shell as a harness does,
// its dispatcher missing: an entry guarded open exits 0 whatever failed, so
// that a harness on which a failed hook denies lets the action go on; an
// entry guarded closed exits the blocking status; an unguarded one the
// shell's 127.
func TestEntryCommandGuards(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "dispatchers", "gone", "dalo-hook")
	for _, c := range []struct {
		cmd  Command
		exit int
	}{
		{Command{Program: gone, Home: "/store", Provider: "copilot", Event: "PreToolUse", Open: true}, 0},
		{Command{Program: gone, Home: "/store", Provider: "copilot", Event: "PreToolUse", FailClosed: true, Block: 2}, 2},
		{Command{Program: gone, Home: "/store", Provider: "claude", Event: "PreToolUse"}, 127},
	} {
		x := exec.Command("/bin/sh", "-c", c.cmd.String())
		var stderr bytes.Buffer
		x.Stderr = &stderr
		err := x.Run()
		got := 0
		if ee, ok := err.(*exec.ExitError); ok {
			got = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if got != c.exit {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.cmd, got, c.exit, stderr.String())
		}
		if c.cmd.Open && !strings.Contains(stderr.String(), "lets PreToolUse go on") {
			t.Errorf("%s: stderr %q does not say the action goes on", c.cmd, stderr.String())
		}
	}
}

// TestEntryCommandEarlierGuard: an entry an earlier dalo wrote, whose guard
// named $s and $p, still reads as dalo's (doctor reports it, install
// rewrites it), with its blocking status and continued key.
func TestEntryCommandEarlierGuard(t *testing.T) {
	old := `p=$(cat); printf '%s' "$p" | /s/dispatchers/ab/dalo-hook dispatch --home /store --provider gemini --event AfterAgent --fail-closed || { s=$?; [ $s -lt 126 ] && exit $s; echo "dalo: the dispatcher could not run (exit status $s); a required fail_closed hook guards AfterAgent, so dalo blocks it: run 'dalo doctor'" >&2; case $p in *'"stop_hook_active":true'*|*'"stop_hook_active": true'*) exit 1;; esac; exit 2; }`
	got, ok := ParseCommand(old)
	want := Command{Program: "/s/dispatchers/ab/dalo-hook", Home: "/store", Provider: "gemini", Event: "AfterAgent", FailClosed: true, Block: 2, Continued: "stop_hook_active"}
	if !ok || got != want {
		t.Errorf("ParseCommand(earlier guard) = %+v, %v; want %+v", got, ok, want)
	}
	if got.String() == old {
		t.Errorf("the earlier guard is still what dalo writes")
	}
}
