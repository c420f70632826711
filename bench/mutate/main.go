// Command mutate is a small mutation tester: it applies, one at a time, the
// realistic one-line bugs listed in a mutants file (a flipped comparison, a
// dropped check, an off-by-one, a skipped fsync, an ignored error), runs
// the tests named for each with a timeout, restores the file, and prints
// which mutants the tests killed and which survived, with a score. Run
// from the repository root:
//
//	go run ./bench/mutate [-match substring] [-timeout 5m] [bench/mutate/mutants.txt]
//
// A survivor is a behaviour no test pins: write the test that fails with
// it, then run the mutant again (-match file.go:line).
//
// The mutants file holds blocks separated by blank lines; # starts a
// comment line. A block is a header, the line to change and its
// replacement:
//
//	dispatch/trust.go ./dispatch -run ^TestTrustTampering$
//	- if got := hex.EncodeToString(h.Sum(nil)); got != want.SHA256 || n != want.Size {
//	+ if got := hex.EncodeToString(h.Sum(nil)); n != want.Size {
//
// The header names the file, then the arguments of go test (packages, and
// optionally -run): what should kill the mutant. The "-" line is matched,
// leading and trailing space ignored, against exactly one line of the
// file, so that the list survives edits elsewhere; a file named as
// file@k takes the k-th of several equal lines. An empty "+" line drops
// the line. The replacement keeps the line's indentation.
//
// Every file is restored from the bytes read before it was changed, after
// each mutant and on an interrupt, so the tree is never left mutated.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A mutant is one line of one file changed.
type mutant struct {
	file    string
	args    []string // of go test
	old     string   // trimmed
	new     string   // trimmed; "" drops the line
	nth     int      // which of equal lines, 0 for the only one
	line    int      // 1-based, found in file
	defined string   // where the mutants file defines it
}

func (m *mutant) name() string { return fmt.Sprintf("%s:%d", m.file, m.line) }

func main() {
	match := flag.String("match", "", "run only the mutants whose file:line contains this")
	timeout := flag.Duration("timeout", 5*time.Minute, "how long the tests of one mutant may run")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/mutate [-match substring] [-timeout d] [mutants file]")
		flag.PrintDefaults()
	}
	flag.Parse()
	list := "bench/mutate/mutants.txt"
	if flag.NArg() == 1 {
		list = flag.Arg(0)
	} else if flag.NArg() > 1 {
		flag.Usage()
		os.Exit(2)
	}
	ms, err := parse(list)
	if err == nil {
		err = locate(ms)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(2)
	}
	var run []*mutant
	for _, m := range ms {
		if strings.Contains(m.name(), *match) {
			run = append(run, m)
		}
	}
	os.Exit(mutate(run, *timeout))
}

// parse reads the mutants file.
func parse(list string) ([]*mutant, error) {
	data, err := os.ReadFile(list)
	if err != nil {
		return nil, err
	}
	var (
		ms    []*mutant
		block []string
		start int
	)
	flush := func() error {
		if len(block) == 0 {
			return nil
		}
		defer func() { block = nil }()
		at := fmt.Sprintf("%s:%d", list, start)
		if len(block) != 3 || !strings.HasPrefix(block[1], "-") || !strings.HasPrefix(block[2], "+") {
			return fmt.Errorf("%s: a mutant is a header, a \"-\" line and a \"+\" line", at)
		}
		f := strings.Fields(block[0])
		if len(f) < 2 {
			return fmt.Errorf("%s: the header names the file and the packages to test", at)
		}
		file, nth := f[0], 0
		if i := strings.LastIndex(file, "@"); i >= 0 {
			k, err := strconv.Atoi(file[i+1:])
			if err != nil || k < 1 {
				return fmt.Errorf("%s: %s: after @ goes which of equal lines, from 1", at, file)
			}
			file, nth = file[:i], k
		}
		m := &mutant{file: file, nth: nth, args: f[1:], old: strings.TrimSpace(block[1][1:]), new: strings.TrimSpace(block[2][1:]), defined: at}
		if m.old == "" || m.old == m.new {
			return fmt.Errorf("%s: the mutant changes nothing", at)
		}
		ms = append(ms, m)
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "#"):
		case strings.TrimSpace(l) == "":
			if err := flush(); err != nil {
				return nil, err
			}
		default:
			if len(block) == 0 {
				start = n
			}
			block = append(block, l)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return ms, nil
}

// locate finds each mutant's line, which must be exactly one of its file.
func locate(ms []*mutant) error {
	var errs []error
	for _, m := range ms {
		data, err := os.ReadFile(filepath.FromSlash(m.file))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", m.defined, err))
			continue
		}
		var at []int
		for i, l := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(l) == m.old {
				at = append(at, i+1)
			}
		}
		switch {
		case len(at) == 0:
			errs = append(errs, fmt.Errorf("%s: no line of %s is %q", m.defined, m.file, m.old))
		case m.nth == 0 && len(at) > 1:
			errs = append(errs, fmt.Errorf("%s: %q is on lines %v of %s: name one as %s@k", m.defined, m.old, at, m.file, m.file))
		case m.nth > len(at):
			errs = append(errs, fmt.Errorf("%s: %q is on %d lines of %s, not %d", m.defined, m.old, len(at), m.file, m.nth))
		case m.nth == 0:
			m.line = at[0]
		default:
			m.line = at[m.nth-1]
		}
	}
	return errors.Join(errs...)
}

