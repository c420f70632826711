//go:build !linux

package gitrepo

import "syscall"

// sysProcAttr runs git in a session of its own, with no controlling
// terminal to prompt on and as a process group the timeout kills whole.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
