package dispatch

import "syscall"

// sysProcAttr starts a handler in its own process group (killed whole on
// timeout, overflow, exit or Interrupt) and, on Linux, with Pdeathsig: the
// kernel kills the handler when the thread that started it ends, so that a
// dispatcher killed outright (SIGKILL, which it cannot handle) leaves no
// handler running. run holds that thread until Wait.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
