// Package hookdispatch is `dalo hook dispatch`, the command a harness's
// hook configuration calls on every event: flags, checks, signals and the
// call into package dispatch. Two binaries serve it, dalo (as `dalo hook
// dispatch`) and dalo-hook (as `dalo-hook dispatch`), which links neither
// CUE nor the validator nor the store, since a harness starts it on every
// tool call and Go initialises every linked package on every start.
package hookdispatch

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"dalo/dispatch"
	"dalo/plan"
)

// Name is the command's name under dalo.
const Name = plan.DaloDispatch

// Usage is the command's usage line. The providers are the tables'
// (plan.Known). A function, as ProviderHelp: made when it is printed, not
// at every dispatcher start.
func Usage() string {
	return "--provider " + strings.Join(dispatch.KnownProviders(), "|") + " --event NATIVE_EVENT [--home DIR] [--project ID] [--fail-closed] [--check]"
}

// Short is the command's one-line summary.
const Short = "run the approved hooks of a harness event"

// Options are the command's flags.
type Options struct {
	Provider, Event string
	// Home is the store the entry names (--home); empty, the store of the
	// environment ($DALO_HOME, ...).
	Home string
	// Project (--project) is the project scope whose plans answer, the
	// id 'dalo sync' gave it; empty, the user's own.
	Project string
	// FailClosed (--fail-closed) says a required fail_closed hook is
	// installed on the event: no plan to run it blocks the action.
	FailClosed bool
	// Check (--check) runs no handler: it reports, as JSON, what a
	// dispatch would find of each hook before its run.
	Check bool
}

// Exit statuses, as every dalo command uses them.
const (
	exitFail  = 1
	exitUsage = 2
)

// Doc is the command's help, shared by both binaries: doc with the
// interpreters of the tool runtimes (plan.Runtimes) in it, made when help
// is asked for, not on each start.
func Doc() string {
	var in []string
	for _, rt := range slices.Sorted(maps.Keys(plan.Runtimes)) {
		if i := plan.Runtimes[rt].Interpreter; i != "" && !slices.Contains(in, i) {
			in = append(in, i)
		}
	}
	found := "No interpreter is"
	switch n := len(in); n {
	case 0:
	case 1:
		found = in[0] + " is"
	default:
		found = strings.Join(in[:n-1], ", ") + " and " + in[n-1] + " are"
	}
	return strings.Replace(doc, "$interpreters", found, 1)
}

const doc = `Hook dispatch is what a harness's hook configuration calls, one entry per
native event. It reads the event's native JSON on stdin, runs every
installed and approved hook of that provider and event (from the dispatch
plan install wrote under $DALO_HOME/plans/<provider>.d: only the files of
this event and tool name), and answers the harness in its native hook
output format, as the provider table copied into the plan describes it.
A provider or event nothing is installed for answers nothing; one that no
provider table names (a misspelt entry) is an error.

Install writes entries that name their store with --home, so that a
harness started with another environment (an IDE, a service, sudo)
dispatches against the store that installed them; without --home the
store is $DALO_HOME, else $XDG_DATA_HOME/dalo, else ~/.local/share/dalo.
An entry 'dalo sync' wrote into a project's own settings adds --project
with the id of that project's scope: its plans are the store's
projects/<id>/plans, and the grants are the user's.
On an event where a required fail_closed hook is installed the entry adds
--fail-closed: a plan that cannot be loaded, or no plan at all, then
blocks the action as the hook's policy would (exit 2 with the reason on
stderr), except on a Stop that already went on once, which it lets end
(exit 1). --check runs no handler: it loads the plan and re-checks each
hook's grants, digests and staged tree, and prints what it found as JSON
(dalo doctor runs each entry's dispatcher so).

Before each run it re-checks both grants and every staged file; a revoked
grant or a changed byte is a failure under the hook's failure policy. Each
handler runs with its declared argv, the staged tool root as cwd, only its
declared environment variables, the native JSON on stdin and a hard
timeout. $interpreters found on dalo's own PATH.

dalo-hook, the dispatch-only binary built beside dalo (cmd/dalo-hook), runs
this same command as 'dalo-hook dispatch' and links no CUE, so it adds
less than half of dalo's overhead to each event; install writes entries
that call it when one of the same build sits beside dalo, else
'dalo hook dispatch'.

See docs/dispatch.md for the policies and how results compose.

Stopped by SIGTERM, SIGINT or SIGHUP (a harness that stops waiting), it
kills every running handler's process group and exits 1. Killed outright
(SIGKILL), on Linux its handlers are killed by the kernel.

Exit status: 0 with the native answer on stdout (possibly empty); 1 when
the provider or event is unknown, the plan cannot be read, a failure must
reach the user on SessionEnd (whose output harnesses ignore), or it was
stopped, with the diagnostic on stderr (harnesses show it to the user and
go on); 2 bad usage (a flag missing or unknown), or with --fail-closed the
harness's blocking status when no plan can run the event's hooks.

Examples:
  dalo hook dispatch --provider claude --event PreToolUse < payload.json
  dalo-hook dispatch --provider copilot --event PreToolUse < payload.json
  dalo-hook dispatch --provider codex --event Stop < payload.json
`

