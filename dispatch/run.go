package dispatch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"dalo/plan"
)

// maxStderr is how much of a handler's stderr is kept for the user; the
// rest is read and dropped so that the handler never blocks on it.
const maxStderr = 4 << 10

// pipePage is what an empty pipe takes without blocking the writer: its
// capacity is at least a page (pipe(7): a user over the pipe buffer limits
// gets pipes of one page), and writes of up to PIPE_BUF bytes are atomic.
const pipePage = 4096

// pipeDrain bounds how long the handler's stdout and stderr are still read
// once its process group is dead: a process that left the group may hold
// them open.
var pipeDrain = 250 * time.Millisecond // a variable so that a test can widen it

// polledRuns says whether run awaits handlers on one thread where the
// system can (runPolled); only a test turns it off, to run the portable
// wait a kernel without pidfds gets.
var polledRuns = true

// A command is one handler invocation, ready to start.
type command struct {
	path string   // the program: the interpreter, or the staged entry
	args []string // argv[1:]
	dir  string   // the staged tool root
	env  []string // only the declared names the dispatcher has
}

// newCommand builds the invocation of h's tool for an event with fields f:
//
//   - with an interpreter (plan.Runtimes, compiled from #Runtimes of the
//     rules; no plan names one, and no grant binds it): the interpreter,
//     looked up on the dispatcher's own PATH (the PATH the harness gave
//     dalo, not the handler's environment: PATH reaches the handler only
//     if its tool declares it in env), its arguments (python3's -E -s -B),
//     the staged entry, then argv;
//     without: the staged entry, then argv;
//   - an argument that is exactly ${input.NAME} is replaced by the value of
//     the input, bound from an event field (booleans as "true"/"false");
//     an optional input without a binding drops that argument, since an
//     empty string would be a value the handler cannot tell from a real
//     one; a bound field the payload lacks is a missing runtime binding
//     and an error, for required and optional inputs alike;
//   - the environment holds only the names the tool declares, with the
//     dispatcher's values; a declared name the dispatcher lacks is unset.
func newCommand(h *plan.PlannedHook, f Fields, getenv func(string) (string, bool)) (*command, error) {
	t := &h.Tool
	c := &command{dir: t.Root}
	entry := filepath.Join(t.Root, t.Entry)
	rt, ok := plan.Runtimes[t.Runtime]
	switch {
	case !ok:
		return nil, fmt.Errorf("runtime %q is not one this dalo runs", t.Runtime)
	case rt.Interpreter == "":
		c.path = entry
	default:
		p, err := exec.LookPath(rt.Interpreter)
		if err != nil {
			return nil, fmt.Errorf("runtime %s: %s not found on dalo's PATH", t.Runtime, rt.Interpreter)
		}
		c.path = p
		c.args = append(append([]string(nil), rt.Args...), entry)
	}
	values := map[string]string{}
	for _, b := range h.Bindings {
		v, ok := f[b.Field]
		if !ok {
			return nil, fmt.Errorf("missing runtime binding: the native payload has no %s for input %s", b.Field, b.Input)
		}
		switch v := v.(type) {
		case bool:
			values[b.Input] = strconv.FormatBool(v)
		case string:
			values[b.Input] = v
		}
	}
	for _, a := range t.Argv {
		name, ok := inputRef(a)
		if !ok {
			c.args = append(c.args, a)
			continue
		}
		if v, ok := values[name]; ok {
			c.args = append(c.args, v)
			continue
		}
		in := findInput(t.Inputs, name)
		switch {
		case in == nil:
			return nil, fmt.Errorf("argv names undeclared input %s", name)
		case in.Required:
			return nil, fmt.Errorf("required input %s has no binding", name)
		}
		// An unbound optional input: its argument is dropped.
	}
	for _, name := range t.Env {
		if v, ok := getenv(name); ok {
			c.env = append(c.env, name+"="+v)
		}
	}
	if c.env == nil {
		c.env = []string{} // not nil: exec would pass dalo's whole environment
	}
	return c, nil
}

