package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"dalo/dispatch"
	"dalo/store"
)

const hookDispatchDoc = `Hook dispatch is what a harness's hook configuration calls, one entry per
native event. It reads the event's native JSON on stdin, runs every
installed and approved hook of that provider and event (from the dispatch
plan install wrote under $DALO_HOME/plans/<provider>.d: only the files of
this event and tool name), and answers the harness in its native hook
output format, as the provider table copied into the plan describes it.
A provider nothing is installed for answers nothing.

Before each run it re-checks both grants and every staged file; a revoked
grant or a changed byte is a failure under the hook's failure policy. Each
handler runs with its declared argv, the staged tool root as cwd, only its
declared environment variables, the native JSON on stdin and a hard
timeout. node and python3 are found on dalo's own PATH.

DALO_HOME defaults to $XDG_DATA_HOME/dalo, else ~/.local/share/dalo.
See docs/dispatch.md for the policies and how results compose.

Stopped by SIGTERM, SIGINT or SIGHUP (a harness that stops waiting), it
kills every running handler's process group and exits 1. Killed outright
(SIGKILL), on Linux its handlers are killed by the kernel.

Exit status: 0 with the native answer on stdout (possibly empty); 1 when
the plan cannot be read, or a failure must reach the user on SessionEnd
(whose output harnesses ignore), or it was stopped, with the diagnostic on
stderr; 2 bad usage.

Examples:
  dalo hook dispatch --provider claude --event PreToolUse < payload.json
  dalo hook dispatch --provider codex --event Stop
`

// maxComponent bounds a path component: NAME_MAX on common file systems.
const maxComponent = 255

// safeComponent says whether s can be one path component below the plans
// directory as it is: not empty, not "." or "..", no separator or NUL, and
// short enough for a file name. --provider and --event become such
// components. Dispatch checks this much only: which providers and events
// exist is the tables' business, and loading them (CUE) is what the hot
// path must not do.
func safeComponent(s string) bool {
	return s != "" && s != "." && s != ".." && len(s) <= maxComponent &&
		!strings.ContainsAny(s, "/\\\x00")
}

func init() {
	register(&command{
		name:  "hook dispatch",
		usage: "--provider claude|codex --event NATIVE_EVENT",
		short: "run the approved hooks of a harness event",
		doc:   hookDispatchDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.String("provider", "", "the harness: claude or codex")
			fs.String("event", "", "the native event name: PreToolUse, Stop, ...")
		},
		run: runHookDispatch,
	})
}

func runHookDispatch(e *env, fs *pflag.FlagSet) int {
	const name = "hook dispatch"
	provider, _ := fs.GetString("provider")
	event, _ := fs.GetString("event")
	switch {
	case fs.NArg() != 0:
		return usageError(e, name, "unexpected arguments: %q", fs.Args())
	case !safeComponent(provider):
		return usageError(e, name, "--provider must be a provider name such as claude or codex, not %q", provider)
	case event == "":
		return usageError(e, name, "--event is required")
	case !safeComponent(event):
		return usageError(e, name, "--event must be a native event name such as PreToolUse, not %q", event)
	}
	home, err := store.Home()
	if err != nil {
		fmt.Fprintf(e.stderr, "dalo %s: %v\n", name, err)
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
			fmt.Fprintf(e.stderr, "dalo %s: stopped by %v; the running handlers were killed\n", name, sig)
			os.Exit(exitFail)
		case <-done:
		}
	}()
	req := dispatch.Request{Home: home, Provider: provider, Event: event, Getenv: os.LookupEnv}
	req.Payload, err = io.ReadAll(io.LimitReader(e.stdin, dispatch.MaxPayload+1))
	switch {
	case err != nil:
		req.PayloadErr = fmt.Errorf("reading the native payload: %v", err)
	case len(req.Payload) > dispatch.MaxPayload:
		req.PayloadErr = fmt.Errorf("the native payload is over %d bytes", dispatch.MaxPayload)
		req.Payload = nil
	}
	out := dispatch.Dispatch(req)
	e.stdout.Write(out.Stdout)
	e.stderr.Write(out.Stderr)
	return out.Exit
}