// The flags' help, for each binary's flag set: dalo's are spf13/pflag,
// dalo-hook's the standard library's, since pflag links package net, and
// with it cgo and the dynamic loader, into every start.
func ProviderHelp() string {
	return "the harness: " + strings.Join(dispatch.KnownProviders(), ", ")
}

// The help of the other flags.
const (
	EventHelp      = "the native event name: PreToolUse, Stop, ..."
	HomeHelp       = "the store to dispatch from (absolute); default $DALO_HOME, ..."
	ProjectHelp    = "the project scope to dispatch from (its id); default the user's own"
	FailClosedHelp = "a required fail_closed hook is installed on the event: block when no plan can run it"
	CheckHelp      = "run no handler: print, as JSON, what a dispatch would find of each hook"
)

// Run runs the command cmd ("dalo hook dispatch", "dalo-hook dispatch",
// as its messages name it) with the flags o, args being the operands after
// the flags (there must be none): it answers the event read from stdin on
// stdout and returns the exit status.
func Run(cmd string, o Options, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	usage := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", cmd, fmt.Sprintf(format, args...), cmd)
		return exitUsage
	}
	switch {
	case len(args) != 0:
		return usage("unexpected arguments: %q", args)
	case o.Provider == "":
		return usage("--provider is required")
	case o.Event == "":
		return usage("--event is required")
	case o.Home != "" && !filepath.IsAbs(o.Home):
		return usage("--home %q is not an absolute path", o.Home)
	case o.Project != "" && !plan.ValidProject(o.Project):
		return usage("--project %q is not a project scope's id (16 hexadecimal digits)", o.Project)
	}
	home := filepath.Clean(o.Home)
	if o.Home == "" {
		var err error
		if home, err = plan.Home(); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
			return exitFail
		}
	}
	if o.Check {
		checks, err := dispatch.Check(home, o.Project, o.Provider, o.Event)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
			return exitFail
		}
		b, _ := json.Marshal(checks)
		fmt.Fprintf(stdout, "%s\n", b)
		return 0
	}
	provider, event := o.Provider, o.Event
	// A harness that stops waiting for the event stops dalo (SIGTERM; a
	// terminal's SIGINT or SIGHUP): every running handler is killed with
	// it, since nothing would read its result. The signals are caught from
	// just before the first handler starts: until then a stop has nothing
	// to kill, and a dispatch that runs no handler (most tool calls) does
	// not pay for the thread os/signal starts.
	//
	// The stop holds answer for good: once the signal is taken, the
	// dispatch its killed handlers end may return, and must not answer
	// (exit 0, its handlers' failures as the result) before the stop
	// exits 1. A dispatch that returned before the signal answers.
	var answer sync.Mutex
	sigs := make(chan os.Signal, 1)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	starting := func() {
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		go func() {
			select {
			case sig := <-sigs:
				answer.Lock()
				dispatch.Interrupt()
				if StopHook != nil {
					StopHook()
				}
				fmt.Fprintf(stderr, "%s: stopped by %s; the running handlers were killed\n", cmd, signalName(sig))
				os.Exit(exitFail)
			case <-done:
			}
		}()
	}
	req := dispatch.Request{Home: home, Project: o.Project, Provider: provider, Event: event, Getenv: os.LookupEnv, FailClosed: o.FailClosed, Starting: starting}
	var err error
	req.Payload, err = io.ReadAll(io.LimitReader(stdin, dispatch.MaxPayload+1))
	switch {
	case err != nil:
		req.PayloadErr = fmt.Errorf("reading the native payload: %v", err)
	case len(req.Payload) > dispatch.MaxPayload:
		req.PayloadErr = fmt.Errorf("the native payload is over %d bytes", dispatch.MaxPayload)
		req.Payload = nil
	}
	out, err := dispatch.Dispatch(req)
	answer.Lock() // held for good by a stop under way, which exits
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitFail
	}
	stdout.Write(out.Stdout)
	stderr.Write(out.Stderr)
	if Exit != nil {
		Exit(out.Exit)
	}
	return out.Exit
}