// restorer puts back the file a mutant changed, once, from whichever
// goroutine gets there first: the loop, or an interrupt.
type restorer struct {
	mu   sync.Mutex
	name string
	data []byte
	mode os.FileMode
}

func (r *restorer) set(name string, data []byte, mode os.FileMode) {
	r.mu.Lock()
	r.name, r.data, r.mode = name, data, mode
	r.mu.Unlock()
}

func (r *restorer) restore() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.name == "" {
		return nil
	}
	err := os.WriteFile(r.name, r.data, r.mode)
	if err == nil {
		r.name = ""
	}
	return err
}

func mutate(ms []*mutant, timeout time.Duration) int {
	var r restorer
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		running.Lock()
		if running.cmd != nil {
			killGroup(running.cmd) // in its own group, so not interrupted with us
		}
		running.Unlock()
		if err := r.restore(); err != nil {
			fmt.Fprintf(os.Stderr, "mutate: %v: RESTORE %s BY HAND (git checkout)\n", s, r.name)
			os.Exit(3)
		}
		fmt.Fprintf(os.Stderr, "mutate: %v: files restored\n", s)
		os.Exit(2)
	}()

	// The tests must pass unmutated, or every mutant would look killed.
	base := map[string]bool{}
	for _, m := range ms {
		key := strings.Join(m.args, " ")
		if base[key] {
			continue
		}
		base[key] = true
		if ok, _, out := goTest(m.args, timeout); !ok {
			fmt.Fprintf(os.Stderr, "mutate: the tests fail without a mutant: go test %s\n%s", key, out)
			return 2
		}
	}

	var killed, survived, broken []*mutant
	for _, m := range ms {
		name := filepath.FromSlash(m.file)
		fi, err := os.Stat(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mutate:", err)
			return 2
		}
		orig, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mutate:", err)
			return 2
		}
		lines := strings.Split(string(orig), "\n")
		l := lines[m.line-1]
		if strings.TrimSpace(l) != m.old {
			fmt.Fprintf(os.Stderr, "mutate: %s changed while mutants ran\n", m.name())
			return 2
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		lines[m.line-1] = indent + m.new
		if m.new == "" {
			lines[m.line-1] = ""
		}
		r.set(name, orig, fi.Mode().Perm())
		if err := os.WriteFile(name, []byte(strings.Join(lines, "\n")), fi.Mode().Perm()); err != nil {
			r.restore()
			fmt.Fprintln(os.Stderr, "mutate:", err)
			return 2
		}
		start := time.Now()
		ok, built, out := goTest(m.args, timeout)
		if err := r.restore(); err != nil {
			fmt.Fprintf(os.Stderr, "mutate: %v: RESTORE %s BY HAND (git checkout)\n", err, name)
			return 3
		}
		verdict := "killed"
		switch {
		case !built:
			verdict = "does not build"
			broken = append(broken, m)
		case ok:
			verdict = "SURVIVED"
			survived = append(survived, m)
		default:
			killed = append(killed, m)
		}
		fmt.Printf("%-14s %-32s %5.1fs  %s\n", verdict, m.name(), time.Since(start).Seconds(), m.new)
		if !built {
			fmt.Printf("%s", out)
		}
	}
	if n := len(killed) + len(survived); n > 0 {
		fmt.Printf("\n%d of %d mutants killed (%.1f%%)", len(killed), n, 100*float64(len(killed))/float64(n))
		if len(broken) > 0 {
			fmt.Printf("; %d did not build (fix the mutants file)", len(broken))
		}
		fmt.Println()
	}
	for _, m := range survived {
		fmt.Printf("survived: %s (%s): - %s + %s\n", m.name(), m.defined, m.old, m.new)
	}
	if len(survived)+len(broken) > 0 {
		return 1
	}
	return 0
}

// running is the go test under way, which an interrupt kills.
var running struct {
	sync.Mutex
	cmd *exec.Cmd
}

// goTest runs go test with args, uncached, and reports whether it passed,
// whether it built, and its output. A test binary that outlives timeout
// (plus the time to build and report) is killed with its process group.
func goTest(args []string, timeout time.Duration) (ok, built bool, out []byte) {
	cmd := exec.Command("go", append([]string{"test", "-count=1", "-timeout", timeout.String()}, args...)...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	setpgid(cmd)
	running.Lock()
	err := cmd.Start()
	if err == nil {
		running.cmd = cmd
	}
	running.Unlock()
	if err != nil {
		return false, false, []byte(err.Error())
	}
	defer func() {
		running.Lock()
		running.cmd = nil
		running.Unlock()
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(timeout + 2*time.Minute):
		killGroup(cmd)
		err = <-done
	}
	out = buf.Bytes()
	built = !bytes.Contains(out, []byte("[build failed]")) && !bytes.Contains(out, []byte("[setup failed]"))
	return err == nil, built, out
}
