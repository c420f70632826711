// Package gitrepo keeps a git source's bare repository in the store and
// reads package files out of its object store, through the system git,
// run hardened.
//
// Every git run has the same guards. Transports are https, ssh and file
// only, checked before git runs and given to git (GIT_ALLOW_PROTOCOL), so
// that redirects, url.<base>.insteadOf and remote helpers cannot reach
// another. Every URL follows "--". Nothing recurses into submodules.
// Git never prompts (GIT_TERMINAL_PROMPT=0, no terminal: it runs in a
// session of its own) and ssh runs with -o BatchMode=yes. Hooks are off
// (core.hooksPath=/dev/null, no templates), git never collects garbage on
// its own (so a pinned commit stays), and the variables that point git at
// another repository are dropped. Each run has a timeout, after which git
// and everything it started are killed; on Linux they die with dalo too.
// Credentials written in a URL reach git through a credential helper that
// reads them from git's environment, for that one fetch: never on a
// command line, never stored, never printed.
//
// Package files are read at a commit with ls-tree and cat-file, from the
// objects as they are: there is no checkout and no work tree, so no
// filter, attribute or hook ever runs (see [Repo.WriteTree]).
package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"dalo/internal/lazyregexp"
	"dalo/internal/termtext"
)

// Timeout bounds each git run: a fetch that takes longer is killed, with
// everything it started, and is an error.
var Timeout = 10 * time.Minute

// ErrNoGit is the error when there is no git to run.
var ErrNoGit = errors.New("git is not installed: dalo fetches git sources with the system git, and found none on PATH; install git, or add the source as a directory")

// A Git runs the system git.
type Git struct {
	Path string
	ssh  string // sshCommand, once known
	// Started, when set, is called once each fetch's git is running (the
	// crash test kills dalo there, mid-fetch).
	Started func()
}

// Find finds git on PATH.
func Find() (*Git, error) {
	p, err := exec.LookPath("git")
	if err != nil {
		return nil, ErrNoGit
	}
	return &Git{Path: p}, nil
}

// An Error is a git run that failed: what git said, its credentials
// removed.
type Error struct {
	Op     string // "fetch", "rev-parse", ...
	Status int    // -1: killed or not started
	Stderr string
}

// Error is "git OP: " and git's own fatal or error lines (its last line
// when it printed neither), else its exit status.
func (e *Error) Error() string {
	msg := gitMessage(e.Stderr)
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.Status)
	}
	return "git " + e.Op + ": " + msg
}

// gitMessage is the part of git's stderr that says what went wrong: its
// fatal and error lines, else its last line.
func gitMessage(stderr string) string {
	var lines, last []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		last = []string{l}
		if strings.HasPrefix(l, "fatal: ") || strings.HasPrefix(l, "error: ") {
			lines = append(lines, l)
		}
	}
	if lines == nil {
		lines = last
	}
	return strings.Join(lines, "; ")
}

// dropEnv are the variables that would point git at another repository,
// index or object store than the one dalo names, or inject configuration
// a parent git set for itself.
var dropEnv = lazyregexp.New(`^(GIT_DIR|GIT_WORK_TREE|GIT_INDEX_FILE|GIT_OBJECT_DIRECTORY|GIT_ALTERNATE_OBJECT_DIRECTORIES|GIT_COMMON_DIR|GIT_NAMESPACE|GIT_PREFIX|GIT_QUARANTINE_PATH|GIT_CONFIG_PARAMETERS|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_[0-9]+|GIT_CONFIG_VALUE_[0-9]+|GIT_SSH|GIT_SSH_COMMAND|GIT_TERMINAL_PROMPT|GIT_ALLOW_PROTOCOL|GIT_LITERAL_PATHSPECS|GIT_PROTOCOL_FROM_USER)=`)

// environ is git's environment: the user's (their proxies, CA bundles,
// ssh keys and credential helpers are theirs to set), without dropEnv,
// with the guards.
func environ(sshCommand string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !dropEnv.MatchString(kv) {
			env = append(env, kv)
		}
	}
	env = append(env,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ALLOW_PROTOCOL="+strings.Join(Transports, ":"),
		"GIT_PROTOCOL_FROM_USER=0",
		"GIT_LITERAL_PATHSPECS=1",
		"GIT_SSH_COMMAND="+sshCommand,
		"LC_ALL=C",
	)
	if os.Getenv("GIT_SSH_VARIANT") == "" {
		// dalo adds OpenSSH's -o BatchMode=yes to whatever ssh command
		// the user set: tell git it is OpenSSH, so that it passes -p and
		// -o in that form too.
		env = append(env, "GIT_SSH_VARIANT=ssh")
	}
	return env
}

