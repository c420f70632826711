//go:build !linux

package dispatch

import "syscall"

// sysProcAttr starts a handler in its own process group, killed whole on
// timeout, overflow, exit or Interrupt. This system has no Pdeathsig: a
// dispatcher killed outright (SIGKILL) leaves its running handlers behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
