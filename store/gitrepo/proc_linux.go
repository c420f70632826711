package gitrepo

import "syscall"

// sysProcAttr runs git in a session of its own, with no controlling
// terminal to prompt on and as a process group the timeout kills whole,
// and kills it when dalo dies: a fetch never outlives the command that
// started it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