// sshCommand is the ssh command the user set for git (GIT_SSH_COMMAND,
// GIT_SSH, else plain ssh), in batch mode: it never asks for a password,
// a passphrase or whether to trust a host key. core.sshCommand, a setting
// of git's, is read by git after GIT_SSH_COMMAND, so dalo asks git for it.
func (g *Git) sshCommand() string {
	if g.ssh != "" {
		return g.ssh
	}
	base := os.Getenv("GIT_SSH_COMMAND")
	if base == "" {
		if p := os.Getenv("GIT_SSH"); p != "" {
			base = termtext.ShellQuote(p)
		}
	}
	if base == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, g.Path, "config", "--get", "core.sshCommand")
		c.Env, c.Dir = environ("ssh"), os.TempDir()
		out, err := c.Output()
		if err == nil {
			base = strings.TrimSpace(string(out))
		}
	}
	if base == "" {
		base = "ssh"
	}
	g.ssh = base + " -o BatchMode=yes"
	return g.ssh
}

// guards are the -c options of every run.
var guards = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "fetch.recurseSubmodules=false",
	"-c", "submodule.recurse=false",
	"-c", "fetch.writeCommitGraph=false",
	"-c", "protocol.version=2",
}

// A run is one git process.
type run struct {
	g      *Git
	dir    string   // the repository (--git-dir), or "" for none
	pre    []string // options before the command (-c ...)
	op     string   // the command: fetch, rev-parse, ...
	args   []string // its arguments
	stdin  io.Reader
	stdout io.Writer
	extra  []string // environment beyond environ's
	url    URL      // whose credentials to redact from what git says
	// fileBytes, when not 0, bounds each file git and what it starts
	// write (RLIMIT_FSIZE, set by the shell that execs git): a write
	// past it fails and kills the writer.
	fileBytes int64
	stderr    *string // when not nil, what git said, also when it succeeded
}

func (r *run) cmd(ctx context.Context) *exec.Cmd {
	args := append([]string(nil), guards...)
	if r.dir != "" {
		args = append(args, "--git-dir="+r.dir)
	}
	args = append(args, r.pre...)
	args = append(args, r.op)
	args = append(args, r.args...)
	c := exec.CommandContext(ctx, r.g.Path, args...)
	if r.fileBytes > 0 {
		// POSIX sets no process's limits but its own: the shell sets the
		// limit, in 512-byte blocks, and execs git in its place (the same
		// process, so the group and the timeout are as without it). It
		// fails only above a hard limit the user set lower, which then
		// bounds git more tightly.
		blocks := strconv.FormatInt(max(r.fileBytes/512, 1), 10)
		c = exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `ulimit -f "$1" 2>/dev/null; shift; exec "$@"`, "sh", blocks, r.g.Path}, args...)...)
	}
	c.Env = append(environ(r.g.sshCommand()), r.extra...)
	c.Stdin = r.stdin
	c.Dir = os.TempDir() // never a work tree the user is in
	c.SysProcAttr = sysProcAttr()
	// Git and what it starts (ssh, the https helper) are one process
	// group: the timeout kills all of them.
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 5 * time.Second
	return c
}

// do runs r and returns its stdout.
func (r *run) do(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	c := r.cmd(ctx)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &limited{w: &stderr, n: 64 << 10}
	if r.stdout != nil {
		c.Stdout = r.stdout
	}
	if err := c.Start(); err != nil {
		return nil, r.fail(-1, err.Error())
	}
	if r.g.Started != nil && r.op == "fetch" {
		r.g.Started()
	}
	err := c.Wait()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, r.fail(-1, fmt.Sprintf("fatal: no answer within %v; git and what it started were stopped", Timeout))
	}
	if err != nil {
		status := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			status = ee.ExitCode()
		}
		msg := stderr.String()
		if msg == "" {
			msg = err.Error()
		}
		return nil, r.fail(status, msg)
	}
	if r.stderr != nil {
		*r.stderr = r.url.redact(stderr.String())
	}
	return stdout.Bytes(), nil
}

func (r *run) fail(status int, stderr string) *Error {
	return &Error{Op: r.op, Status: status, Stderr: r.url.redact(stderr)}
}

// limited keeps at most n bytes of what is written to it: git's stderr is
// for a message, and a hostile server must not fill memory with it.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
