// Command dalo validates, reviews, approves, installs and dispatches
// Portable Agent Packages.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/spf13/pflag"

	"dalo/internal/termtext"
	"dalo/store"
)

// A command is one dalo command: its usage, its help text and what it runs.
type command struct {
	name  string // "plugin validate"
	usage string // "[--json] [--source-id ID] SOURCE"; {{parts}} as in doc
	short string
	doc   string
	flags func(*pflag.FlagSet)
	run   func(*env, *pflag.FlagSet) int
	// verbatim says the command's output is for a program, passed on byte
	// for byte: a harness's protocol (hook dispatch), a JSON Schema
	// (schema). Every other command's output is for a person, and goes
	// through termtext.
	verbatim bool
}

// env is what a command talks to.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	json           bool // the global --json
	// tty is stderr when it is a terminal, as it is, for progress (see
	// progress.go); nil otherwise.
	tty io.Writer
	// colourOut and colourErr say that stdout and stderr are terminals
	// to colour (colour.go); stdout's colour is never for --json.
	colourOut, colourErr bool
}

// Exit codes of every command, as the draft fixes them for validate.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

var commands []*command

func register(c *command) { commands = append(commands, c) }

func main() {
	tuneGC()
	os.Exit(run(os.Args[1:], &env{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		tty: terminal(os.Stderr), colourOut: colourful(os.Stdout), colourErr: colourful(os.Stderr),
	}))
}

// tuneGC lets the heap grow four times over what is live before
// collecting. A dalo process lives for milliseconds to seconds; collecting
// at the default pace cost a third of its CPU in bench/validate.sh (one
// package: 33 -> 22 ms). There is no fixed memory limit: past one, the
// collector runs nearly all the time (5,000 packages under 120 MiB cost
// 4x the CPU). Memory stays bounded because what validation keeps of a
// package is small and fixed (see the README, "Speed and memory"). GOGC
// and GOMEMLIMIT, when set, still win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

// limitMemory sets a soft memory limit from the size of the source about
// to be validated, unless GOMEMLIMIT is set, and then keeps it at four
// times what the collector finds live (see followLiveHeap). The first
// limit is a guess from the sizes discovery knows: 8 KiB a package beside
// its manifest's bytes, three times over (with 4 KiB, 10,000 packages of
// the skills shape made five collections and spent 12-18% of the CPU in
// them; under the limit alone the heap grows to it between two), and for
// each worker 128 times the largest manifest (checking one holds some 40
// times its size while it runs), over a base of 64 MiB for the rules and
// the runtime. What
// a package holds until the report follows its shape (its members, hooks,
// bindings and diagnostics: 4 to 9 KiB a package of bench/sourcegen's
// shapes, TestValidateHoldsLittlePerPackage), so the guess
// alone can leave what is live near the limit, where the collector runs
// back to back (issue 27 measured it at 19% of the CPU at 10,000 packages
// of 17 KiB). The limit alone paces the collector: GOGC is off under it,
// unless set.
// bench/validate.sh measures the bound.
func limitMemory(packages int, manifestBytes, largest int64) (stop func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	workers := int64(runtime.GOMAXPROCS(0))
	limit := 64<<20 + 3*(int64(packages)<<13+manifestBytes) + workers*128*largest
	debug.SetMemoryLimit(limit)
	stop = followLiveHeap(limit)
	if os.Getenv("GOGC") == "" {
		// The limit alone paces the collector: the heap grows to it before
		// the first collection, where GOGC would start one at 16 MiB and
		// again at each few times what is live, marking the rules' large
		// graph each time. Validating 1,000 packages of 36 KB made three
		// collections at GOGC 400 and makes one (GODEBUG=gctrace=1).
		debug.SetGCPercent(-1)
	}
	return stop
}

