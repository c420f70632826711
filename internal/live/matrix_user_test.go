//go:build unix

package live

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"dalo/internal/fakemodel"
	"dalo/internal/scenario"
)

// testBashMatrixUser plays the user channel's scenario (a report hook
// shown to the user only on every event of the harness, each crashing
// with a status of its own, run headless), then runs the same kit in the
// harness's terminal: the user is shown a hook's diagnostic, with its
// stderr, on the screen exactly on the events the harness shows
// (scenario.BashMatrix.Shown), and on every other event not at all. The
// terminal half is live only: dalo providers verify cannot count on
// script(1) on a user's machine, and driving an interactive session by
// keystrokes off a screen takes a minute or more to prove again what the
// headless half proves.
func testBashMatrixUser(t *testing.T, p string) {
	t.Parallel()
	play(t, p, p+"-user-channel")
	w := newWorld(t, p, fakemodel.Script{fakemodel.Run("echo bm-user-2"), fakemodel.Say(bmFinal)})
	w.installSource(bmID, bmPkg, scenario.BashUserFiles(p))
	hooks := scenario.BashUserHooks(p)
	screen, exited := w.bmTerminal(scenario.BashUserPrompt, func() bool {
		return len(w.cmRuns("user-Stop")) > 0
	})
	for _, h := range hooks {
		event := strings.TrimPrefix(h.ID, "user-")
		if len(w.cmRuns(h.ID)) == 0 {
			if event == "SessionEnd" && !exited {
				// A harness killed after its turn never ends its session.
				t.Logf("terminal: the harness did not quit on Ctrl-C: no SessionEnd to look at")
				continue
			}
			t.Errorf("terminal: the %s hook did not run\nscreen:\n%s", event, clip(screen))
			continue
		}
		want := slices.Contains(scenario.BashMatrices[p].Shown, event)
		if got := strings.Contains(screen, scenario.BashUserDiag(h)) && strings.Contains(screen, "stderr: "+cmStderr); got != want {
			t.Errorf("terminal: %s's diagnostic and its stderr on the screen = %v, want %v\nscreen:\n%s", event, got, want, clip(screen))
		}
		if !want && strings.Contains(screen, fmt.Sprintf("status %d", h.Exit)) {
			t.Errorf("terminal: %s's diagnostic was shown\nscreen:\n%s", event, clip(screen))
		}
	}
}

// bmTerminal runs the world's harness interactively on a pseudo-terminal
// (script(1)) with prompt as its first, trusting the project when asked,
// until done holds (boundedly) and a moment after for the screen to show
// what it will; it ends the session with Ctrl-C, repeated until the
// harness exits, and returns the text of the screen (natScreenText) and
// whether the harness exited; one that did not is killed with every
// process it started.
func (w *world) bmTerminal(prompt string, done func() bool) (string, bool) {
	w.t.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		w.t.Skip("no script(1) to give the harness a terminal")
	}
	args := map[string]string{
		"copilot": "--allow-all-tools --no-auto-update -i",
		"qwen":    "--auth-type anthropic --approval-mode yolo -i",
	}[w.provider]
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	line := "stty rows 50 cols 200; " + harness(w.t, w.provider) + " " + args + " '" + prompt + "'"
	cmd := w.terminal(ctx, line, 200, 50)
	in, err := cmd.StdinPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// The terminal's answers to what the harness asks it first (cursor
	// position, colours, keyboard protocol, attributes).
	time.Sleep(3 * time.Second)
	in.Write([]byte("\x1b[1;1R\x1b]10;rgb:ffff/ffff/ffff\x1b\\\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[?0u\x1b[?62;22c"))
	deadline := time.Now().Add(90 * time.Second)
	trusted := false
	for !done() && time.Now().Before(deadline) {
		// Copilot CLI asks whether to trust the folder: its first
		// choice trusts it for this session.
		if !trusted && strings.Contains(natScreenText(out.String()), "trust the files in this folder") {
			in.Write([]byte("\r"))
			trusted = true
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !done() {
		w.t.Errorf("%s in a terminal: the session did not get there in time\nscreen:\n%s", w.provider, clip(natScreenText(out.String())))
	}
	time.Sleep(3 * time.Second)
	for i := 0; i < 8; i++ {
		in.Write([]byte{3})
		select {
		case err := <-exited:
			w.t.Logf("%s in a terminal: %d model requests, exit %v after %d Ctrl-C", w.provider, len(w.server.Requests()), err, i+1)
			return natScreenText(out.String()), true
		case <-time.After(3 * time.Second):
		}
	}
	// What it showed is on the screen already: a harness slow to quit
	// on a loaded machine is killed, not failed.
	cancel()
	w.t.Logf("%s in a terminal: no exit after 8 Ctrl-C (%v), killed", w.provider, <-exited)
	return natScreenText(out.String()), false
}

// terminal is the command running line, a shell command line, on a
// pseudo-terminal of cols by rows (script(1)) in the world's project.
// script starts what it runs in a session of its own, out of the process
// group: cancelling kills the whole tree.
func (w *world) terminal(ctx context.Context, line string, cols, rows int) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "script", "-qfc", line, "/dev/null")
	cmd.Dir = w.work
	cmd.Env = append(w.Env, "TERM=xterm-256color", "COLUMNS="+strconv.Itoa(cols), "LINES="+strconv.Itoa(rows))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		killTree(cmd.Process.Pid)
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// killTree kills pid and every process descended from it, read from
// /proc: the descendants first, found before any of them is reparented.
func killTree(pid int) {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after
		// its closing parenthesis.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(f[1]); err == nil {
			children[pp] = append(children[pp], p)
		}
	}
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			walk(c)
		}
		syscall.Kill(p, syscall.SIGKILL)
	}
	walk(pid)
}
