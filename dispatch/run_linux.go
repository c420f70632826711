package dispatch

import (
	"os"
	"syscall"
	"unsafe"
)

// sysProcAttr starts a handler in its own process group (killed whole on
// timeout, overflow, exit or Interrupt) and, on Linux, with Pdeathsig: the
// kernel kills the handler when the thread that started it ends, so that a
// dispatcher killed outright (SIGKILL, which it cannot handle) leaves no
// handler running. run holds that thread until the handler has ended.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// startHandler starts c with stdin, stdout and stderr as its standard
// files. It forks with syscall.ForkExec rather than os/exec, which before
// its first start in a process forks a probe child to learn whether the
// kernel's pidfds work: a dispatcher starts one handler, and that probe
// was a second process on every tool call. The handler's pidfd comes from
// the same clone (SysProcAttr.PidFD); waiting on it through the runtime's
// poller, instead of blocking a thread in wait4, spares the dispatcher a
// thread. A kernel without pidfds leaves none, and the wait blocks in
// wait4 as it always did.
func startHandler(c *command, stdin, stdout, stderr *os.File) (*handlerProcess, error) {
	pidfd := -1
	attr := sysProcAttr()
	attr.PidFD = &pidfd
	pid, err := syscall.ForkExec(c.path, append([]string{c.path}, c.args...), &syscall.ProcAttr{
		Dir:   c.dir,
		Env:   c.env,
		Files: []uintptr{stdin.Fd(), stdout.Fd(), stderr.Fd()},
		Sys:   attr,
	})
	if err != nil {
		return nil, &os.PathError{Op: "fork/exec", Path: c.path, Err: err}
	}
	return &handlerProcess{pid: pid, wait: func() (syscall.WaitStatus, error) {
		if pidfd >= 0 {
			awaitExit(pidfd)
		}
		return reap(pid)
	}}, nil
}

// awaitExit returns once the process of pidfd has ended (or its pidfd
// cannot be polled), without reaping it: the zombie keeps its pid from
// being reused until reap. It closes pidfd.
func awaitExit(pidfd int) {
	if err := syscall.SetNonblock(pidfd, true); err != nil {
		syscall.Close(pidfd)
		return
	}
	f := os.NewFile(uintptr(pidfd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// Read calls the function again each time the poller finds pidfd
	// readable, which it is once the process has ended; a pidfd the
	// poller cannot take makes Read return at once.
	rc.Read(func(fd uintptr) bool {
		return exited(fd)
	})
}

// exited reports whether the process of pidfd has ended (or waitid
// fails), leaving it to be reaped: waitid(P_PIDFD, WEXITED|WNOHANG|WNOWAIT).
func exited(pidfd uintptr) bool {
	const pPIDFD = 3   // idtype_t P_PIDFD, waitid(2)
	var info [128]byte // siginfo_t
	_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPIDFD, pidfd, uintptr(unsafe.Pointer(&info)), syscall.WEXITED|syscall.WNOHANG|syscall.WNOWAIT, 0, 0)
	if errno == syscall.EINTR {
		return false
	}
	// si_signo, the first field of siginfo_t on every architecture, is
	// SIGCHLD once the child has changed state and stays 0 while it has
	// not (si_pid's offset differs between 64-bit and 32-bit).
	return errno != 0 || *(*int32)(unsafe.Pointer(&info[0])) != 0
}

// reap waits for pid to end and collects its status.
func reap(pid int) (syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			return ws, err
		}
	}
}