// followLiveHeap raises the soft memory limit, after each collection, to
// four times the heap it found live, when that is more than the limit:
// what is live then stays at most a quarter of the limit, and the
// collector never runs back to back as under a fixed limit (120 MiB made
// 5,000 packages cost 4x the CPU). Measured on 5,000 packages of
// bench/sourcegen's own shape, the collector's share of the run was 14%
// under the first guess alone, 11% at three times what is live and 8% at
// four (GODEBUG=gctrace=1). It never lowers the limit. It runs in the
// finalizer goroutine, armed again after each collection: no goroutine
// polls.
//
// stop ends it (at the next collection): a test's process lives on.
func followLiveHeap(limit int64) (stop func()) {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	type gcMark struct{ _ *byte } // a pointer: never a tiny allocation, which may outlive a cycle
	var stopped atomic.Bool
	var arm func()
	arm = func() {
		runtime.SetFinalizer(new(gcMark), func(*gcMark) {
			if stopped.Load() {
				return
			}
			metrics.Read(live)
			if live[0].Value.Kind() == metrics.KindUint64 {
				if want := 4 * int64(live[0].Value.Uint64()); want > limit {
					limit = want
					debug.SetMemoryLimit(limit)
				}
			}
			arm()
		})
	}
	arm()
	return func() { stopped.Store(true) }
}

const mainDoc = `dalo validates, reviews and runs Portable Agent Packages.

Usage:
  dalo [--json] <command> [flags] [arguments]
  dalo --version

Commands:
%s
Run 'dalo <command> --help' for a command's flags and examples.
`

func run(args []string, e *env) int {
	if e.colourErr {
		// Under every writer of stderr, termtext's included; once, though
		// help runs run again.
		e.stderr, e.colourErr = &colourer{e.stderr}, false
	}
	global := pflag.NewFlagSet("dalo", pflag.ContinueOnError)
	global.SetInterspersed(false)
	global.SetOutput(io.Discard)
	global.BoolVar(&e.json, "json", false, "print JSON instead of text")
	help := global.BoolP("help", "h", false, "show help")
	version := global.Bool("version", false, "print dalo's version")
	if err := global.Parse(args); err != nil {
		return flagError(e, "", global, err)
	}
	rest := global.Args()
	if len(rest) > 0 && rest[0] == "__complete" {
		return runComplete(e, rest[1:])
	}
	if *version {
		fmt.Fprintln(e.stdout, versionLine())
		return exitOK
	}
	if *help || len(rest) == 0 {
		if *help {
			fmt.Fprint(e.stdout, mainUsage())
			return exitOK
		}
		fmt.Fprint(e.stderr, mainUsage())
		return exitUsage
	}
	c, rest := lookup(rest)
	if c == nil && group(rest[0]) != "" {
		// A group of commands (source, plugin, ...) alone or with --help:
		// list its commands.
		if len(rest) == 2 && (rest[1] == "-h" || rest[1] == "--help") {
			fmt.Fprint(e.stdout, group(rest[0]))
			return exitOK
		}
		if len(rest) == 1 {
			fmt.Fprintf(e.stderr, "dalo %s: a command is required\n\n%s", rest[0], group(rest[0]))
			return exitUsage
		}
		if strings.HasPrefix(rest[1], "-") {
			return usageError(e, rest[0], "unknown flag %s; a command comes first", termtext.Escape(rest[1]))
		}
	}
	if c == nil {
		return unknownCommand(e, rest)
	}
	if len(rest) > 0 && group(c.name) != "" {
		// A command that is also a group (providers, providers show): a
		// word after it near one of its commands is that command misspelt.
		args := append(strings.Fields(c.name), rest...)
		if words, near := nearestCommands(args); len(near) == 1 && words > len(strings.Fields(c.name)) {
			return unknownCommand(e, args)
		}
	}
	fs := c.flagSet(e)
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(e.stdout, commandUsage(c, fs))
			return exitOK
		}
		return flagError(e, c.name, fs, err)
	}
	if h, _ := fs.GetBool("help"); h {
		fmt.Fprint(e.stdout, commandUsage(c, fs))
		return exitOK
	}
	if !c.verbatim {
		// What a person reads shows a package's text as text: a control
		// character no formatting site escaped is shown, not acted on.
		// JSON is left as it is.
		e.stderr = termtext.NewWriter(e.stderr)
		if !e.json {
			if e.colourOut {
				e.stdout = &colourer{e.stdout}
			}
			e.stdout = termtext.NewWriter(e.stdout)
		}
	}
	return c.run(e, fs)
}

