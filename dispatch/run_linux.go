package dispatch

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"
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
	pid, err := forkHandler(c, int(stdin.Fd()), int(stdout.Fd()), int(stderr.Fd()), &pidfd)
	if err != nil {
		return nil, err
	}
	return &handlerProcess{pid: pid, wait: func() (syscall.WaitStatus, error) {
		if pidfd >= 0 {
			awaitExit(pidfd)
		}
		return reap(pid)
	}}, nil
}

// forkHandler starts c with the descriptors stdin, stdout and stderr as its
// standard files, and its pidfd in *pidfd (-1 on a kernel without them).
func forkHandler(c *command, stdin, stdout, stderr int, pidfd *int) (int, error) {
	attr := sysProcAttr()
	attr.PidFD = pidfd
	pid, err := syscall.ForkExec(c.path, append([]string{c.path}, c.args...), &syscall.ProcAttr{
		Dir:   c.dir,
		Env:   c.env,
		Files: []uintptr{uintptr(stdin), uintptr(stdout), uintptr(stderr)},
		Sys:   attr,
	})
	if err != nil {
		return 0, &os.PathError{Op: "fork/exec", Path: c.path, Err: err}
	}
	return pid, nil
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

// A polled is one handler run awaited on the calling thread alone
// (runPolled): its pipes' descriptors (-1 once closed), what it wrote,
// and how it ended.
type polled struct {
	pid, pidfd   int
	in, out, err int
	payload      []byte // still to write to in
	max          int
	stdout       []byte
	stderr       []byte
	over, gotOut bool
	exited       bool
	timedOut     bool
	status       syscall.WaitStatus
	waitErr      error
	outDrain     time.Time // when reading stdout stops, once the handler exited
}

// runPolled runs c as run says, on this thread alone: the handler's pipes
// and its pidfd are watched with ppoll(2), where the portable run starts
// a goroutine for each and a timer, which cost the dispatcher threads of
// their own (the main goroutine is locked to its thread for Pdeathsig).
// ok is false, and nothing started, when pipes cannot be made here; a
// kernel without pidfds gets the portable wait once the handler started.
func (c *command) runPolled(payload []byte, deadline time.Time, timeout time.Duration, maxResponse int) (e exit, ok bool) {
	var fds [6]int
	for i := 0; i < 6; i += 2 {
		if err := syscall.Pipe2(fds[i:i+2], syscall.O_CLOEXEC); err != nil {
			for _, fd := range fds[:i] {
				syscall.Close(fd)
			}
			return exit{}, false
		}
	}
	p := &polled{pidfd: -1, in: fds[1], out: fds[2], err: fds[4], payload: payload, max: maxResponse}
	var err error
	live.Lock()
	if live.stopped {
		err = errors.New("dispatch was interrupted")
	} else if p.pid, err = forkHandler(c, fds[0], fds[3], fds[5], &p.pidfd); err == nil {
		if live.groups == nil {
			live.groups = map[int]bool{}
		}
		live.groups[p.pid] = true
	}
	live.Unlock()
	syscall.Close(fds[0])
	syscall.Close(fds[3])
	syscall.Close(fds[5])
	if err != nil {
		p.closeAll()
		return exit{err: fmt.Errorf("starting handler: %v", err)}, true
	}
	if p.pidfd < 0 {
		// No pidfds: the portable wait, on the same pipes.
		for _, fd := range []int{p.in, p.out, p.err} {
			syscall.SetNonblock(fd, true)
		}
		h := &handlerProcess{pid: p.pid, wait: func() (syscall.WaitStatus, error) { return reap(p.pid) }}
		return await(h, os.NewFile(uintptr(p.in), "|0"), os.NewFile(uintptr(p.out), "|1"), os.NewFile(uintptr(p.err), "|2"), payload, deadline, timeout, maxResponse), true
	}
	defer forget(p.pid)
	for _, fd := range []int{p.in, p.out, p.err} {
		syscall.SetNonblock(fd, true)
	}
	p.write()
	p.wait(deadline)
	if p.timedOut && !p.exited {
		p.status, p.waitErr = reap(p.pid)
		p.exited = true
	}
	p.close(&p.in)
	p.close(&p.out)
	// The group is dead: what it wrote to stderr is in the pipe, and the
	// read ends at EOF, unless a process that left the group still holds
	// the pipe: pipeDrain bounds the rest.
	drain := time.Now().Add(pipeDrain)
	for p.err >= 0 && p.poll(drain) {
	}
	p.closeAll()
	return exit{stdout: p.stdout, stderr: string(p.stderr), err: endError(p.over, p.timedOut, p.status, p.waitErr, timeout, maxResponse)}, true
}

// wait reads the handler's stdout and stderr and feeds it the payload
// until it has exited and its stdout is read (to its end, past max, or
// until pipeDrain after its exit), or until deadline, when it kills the
// handler's group.
func (p *polled) wait(deadline time.Time) {
	for !(p.exited && p.gotOut) && !p.timedOut {
		until := deadline
		if p.exited {
			until = p.outDrain
		}
		if p.poll(until) {
			continue
		}
		if !p.exited {
			p.timedOut = true
			p.killGroup()
		} else {
			p.gotOut = true // a process that left the group holds stdout
		}
	}
}

func (p *polled) killGroup() { syscall.Kill(-p.pid, syscall.SIGKILL) }

// poll waits until one of the open descriptors is ready, or until, and
// handles what is ready; false means until passed first.
func (p *polled) poll(until time.Time) bool {
	type pollFd struct {
		fd            int32
		events, ready int16
	}
	const pollIn, pollOut = 0x1, 0x4
	var set [4]pollFd
	n := 0
	add := func(fd int, ev int16) {
		if fd >= 0 {
			set[n] = pollFd{fd: int32(fd), events: ev}
			n++
		}
	}
	if !p.exited {
		add(p.pidfd, pollIn)
	}
	if !p.gotOut {
		add(p.out, pollIn)
	}
	add(p.err, pollIn)
	if len(p.payload) > 0 {
		add(p.in, pollOut)
	}
	wait := time.Until(until)
	if wait <= 0 || n == 0 {
		return false
	}
	ts := syscall.NsecToTimespec(int64(wait))
	r, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&set[0])), uintptr(n), uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	switch {
	case errno == syscall.EINTR:
		return true
	case errno != 0 || r == 0:
		return false // until passed (or ppoll failed: the caller's deadline acts)
	}
	for _, s := range set[:n] {
		if s.ready == 0 {
			continue
		}
		switch int(s.fd) {
		case p.pidfd:
			p.reaped()
		case p.out:
			p.readOut()
		case p.err:
			p.readErr()
		case p.in:
			p.write()
		}
	}
	return true
}

