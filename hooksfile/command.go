package hooksfile

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"dalo/internal/termtext"
	"dalo/plan"
)

// A Command is the command line of one of dalo's harness entries:
//
//	<program> dispatch --home <store> --provider P --event E
//
// (`hook dispatch` when the program is dalo itself). On an event where a
// required fail_closed hook is installed it adds --fail-closed and a guard
// for a dispatcher that cannot answer at all: harnesses run the command
// with a shell, and a program that is missing (127), cannot be executed
// (126) or is killed by a signal (128+n) fails open on them; the guard maps
// those statuses, and only those, to the harness's blocking status with the
// reason on stderr. On an event that carries workflow.already_continued
// (Stop) the guard reads the payload first, and blocks only a workflow
// that did not go on already, so that it never loops the agent.
//
// On an event where the harness denies the action when a hook command
// fails (the table's events.<E>.failed_command, GitHub Copilot CLI's
// preToolUse) and no required fail_closed hook is installed, the command
// is guarded open instead (Open): every failure, whatever its status, exits
// 0 with the reason on stderr, so that a dispatcher that cannot answer
// lets the action go on, as the hooks' failure policies say.
//
// The guard names no shell variable: a harness may replace $name in its
// settings' strings before its shell sees them (Gemini CLI replaces $s by
// the variable s of its own environment, see the table's
// config.hooks.entry.expands), which would turn the guard into another
// command. It uses only $? (the status) and $* (the payload, held as the
// positional parameters), which no harness rewrites.
type Command struct {
	Program    string
	Dalo       bool   // Program is dalo: `hook dispatch`
	Home       string // the store; "" in an entry a dalo before --home wrote
	Project    string // the project scope's id (--project); "" for the user's
	Provider   string
	Event      string
	FailClosed bool
	// The guard, with FailClosed: Block is the harness's blocking exit
	// status; Continued the payload key of workflow.already_continued on
	// the event, if it has one.
	Block     int
	Continued string
	// Open: the guard that maps every failure to a pass.
	Open bool
}

// guardedPrefix starts a guarded command on an event with Continued: the
// payload is read into the positional parameters ($*) and given to the
// dispatcher.
const guardedPrefix = `set -- "$(cat)"; printf '%s' "$*" | `

// oldGuardedPrefix is guardedPrefix as an earlier dalo wrote it, with a
// variable a harness may rewrite: its entries are still recognised as
// dalo's, and rewritten by the next install.
const oldGuardedPrefix = `p=$(cat); printf '%s' "$p" | `

// guardStatuses is the case pattern of the statuses the guard maps to a
// block: 126 to 255, a dispatcher that could not start or died by a signal.
const guardStatuses = `12[6-9]|1[3-9][0-9]|2[0-5][0-9]`

// String is the command line as dalo writes it into an entry, guard and
// all, for the harness to run with a shell.
func (c Command) String() string {
	var b strings.Builder
	if c.FailClosed && c.Continued != "" {
		b.WriteString(guardedPrefix)
	}
	b.WriteString(termtext.ShellQuote(c.Program))
	if c.Dalo {
		b.WriteString(" " + plan.DaloDispatch)
	} else {
		b.WriteString(" " + plan.HookDispatch)
	}
	if c.Home != "" {
		b.WriteString(" --home " + termtext.ShellQuote(c.Home))
	}
	if c.Project != "" {
		b.WriteString(" --project " + c.Project)
	}
	b.WriteString(" --provider " + c.Provider + " --event " + c.Event)
	if c.Open {
		fmt.Fprintf(&b, ` || { echo "dalo: the dispatcher could not answer (exit status $?); no required fail_closed hook guards %s, so dalo lets %s go on: run 'dalo doctor'" >&2; exit 0; }`, c.Event, c.Event)
		return b.String()
	}
	if !c.FailClosed {
		return b.String()
	}
	b.WriteString(" --fail-closed")
	// In a case arm $? is still the dispatcher's status.
	fmt.Fprintf(&b, ` || case $? in %s) echo "dalo: the dispatcher could not run (exit status $?); a required fail_closed hook guards %s, so dalo blocks it: run 'dalo doctor'" >&2; `, guardStatuses, c.Event)
	if c.Continued != "" {
		fmt.Fprintf(&b, `case $* in *'"%s":true'*|*'"%s": true'*) exit 1;; esac; `, c.Continued, c.Continued)
	}
	fmt.Fprintf(&b, "exit %d;; *) exit $?;; esac", c.Block)
	return b.String()
}

