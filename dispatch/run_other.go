//go:build !linux

package dispatch

import (
	"os"
	"syscall"
	"time"
)

// sysProcAttr starts a handler in its own process group, killed whole on
// timeout, overflow, exit or Interrupt. This system has no Pdeathsig: a
// dispatcher killed outright (SIGKILL) leaves its running handlers behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// startHandler starts c with stdin, stdout and stderr as its standard
// files.
func startHandler(c *command, stdin, stdout, stderr *os.File) (*handlerProcess, error) {
	p, err := os.StartProcess(c.path, append([]string{c.path}, c.args...), &os.ProcAttr{
		Dir:   c.dir,
		Env:   c.env,
		Files: []*os.File{stdin, stdout, stderr},
		Sys:   sysProcAttr(),
	})
	if err != nil {
		return nil, err
	}
	return &handlerProcess{pid: p.Pid, wait: func() (syscall.WaitStatus, error) {
		ps, err := p.Wait()
		if err != nil {
			return 0, err
		}
		ws, _ := ps.Sys().(syscall.WaitStatus)
		return ws, nil
	}}, nil
}

// runPolled is the Linux way of running a handler on one thread; here,
// run starts it and awaits it with goroutines.
func (c *command) runPolled([]byte, time.Time, time.Duration, int) (exit, bool) {
	return exit{}, false
}
