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
)

// testBashMatrixUser installs a report hook shown to the user only on
// every event of the harness, each crashing with a status of its own, and
// runs a session headless and one in the harness's terminal. The user is
// shown a hook's diagnostic, with its stderr, exactly on the events of
// shown: headless on the harness's stderr, in the terminal on its screen;
// on every other event, nowhere (not on stdout or stderr, in no file of
// the home, not on the screen), and never to the model.
func testBashMatrixUser(t *testing.T, p string, shown ...string) {
	t.Parallel()
	w := newWorld(t, p, fakemodel.Script{
		fakemodel.Run("echo bm-user-1"), fakemodel.Say(bmFinal),
		fakemodel.Run("echo bm-user-2"), fakemodel.Say(bmFinal),
	})
	events := bmHarnesses[p].events
	var hooks []cmHook
	for i, e := range events {
		hooks = append(hooks, cmHook{id: "user-" + e.event, subject: e.subject, phase: e.phase, effect: "observe",
			policy: "report", visibility: "user", tools: e.tools, exit: 60 + i})
	}
	w.installSource(bmID, bmPkg, matrixFiles(bmPkg, "Probes of the "+p+" table's user channel.", hooks))
	diag := func(i int) string {
		return fmt.Sprintf("dalo: hook %s:%s/user-%s failed (report): handler exited with status %d", bmID, bmPkg, events[i].event, 60+i)
	}

	s := w.run("Run the command you are given, bm-user-prompt.")
	for i, e := range events {
		if len(w.cmRuns("user-"+e.event)) == 0 {
			w.failf(s, "headless: the %s hook did not run", e.event)
			continue
		}
		want := slices.Contains(shown, e.event)
		got := strings.Contains(s.stderr, diag(i)) && strings.Contains(s.stderr, "stderr: "+cmStderr)
		if got != want {
			w.failf(s, "headless: %s's diagnostic and its stderr on the harness's stderr = %v, want %v", e.event, got, want)
		}
		if !want {
			if strings.Contains(s.stdout, diag(i)) || strings.Contains(s.stderr, diag(i)) {
				w.failf(s, "headless: %s's diagnostic was shown", e.event)
			}
			if files := w.homeFiles(diag(i)); len(files) > 0 {
				w.failf(s, "headless: %s's diagnostic is in %v", e.event, files)
			}
		}
		if w.server.Contains(diag(i)) || w.server.Contains(fmt.Sprintf("status %d", 60+i)) {
			w.failf(s, "%s's diagnostic, meant for the user only, reached the model", e.event)
		}
	}

	first := make(map[string]int, len(events))
	for _, e := range events {
		first[e.event] = len(w.cmRuns("user-" + e.event))
	}
	screen, exited := w.bmTerminal("Run the command you are given, bm-user-prompt.", func() bool {
		return len(w.cmRuns("user-Stop")) > first["Stop"]
	})
	for i, e := range events {
		if len(w.cmRuns("user-"+e.event)) == first[e.event] {
			if e.event == "SessionEnd" && !exited {
				// A harness killed after its turn never ends its session.
				t.Logf("terminal: the harness did not quit on Ctrl-C: no SessionEnd to look at")
				continue
			}
			t.Errorf("terminal: the %s hook did not run\nscreen:\n%s", e.event, clip(screen))
			continue
		}
		want := slices.Contains(shown, e.event)
		if got := strings.Contains(screen, diag(i)) && strings.Contains(screen, "stderr: "+cmStderr); got != want {
			t.Errorf("terminal: %s's diagnostic and its stderr on the screen = %v, want %v\nscreen:\n%s", e.event, got, want, clip(screen))
		}
		if !want && strings.Contains(screen, fmt.Sprintf("status %d", 60+i)) {
			t.Errorf("terminal: %s's diagnostic was shown\nscreen:\n%s", e.event, clip(screen))
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

// testMatrixQwenTools runs a session in yolo mode, as the suite runs
// Qwen Code: the tools it offers the model, by the names its hooks see
// (run_shell_command's is proved on every row's session), are exactly
// the table's.
func testMatrixQwenTools(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "qwen", fakemodel.Script{fakemodel.Say(bmFinal)})
	s := w.run("Say something short.")
	reqs := w.server.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	var offered []string
	tools, _ := reqs[0].JSON["tools"].([]any)
	for _, tool := range tools {
		if m, ok := tool.(map[string]any); ok {
			name, _ := m["name"].(string)
			offered = append(offered, name)
		}
	}
	slices.Sort(offered)
	want := tableUnder(t, "qwen").ToolNames()
	slices.Sort(want)
	if !slices.Equal(offered, want) {
		w.failf(s, "Qwen Code offered the model %q, want the table's tools %q", offered, want)
	}
}
