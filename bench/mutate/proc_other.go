//go:build !unix

package main

import "os/exec"

func setpgid(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