// reaped collects the handler's status once its pidfd said it ended, and
// kills what it left in its group.
func (p *polled) reaped() {
	p.status, p.waitErr = reap(p.pid)
	p.exited = true
	p.killGroup()
	p.close(&p.pidfd)
	p.outDrain = time.Now().Add(pipeDrain)
}

// readOut reads what stdout holds: at its end, or once past max (the
// handler's group then killed and reaped), stdout is read.
func (p *polled) readOut() {
	for !p.gotOut {
		if len(p.stdout) == cap(p.stdout) {
			p.stdout = slices.Grow(p.stdout, min(max(cap(p.stdout), 512), p.max+1-len(p.stdout)))
		}
		n, err := syscall.Read(p.out, p.stdout[len(p.stdout):cap(p.stdout)])
		if n > 0 {
			p.stdout = p.stdout[:len(p.stdout)+n]
		}
		switch {
		case len(p.stdout) > p.max:
			p.stdout, p.over, p.gotOut = p.stdout[:p.max], true, true
			if !p.exited {
				p.killGroup()
				p.status, p.waitErr = reap(p.pid)
				p.exited = true
			}
		case err == syscall.EAGAIN:
			return
		case err == syscall.EINTR:
		case n <= 0:
			p.gotOut = true // the end, or an error that ends it
		}
	}
}

// readErr reads what stderr holds, keeping maxStderr bytes of it.
func (p *polled) readErr() {
	var buf [4096]byte
	for p.err >= 0 {
		n, err := syscall.Read(p.err, buf[:])
		if n > 0 {
			p.stderr = append(p.stderr, buf[:min(n, maxStderr-len(p.stderr))]...)
		}
		switch {
		case err == syscall.EAGAIN:
			return
		case err == syscall.EINTR:
		case n <= 0:
			p.close(&p.err)
		}
	}
}

// write writes what it can of the payload to the handler's stdin, and
// closes it once all is written or the handler will read no more (EPIPE:
// a handler need not read its stdin).
func (p *polled) write() {
	for len(p.payload) > 0 && p.in >= 0 {
		n, err := syscall.Write(p.in, p.payload)
		if n > 0 {
			p.payload = p.payload[n:]
		}
		switch {
		case err == syscall.EAGAIN:
			return
		case err == syscall.EINTR:
		case err != nil:
			p.payload = nil
		}
	}
	p.close(&p.in)
}

func (p *polled) close(fd *int) {
	if *fd >= 0 {
		syscall.Close(*fd)
		*fd = -1
	}
}

func (p *polled) closeAll() {
	p.close(&p.in)
	p.close(&p.out)
	p.close(&p.err)
	p.close(&p.pidfd)
}
