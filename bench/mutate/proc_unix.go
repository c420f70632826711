//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// setpgid starts go test in its own process group, so that a timeout can
// kill the test binary it runs too.
func setpgid(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