// flagSet is c's flags: --json, its own, and --help last. Help, the
// completion scripts and the manual pages read the same set.
func (c *command) flagSet(e *env) *pflag.FlagSet {
	fs := pflag.NewFlagSet("dalo "+c.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.BoolVar(&e.json, "json", e.json, "print JSON instead of text")
	if c.flags != nil {
		c.flags(fs)
	}
	fs.BoolP("help", "h", false, "show this help")
	return fs
}

// lookup finds the longest command name that prefixes args.
func lookup(args []string) (*command, []string) {
	var best *command
	n := 0
	for _, c := range commands {
		words := strings.Fields(c.name)
		if len(words) <= len(args) && len(words) > n && strings.Join(args[:len(words)], " ") == c.name {
			best, n = c, len(words)
		}
	}
	return best, args[n:]
}

// versionLine says which dalo this is, from the build information the Go
// toolchain records: the main module's version ("(devel)" for a build from
// a working tree), the VCS revision it was built from and whether the tree
// had uncommitted changes, and the Go version.
func versionLine() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dalo (unknown: no build information) " + runtime.Version()
	}
	return formatVersion(bi)
}

func formatVersion(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	parts := []string{"dalo", v}
	var rev string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	// Since Go 1.24 a build in a repository takes its version from VCS,
	// v0.0.0-<time>-<revision>[+dirty]: the revision is said already.
	if rev != "" && !strings.Contains(v, rev) {
		if modified {
			rev += "+modified"
		}
		parts = append(parts, rev)
	}
	return strings.Join(append(parts, bi.GoVersion), " ")
}

// group is the usage of the commands whose name starts with the word
// name (dalo source add, list, remove), or "" if none does.
func group(name string) string {
	var b strings.Builder
	cs := append([]*command(nil), commands...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		if strings.HasPrefix(c.name, name+" ") {
			fmt.Fprintf(&b, "  %-22s %s\n", c.name, c.short)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return fmt.Sprintf("Usage: dalo %s <command> [flags] [arguments]\n\nCommands:\n%s\nRun 'dalo %s <command> --help' for a command's flags and examples.\n", name, b.String(), name)
}

func mainUsage() string {
	cs := append([]*command(nil), commands...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "  %-22s %s\n", c.name, c.short)
	}
	return fmt.Sprintf(mainDoc, b.String())
}

func commandUsage(c *command, fs *pflag.FlagSet) string {
	return fmt.Sprintf("Usage: dalo %s %s\n\n%s\nFlags:\n%s", c.name, expandDoc(c.usage), expandDoc(c.doc), flagUsages(fs))
}

// usageError reports a bad invocation of c and returns exitUsage.
func usageError(e *env, c string, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "dalo %s: %s\nRun 'dalo %s --help' for usage.\n", c, fmt.Sprintf(format, args...), c)
	return exitUsage
}

// packageArg checks that cmd got exactly one argument, a SOURCE:NAME
// package reference, and reports the usage error when not.
func packageArg(e *env, cmd string, fs *pflag.FlagSet) bool {
	if fs.NArg() != 1 {
		usageError(e, cmd, "want exactly one SOURCE:NAME, got %d arguments", fs.NArg())
		return false
	}
	if _, _, err := store.ParsePackageRef(fs.Arg(0)); err != nil {
		usageError(e, cmd, "%v", err)
		return false
	}
	return true
}

// writeJSON prints v as JSON: indented by two spaces, one value per call,
// and without HTML escaping, so that a message naming <name> prints <name>
// rather than \u003cname\u003e. Every command prints its JSON through it.
func writeJSON(e *env, v any) int {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(e.stderr, "dalo: %v\n", err)
		return exitFail
	}
	return exitOK
}

// printJSON is writeJSON for a command whose exit status does not depend
// on the printing.
func printJSON(e *env, v any) { writeJSON(e, v) }

// jsonText is v as compact JSON on one line, for a value quoted inside a
// text line (an argv), unescaped as writeJSON's.
func jsonText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}
