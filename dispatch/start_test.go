package dispatch

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestStartHandlerWait starts handlers as run does and holds wait to the
// status each ended with, the process reaped once wait returns: an exit
// status, a signal, and an exec that fails (a start error, as os/exec's
// was: fork/exec and the path).
func TestStartHandlerWait(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, script string
		exit         int
		signal       syscall.Signal
	}{
		{"ok", "#!/bin/sh\nexit 0\n", 0, 0},
		{"status", "#!/bin/sh\nexit 3\n", 3, 0},
		{"signal", "#!/bin/sh\nkill -9 $$\n", -1, syscall.SIGKILL},
		{"late", "#!/bin/sh\nread line\nexit 5\n", 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entry := filepath.Join(dir, tc.name)
			if err := os.WriteFile(entry, []byte(tc.script), 0o755); err != nil {
				t.Fatal(err)
			}
			inR, inW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer inW.Close()
			h, err := startHandler(&command{path: entry, dir: dir, env: []string{}}, inR, os.Stderr, os.Stderr)
			inR.Close()
			if err != nil {
				t.Fatal(err)
			}
			inW.Write([]byte("line\n"))
			ws, err := h.wait()
			switch {
			case err != nil:
				t.Fatalf("wait: %v", err)
			case ws.ExitStatus() != tc.exit:
				t.Errorf("exit status %d, want %d", ws.ExitStatus(), tc.exit)
			case tc.signal != 0 && (!ws.Signaled() || ws.Signal() != tc.signal):
				t.Errorf("status %v, want killed by %v", ws, tc.signal)
			}
			if err := syscall.Kill(h.pid, 0); err != syscall.ESRCH {
				t.Errorf("after wait, kill(pid, 0) = %v, want ESRCH: the handler was not reaped", err)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		path := filepath.Join(dir, "missing")
		_, err := startHandler(&command{path: path, dir: dir, env: []string{}}, os.Stdin, os.Stderr, os.Stderr)
		if want := "fork/exec " + path + ": no such file or directory"; err == nil || err.Error() != want {
			t.Errorf("start error %v, want %q", err, want)
		}
	})
}