// Argv is the dispatcher's command line without a shell, with extra flags:
// how doctor runs an entry (--check).
func (c Command) Argv(extra ...string) []string {
	argv := []string{c.Program}
	argv = append(argv, strings.Fields(plan.HookDispatch)...)
	if c.Dalo {
		argv = append([]string{c.Program}, strings.Fields(plan.DaloDispatch)...)
	}
	if c.Home != "" {
		argv = append(argv, "--home", c.Home)
	}
	if c.Project != "" {
		argv = append(argv, "--project", c.Project)
	}
	argv = append(argv, "--provider", c.Provider, "--event", c.Event)
	if c.FailClosed {
		argv = append(argv, "--fail-closed")
	}
	return append(argv, extra...)
}

// ParseCommand reads back the command line of an entry of dalo's, of
// this dalo's form or of an earlier one (no --home, no guard), without its
// guard's details: ok says the command starts a dispatcher for a provider
// and event. Whether the whole command is what dalo would write is for
// the caller to compare (String of the entry it wants).
func ParseCommand(cmd string) (c Command, ok bool) {
	rest, guarded := strings.CutPrefix(cmd, guardedPrefix)
	if !guarded {
		rest, guarded = strings.CutPrefix(cmd, oldGuardedPrefix)
	}
	prog, rest, ok := termtext.ShellWord(rest)
	if !ok || prog == "" {
		return c, false
	}
	c.Program = prog
	switch {
	case strings.HasPrefix(rest, " "+plan.DaloDispatch+" "):
		c.Dalo = true
		rest = rest[len(" "+plan.DaloDispatch):]
	case strings.HasPrefix(rest, " "+plan.HookDispatch+" ") && filepath.Base(prog) == plan.HookBinary:
		rest = rest[len(" "+plan.HookDispatch):]
	default:
		return c, false
	}
	if r, ok := strings.CutPrefix(rest, " --home "); ok {
		home, r, ok := termtext.ShellWord(r)
		if !ok || home == "" {
			return c, false
		}
		c.Home, rest = home, r
	}
	if r, ok := strings.CutPrefix(rest, " --project "); ok {
		id, r, _ := strings.Cut(r, " ")
		if !plan.ValidProject(id) {
			return c, false
		}
		c.Project, rest = id, " "+r
	}
	r, ok := strings.CutPrefix(rest, " --provider ")
	if !ok {
		return c, false
	}
	c.Provider, rest, _ = strings.Cut(r, " ")
	r, ok = strings.CutPrefix(rest, "--event ")
	if !ok || c.Provider == "" {
		return c, false
	}
	c.Event, rest, _ = strings.Cut(r, " ")
	if c.Event == "" || strings.ContainsAny(c.Event, "'\"\\;|&$") || strings.ContainsAny(c.Provider, "'\"\\;|&$") {
		return c, false
	}
	if rest == "" {
		return c, !guarded
	}
	if strings.HasPrefix(rest, "|| { ") && !guarded {
		c.Open = true
		return c, true
	}
	r, ok = strings.CutPrefix(rest, "--fail-closed")
	if !ok {
		return c, false
	}
	c.FailClosed = true
	switch {
	case strings.HasPrefix(r, " || case $? in "):
		// This dalo's guard.
		if i := strings.LastIndex(r, "; exit "); i >= 0 {
			c.Block, _ = strconv.Atoi(strings.TrimSuffix(r[i+len("; exit "):], ";; *) exit $?;; esac"))
		}
		if guarded {
			if _, after, ok := strings.Cut(r, `case $* in *'"`); ok {
				c.Continued, _, _ = strings.Cut(after, `"`)
			}
		}
	case strings.HasPrefix(r, " || { "):
		// An earlier dalo's guard, with variables.
		if i := strings.LastIndex(r, "; exit "); i >= 0 {
			c.Block, _ = strconv.Atoi(strings.TrimSuffix(r[i+len("; exit "):], "; }"))
		}
		if guarded {
			if _, after, ok := strings.Cut(r, `case $p in *'"`); ok {
				c.Continued, _, _ = strings.Cut(after, `"`)
			}
		}
	default:
		return c, false
	}
	return c, true
}