// Exit, when set, ends the process with the status of a dispatch that
// answered, as soon as the answer is written: a dispatcher binary whose
// process ends there anyway (cmd/dalo-hook) sets it to os.Exit, since
// Run's deferred stop of signal delivery, once a handler ran, wakes the
// runtime's signal thread and costs threads of its own at every tool call.
// Run called in a process that goes on (tests, the dalo binary) leaves it
// nil and stops signal delivery before it returns.
var Exit func(code int)

// StopHook, when set, is called when a signal stopped the dispatch,
// between killing the handlers and exiting. Only a test sets it (in a
// _test.go file of the command), to widen the window in which the
// dispatch, its handlers killed, returns first.
var StopHook func()

// Hook is the command line of dalo-hook, whose one command is dispatch:
// `dalo-hook dispatch --provider P --event E` runs as `dalo hook dispatch`
// does and returns the exit status.
func Hook(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	const cmd = plan.HookBinary + " " + plan.HookDispatch
	usage := "Usage: " + cmd + " " + Usage() + "\n"
	if len(args) == 0 || args[0] != plan.HookDispatch {
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "%s: the only command is %s\n%s", plan.HookBinary, plan.HookDispatch, usage)
		return exitUsage
	}
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o Options
	fs.StringVar(&o.Provider, "provider", "", "") // ProviderHelp, when help is asked for
	fs.StringVar(&o.Event, "event", "", EventHelp)
	fs.StringVar(&o.Home, "home", "", HomeHelp)
	fs.StringVar(&o.Project, "project", "", ProjectHelp)
	fs.BoolVar(&o.FailClosed, "fail-closed", false, FailClosedHelp)
	fs.BoolVar(&o.Check, "check", false, CheckHelp)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.Lookup("provider").Usage = ProviderHelp()
			fmt.Fprintf(stdout, "%s\n%s\nFlags:\n", usage, Doc())
			fs.VisitAll(func(f *flag.Flag) {
				typ := "string"
				if f.DefValue == "false" {
					typ = "      "
				}
				fmt.Fprintf(stdout, "  --%-12s %s   %s\n", f.Name, typ, f.Usage)
			})
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v\n%s", cmd, err, usage)
		return exitUsage
	}
	return Run(cmd, o, fs.Args(), stdin, stdout, stderr)
}

// signalName is the name a user knows a stop signal by.
func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}