// inputRef reports whether a interpolates an input, as the rules'
// grammar has it (#ArgvInterpolation: ${input.NAME}, whole), and which.
// The validator refused every other argument that holds a substitution,
// so the prefix and suffix alone tell one; a name that is no declared
// input fails the run (newCommand).
func inputRef(a string) (string, bool) {
	name, ok := strings.CutPrefix(a, plan.ArgvPrefix)
	if !ok {
		return "", false
	}
	return strings.CutSuffix(name, plan.ArgvSuffix)
}

func findInput(ins []plan.PlannedInput, name string) *plan.PlannedInput {
	for i := range ins {
		if ins[i].Name == name {
			return &ins[i]
		}
	}
	return nil
}

// A handlerProcess is a started handler: its pid, which is also its
// process group's id, and how to wait for its end (startHandler).
type handlerProcess struct {
	pid  int
	wait func() (syscall.WaitStatus, error)
}

// live holds the process groups of the handlers running now, for
// Interrupt; once stopped, no handler starts.
var live struct {
	sync.Mutex
	groups  map[int]bool
	stopped bool
}

// Interrupt kills the process group of every running handler and keeps any
// other from starting. `dalo hook dispatch` calls it when it is told to
// stop (SIGTERM, SIGINT, SIGHUP: a harness cutting an event short, such as
// Codex's SessionEnd after 3 s while handler timeouts go to 120 s), so that
// no handler outlives the dispatcher. A dispatcher killed outright
// (SIGKILL) cannot: on Linux each handler then gets SIGKILL from the kernel
// (Pdeathsig), though what it started in its group does not.
func Interrupt() {
	live.Lock()
	defer live.Unlock()
	live.stopped = true
	for pgid := range live.groups {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// An exit is how a handler run ended.
type exit struct {
	stdout []byte
	stderr string // at most maxStderr bytes, for the user only
	err    error  // nil: exit status 0 within the limits
}

// run starts c in its own process group with payload on stdin and waits at
// most timeout. On timeout, or once stdout passes maxResponse bytes (the
// plan's limit), it kills the whole group (kill(-pgid, SIGKILL)). When
// the handler exits, processes it left behind in its group are killed too:
// a handler's work ends with its event. Reads of stdout stop at the
// deadline even if a process that left the group still holds the pipe.
func (c *command) run(payload []byte, timeout time.Duration, maxResponse int) exit {
	// Pdeathsig (see sysProcAttr) fires when the thread that started the
	// handler exits, not the process: hold this thread until Wait, so that
	// the runtime never retires it under a running handler.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	deadline := time.Now().Add(timeout)
	if polledRuns {
		if e, ok := c.runPolled(payload, deadline, timeout, maxResponse); ok {
			return e
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return exit{err: fmt.Errorf("starting handler: %v", err)}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return exit{err: fmt.Errorf("starting handler: %v", err)}
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return exit{err: fmt.Errorf("starting handler: %v", err)}
	}
	// Started and recorded under the lock: Interrupt either sees the
	// group or has already stopped this start.
	var h *handlerProcess
	live.Lock()
	if live.stopped {
		err = errors.New("dispatch was interrupted")
	} else if h, err = startHandler(c, inR, outW, errW); err == nil {
		if live.groups == nil {
			live.groups = map[int]bool{}
		}
		live.groups[h.pid] = true
	}
	live.Unlock()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return exit{err: fmt.Errorf("starting handler: %v", err)}
	}
	return await(h, inW, outR, errR, payload, deadline, timeout, maxResponse)
}

// await feeds the started handler h its payload on inW, reads its stdout
// (outR) and stderr (errR) and waits for its end or deadline, as run says,
// with a goroutine for each; it closes the three files.
func await(h *handlerProcess, inW, outR, errR *os.File, payload []byte, deadline time.Time, timeout time.Duration, maxResponse int) exit {
	pgid := h.pid
	killGroup := func() { syscall.Kill(-pgid, syscall.SIGKILL) }
	defer forget(pgid)

	// A handler need not read its stdin; EPIPE here is not an error. A
	// payload that fits an empty pipe (a page, the least a pipe holds) is
	// written here without blocking; a larger one by a goroutine, since
	// the handler may never read it.
	if len(payload) <= pipePage {
		inW.Write(payload)
		inW.Close()
	} else {
		go func() {
			inW.Write(payload)
			inW.Close()
		}()
	}
	type read struct {
		data []byte
		over bool
	}
	outc := make(chan read, 1)
	go func() {
		data, over := readCapped(outR, maxResponse, true)
		outc <- read{data, over}
	}()
	errc := make(chan string, 1)
	go func() {
		data, _ := readCapped(errR, maxStderr, false)
		errc <- string(data)
	}()
	type waited struct {
		status syscall.WaitStatus
		err    error
	}
	waitc := make(chan waited, 1)
	go func() {
		ws, err := h.wait()
		waitc <- waited{ws, err}
	}()

	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var (
		out      read
		gotOut   bool
		waitRes  waited
		exited   bool
		timedOut bool
	)
	for !(exited && gotOut) && !timedOut {
		select {
		case out = <-outc:
			gotOut = true
			if out.over && !exited {
				// The handler may have exited first: its wait
				// status is then already read.
				killGroup()
				waitRes = <-waitc
				exited = true
			}
		case waitRes = <-waitc:
			exited = true
			killGroup() // whatever the handler left in its group
			// What the group wrote is in the pipe; a process that
			// left the group (a daemon the handler started) may keep
			// stdout open for ever, and must not turn a handler that
			// answered and exited into a timeout: pipeDrain bounds the
			// rest of the read.
			if !gotOut {
				outR.SetReadDeadline(time.Now().Add(pipeDrain))
			}
		case <-timer.C:
			timedOut = true
			killGroup()
		}
	}
	if timedOut {
		outR.Close() // a process outside the group may still hold the pipe
		if !exited {
			<-waitc
		}
		if !gotOut {
			<-outc
		}
	}
	inW.Close()
	// The group is dead: what it wrote to stderr is in the pipe, and the
	// read ends at EOF, unless a process that left the group still holds
	// the pipe. A read deadline bounds the drain without dropping what is
	// buffered, however late the reader runs.
	errR.SetReadDeadline(time.Now().Add(pipeDrain))
	stderr := <-errc
	outR.Close()
	errR.Close()
	return exit{stdout: out.data, stderr: stderr, err: endError(out.over, timedOut, waitRes.status, waitRes.err, timeout, maxResponse)}
}

// endError says how a handler's run failed, or nil: its stdout went over
// maxResponse, it timed out, it could not be waited for, or it did not
// exit with status 0.
func endError(over, timedOut bool, status syscall.WaitStatus, waitErr error, timeout time.Duration, maxResponse int) error {
	switch {
	case over:
		return fmt.Errorf("handler wrote more than %d bytes to stdout and was killed", maxResponse)
	case timedOut:
		return fmt.Errorf("handler timed out after %d ms and was killed", timeout.Milliseconds())
	case waitErr != nil:
		return fmt.Errorf("handler: %v", waitErr)
	case status.Signaled():
		return fmt.Errorf("handler was killed by signal %v", status.Signal())
	case status.ExitStatus() != 0:
		return fmt.Errorf("handler exited with status %d", status.ExitStatus())
	}
	return nil
}

// forget drops the process group pgid, which is dead, from live.
func forget(pgid int) {
	live.Lock()
	delete(live.groups, pgid)
	live.Unlock()
}

// readCapped reads r, keeping at most max bytes. With stop, it returns as
// soon as r has more than max (over is then true) and the caller kills the
// writer; without, it keeps reading and dropping to the end, so that the
// writer never blocks on a full pipe.
//
// It reads into the buffer it returns, grown as the handler writes: most
// handlers answer in a few hundred bytes, and a dispatcher is a process of
// a few milliseconds, for which every fresh page of heap is a page fault.
// Past max, without stop, it reads the rest into io.Discard.
func readCapped(r io.Reader, max int, stop bool) (data []byte, over bool) {
	buf := make([]byte, 0, min(512, max+1))
	for {
		if len(buf) == cap(buf) {
			// Double, up to one byte past max: that byte says "over".
			buf = slices.Grow(buf, min(cap(buf), max+1-len(buf)))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > max {
			if !stop {
				io.Copy(io.Discard, r)
			}
			return buf[:max], true
		}
		if err != nil {
			return buf, false
		}
	}
}
