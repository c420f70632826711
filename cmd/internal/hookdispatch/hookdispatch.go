// Package hookdispatch is `dalo hook dispatch`, the command a harness's
// hook configuration calls on every event: flags, checks, signals and the
// call into package dispatch. Two binaries serve it, dalo (as `dalo hook
// dispatch`) and dalo-hook (as `dalo-hook dispatch`), which links neither
// CUE nor the validator nor the store, since a harness starts it on every
// tool call and Go initialises every linked package on every start.
package hookdispatch

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"dalo/dispatch"
	"dalo/store/plan"
)

// Name is the command's name under dalo.
const Name = plan.DaloDispatch

// Usage and Short are its usage line and one-line summary.
const (
	Usage = "--provider claude|codex --event NATIVE_EVENT"
	Short = "run the approved hooks of a harness event"
)

// Exit statuses, as every dalo command uses them.
const (
	exitFail  = 1
	exitUsage = 2
)

// Doc is the command's help, shared by both binaries.
const Doc = `Hook dispatch is what a harness's hook configuration calls, one entry per
native event. It reads the event's native JSON on stdin, runs every
installed and approved hook of that provider and event (from the dispatch
plan install wrote under $DALO_HOME/plans/<provider>.d: only the files of
this event and tool name), and answers the harness in its native hook
output format, as the provider table copied into the plan describes it.
A provider or event nothing is installed for answers nothing; one that no
provider table names (a misspelt entry) is an error.

Before each run it re-checks both grants and every staged file; a revoked
grant or a changed byte is a failure under the hook's failure policy. Each
handler runs with its declared argv, the staged tool root as cwd, only its
declared environment variables, the native JSON on stdin and a hard
timeout. node and python3 are found on dalo's own PATH.

dalo-hook, the dispatch-only binary built beside dalo (cmd/dalo-hook), runs
this same command as 'dalo-hook dispatch' and links no CUE, so it adds
less than half of dalo's overhead to each event; install writes entries
that call it when one of the same build sits beside dalo, else
'dalo hook dispatch'.

DALO_HOME defaults to $XDG_DATA_HOME/dalo, else ~/.local/share/dalo.
See docs/dispatch.md for the policies and how results compose.

Stopped by SIGTERM, SIGINT or SIGHUP (a harness that stops waiting), it
kills every running handler's process group and exits 1. Killed outright
(SIGKILL), on Linux its handlers are killed by the kernel.

Exit status: 0 with the native answer on stdout (possibly empty); 1 when
the provider or event is unknown, the plan cannot be read, a failure must
reach the user on SessionEnd (whose output harnesses ignore), or it was
stopped, with the diagnostic on stderr (harnesses show it to the user and
go on); 2 bad usage: a flag missing or unknown.

Examples:
  dalo hook dispatch --provider claude --event PreToolUse < payload.json
  dalo-hook dispatch --provider codex --event Stop < payload.json
`

// The flags' help, for each binary's flag set: dalo's are spf13/pflag,
// dalo-hook's the standard library's, since pflag links package net, and
// with it cgo and the dynamic loader, into every start.
const (
	ProviderHelp = "the harness: claude or codex"
	EventHelp    = "the native event name: PreToolUse, Stop, ..."
)

// Run runs the command cmd ("dalo hook dispatch", "dalo-hook dispatch",
// as its messages name it) for the --provider and --event given, args
// being the operands after the flags (there must be none): it answers the
// event read from stdin on stdout and returns the exit status.
func Run(cmd, provider, event string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	usage := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", cmd, fmt.Sprintf(format, args...), cmd)
		return exitUsage
	}
	switch {
	case len(args) != 0:
		return usage("unexpected arguments: %q", args)
	case provider == "":
		return usage("--provider is required")
	case event == "":
		return usage("--event is required")
	}
	home, err := plan.Home()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitFail
	}
	// A harness that stops waiting for the event stops dalo (SIGTERM; a
	// terminal's SIGINT or SIGHUP): every running handler is killed with
	// it, since nothing would read its result.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case sig := <-sigs:
			dispatch.Interrupt()
			fmt.Fprintf(stderr, "%s: stopped by %s; the running handlers were killed\n", cmd, signalName(sig))
			os.Exit(exitFail)
		case <-done:
		}
	}()
	req := dispatch.Request{Home: home, Provider: provider, Event: event, Getenv: os.LookupEnv}
	req.Payload, err = io.ReadAll(io.LimitReader(stdin, dispatch.MaxPayload+1))
	switch {
	case err != nil:
		req.PayloadErr = fmt.Errorf("reading the native payload: %v", err)
	case len(req.Payload) > dispatch.MaxPayload:
		req.PayloadErr = fmt.Errorf("the native payload is over %d bytes", dispatch.MaxPayload)
		req.Payload = nil
	}
	out, err := dispatch.Dispatch(req)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitFail
	}
	stdout.Write(out.Stdout)
	stderr.Write(out.Stderr)
	return out.Exit
}

// Hook is the command line of dalo-hook, whose one command is dispatch:
// `dalo-hook dispatch --provider P --event E` runs as `dalo hook dispatch`
// does and returns the exit status.
func Hook(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	const cmd = plan.HookBinary + " " + plan.HookDispatch
	const usage = "Usage: " + cmd + " " + Usage + "\n"
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
	provider := fs.String("provider", "", ProviderHelp)
	event := fs.String("event", "", EventHelp)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "%s\n%s\nFlags:\n", usage, Doc)
			fs.VisitAll(func(f *flag.Flag) { fmt.Fprintf(stdout, "  --%-10s string   %s\n", f.Name, f.Usage) })
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v\n%s", cmd, err, usage)
		return exitUsage
	}
	return Run(cmd, *provider, *event, fs.Args(), stdin, stdout, stderr)
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
