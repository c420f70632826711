//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the side a person types into, and the
// terminal dalo reads.
func openPTY(t *testing.T) (person, terminal *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(filepath.Join("/dev/pts", strconv.Itoa(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// TestConfirm: on a terminal, yes goes on; anything else, or an answer
// ended by Ctrl-D with no newline, says what was not done, on a line of
// its own.
func TestConfirm(t *testing.T) {
	for _, tc := range []struct {
		name, typed string
		yes         bool
		out         string
	}{
		{"yes", "y\n", true, "Register? [y/N] "},
		{"no", "n\n", false, "Register? [y/N] no source registered\n"},
		{"ctrl-d", "\x04", false, "Register? [y/N] \nno source registered\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			person, terminal := openPTY(t)
			if _, err := person.WriteString(tc.typed); err != nil {
				t.Fatal(err)
			}
			var out, errs strings.Builder
			e := &env{stdin: terminal, stdout: &out, stderr: &errs}
			if got := confirm(e, "sync", "Register?", "register sources", "no source registered", "'dalo sync --dry-run'"); got != tc.yes {
				t.Errorf("confirm = %v, want %v", got, tc.yes)
			}
			if out.String() != tc.out || errs.Len() != 0 {
				t.Errorf("stdout %q, stderr %q; want %q and nothing", out.String(), errs.String(), tc.out)
			}
		})
	}
}
