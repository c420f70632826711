//go:build linux

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"dalo/cmd/internal/hookdispatch"
	"dalo/dispatch/dispatchtest"
)

// A stopped dispatch run by the tests below waits DALO_TEST_STOP_DELAY
// between killing its handlers and exiting: the window in which the
// dispatch, its handlers dead, returns and must not answer.
func init() {
	hookdispatch.StopHook = func() {
		if d, err := time.ParseDuration(os.Getenv("DALO_TEST_STOP_DELAY")); err == nil {
			time.Sleep(d)
		}
	}
}

// TestDispatchStoppedKillsHandlers starts `dalo hook dispatch` with a
// handler that sleeps far past any harness's patience, stops the
// dispatcher, and checks that the handler does not outlive it: with
// SIGTERM (what a harness sends when it stops waiting) its whole group is
// killed, what it started included; with SIGKILL, on Linux, the kernel
// kills the handler (Pdeathsig). It reads /proc, hence Linux only.
func TestDispatchStoppedKillsHandlers(t *testing.T) {
	payload, err := os.ReadFile("../../providers/testdata/recordings/claude/2.1.233/PreToolUse.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			home := filepath.Join(dir, "store")
			pidFile := filepath.Join(dir, "pids")
			h := dispatchtest.Hook{ID: "slow", Subject: "tool_call", Phase: "before", Effect: "gate", TimeoutMS: 120000, Env: []string{"PATH"},
				Script: "#!/bin/sh\nsleep 60 &\necho \"$$ $!\" > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "\nwait\n"}
			if _, err := dispatchtest.Install(home, "claude", map[string][]dispatchtest.Hook{"PreToolUse": {h}}); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("dalo", "hook", "dispatch", "--provider", "claude", "--event", "PreToolUse")
			// The stop waits after killing the handlers, so that the
			// dispatch returns first: still the stop's exit 1, not
			// the dispatch's answer, ends dalo.
			cmd.Env = append(os.Environ(), "DALO_HOME="+home, "DALO_TEST_STOP_DELAY=500ms")
			cmd.Stdin = bytes.NewReader(payload)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitc := make(chan error, 1)
			go func() { waitc <- cmd.Wait() }()
			var pids []int
			for deadline := time.Now().Add(20 * time.Second); pids == nil; time.Sleep(10 * time.Millisecond) {
				if data, err := os.ReadFile(pidFile); err == nil {
					for _, f := range strings.Fields(string(data)) {
						pid, _ := strconv.Atoi(f)
						pids = append(pids, pid)
					}
				} else if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("the handler did not start: %v\n%s", err, stderr.Bytes())
				}
			}
			all := pids
			t.Cleanup(func() {
				for _, pid := range all {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			cmd.Process.Signal(sig)
			select {
			case err = <-waitc:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("dalo did not stop on %v", sig)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("dalo: %v", err)
			}
			if sig != syscall.SIGKILL {
				if want := "stopped by " + map[os.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT", syscall.SIGHUP: "SIGHUP"}[sig] + "; the running handlers were killed"; ee.ExitCode() != exitFail || !strings.Contains(stderr.String(), want) {
					t.Errorf("exit %v, stderr %q", err, stderr.Bytes())
				}
			} else {
				// The group's other members are beyond Pdeathsig's reach.
				pids = pids[:1]
			}
			for _, pid := range pids {
				waitGone(t, pid)
			}
		})
	}
}

// waitGone waits, boundedly, for pid to be gone or a zombie.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("handler process %d outlived the dispatcher", pid)
		}
	}
}
