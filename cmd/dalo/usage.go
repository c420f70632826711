package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"dalo/internal/suggest"
	"dalo/internal/termtext"
)

// flagUsages is the Flags section of a command's help, laid out as
// pflag's FlagUsages but without its "[=true|false]" after every boolean:
// a switch is written --dry-run, and that is how its help shows it.
func flagUsages(fs *pflag.FlagSet) string {
	type row struct{ left, usage string }
	var rows []row
	width := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		left := "      --" + f.Name
		if f.Shorthand != "" {
			left = "  -" + f.Shorthand + ", --" + f.Name
		}
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" && f.Value.Type() != "bool" {
			left += " " + varname
		}
		if !zeroDefault(f) {
			if f.Value.Type() == "string" {
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				usage += fmt.Sprintf(" (default %s)", f.DefValue)
			}
		}
		width = max(width, len(left))
		rows = append(rows, row{left, usage})
	})
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s   %s\n", width, r.left, r.usage)
	}
	return b.String()
}

// zeroDefault reports whether f's default is its type's zero value, which
// help does not print: false, "", an empty list, 0.
func zeroDefault(f *pflag.Flag) bool {
	switch f.DefValue {
	case "", "false", "[]", "0":
		return true
	}
	return false
}

// unknownCommand reports that args name no command, with the nearest
// commands when some are near, in a few lines rather than the whole
// usage: the mistake and its correction are what the reader needs.
func unknownCommand(e *env, args []string) int {
	words, near := nearestCommands(args)
	if len(near) == 0 {
		words = 1
		if group(args[0]) != "" && len(args) > 1 {
			words = 2
		}
	}
	fmt.Fprintf(e.stderr, "dalo: unknown command %q\n", termtext.Escape(strings.Join(args[:words], " ")))
	switch len(near) {
	case 0:
	case 1:
		fmt.Fprintf(e.stderr, "did you mean 'dalo %s'?\n", near[0])
	default:
		fmt.Fprintf(e.stderr, "did you mean one of these?\n")
		for _, n := range near {
			fmt.Fprintf(e.stderr, "\tdalo %s\n", n)
		}
	}
	helpOf := "dalo"
	if len(near) == 0 && words == 2 {
		helpOf += " " + args[0]
	}
	fmt.Fprintf(e.stderr, "Run '%s --help' for usage.\n", helpOf)
	return exitUsage
}

// maxNear bounds the commands a mistake is answered with, so that the
// answer stays a few lines.
const maxNear = 4

// nearestCommands finds the commands, or groups of commands, args were
// meant to name, and how many words of args they stand for. First the
// names whose every word is close to the word of args in its place (see
// suggest.Close), the most words first and then the fewest edits:
// 'plugn instal' is 'plugin install', 'plugn' is the group 'plugin'. Then,
// when none is, the commands whose last word is nearest to the first word
// of args: 'dalo install' is 'dalo plugin install', 'dalo list' one of
// the three list commands.
func nearestCommands(args []string) (int, []string) {
	names := map[string]bool{}
	for _, c := range commands {
		names[c.name] = true
		if w := strings.Fields(c.name); len(w) > 1 {
			names[w[0]] = true
		}
	}
	bestWords, best, bestD := 0, "", -1
	for name := range names {
		words := strings.Fields(name)
		if len(words) > len(args) {
			continue
		}
		total := 0
		for i, w := range words {
			d := suggest.Distance(strings.ToLower(args[i]), w)
			if !suggest.Close(d, len(w)) {
				total = -1
				break
			}
			total += d
		}
		// A group named exactly (plugin frob) is not a suggestion: the
		// word after it is the mistake.
		if total <= 0 {
			continue
		}
		better := bestD < 0 || len(words) > bestWords ||
			len(words) == bestWords && (total < bestD || total == bestD && name < best)
		if better {
			bestWords, best, bestD = len(words), name, total
		}
	}
	if best != "" {
		return bestWords, []string{best}
	}
	var near []string
	bestD = -1
	for _, c := range commands {
		words := strings.Fields(c.name)
		if len(words) < 2 {
			continue
		}
		last := words[len(words)-1]
		d := suggest.Distance(strings.ToLower(args[0]), last)
		switch {
		case !suggest.Close(d, len(last)) || bestD >= 0 && d > bestD:
		case bestD < 0 || d < bestD:
			near, bestD = []string{c.name}, d
		default:
			near = append(near, c.name)
		}
	}
	sort.Strings(near)
	if len(near) > maxNear {
		near = near[:maxNear]
	}
	return 1, near
}

// flagError reports a command line its flags do not parse, in a few
// lines: the error, the nearest flag of the command when the flag is
// unknown, and where the usage is. cmd is "" for dalo's own flags.
func flagError(e *env, cmd string, fs *pflag.FlagSet, err error) int {
	prog := strings.TrimSpace("dalo " + cmd)
	fmt.Fprintf(e.stderr, "%s: %s\n", prog, termtext.Escape(err.Error()))
	var ne *pflag.NotExistError
	if errors.As(err, &ne) {
		if near := nearestFlag(fs, ne); near != "" {
			fmt.Fprintf(e.stderr, "did you mean '%s %s'?\n", prog, near)
		}
	}
	fmt.Fprintf(e.stderr, "Run '%s --help' for usage.\n", prog)
	return exitUsage
}

// nearestFlag is the flag of fs an unknown one was meant to be, written
// as it should have been, or "". A single dash before a long name
// (-provider), as Go's flag package takes it, is one such mistake.
func nearestFlag(fs *pflag.FlagSet, ne *pflag.NotExistError) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	name := ne.GetSpecifiedName()
	if short := ne.GetSpecifiedShortnames(); short != "" {
		if len(short) == 1 {
			return ""
		}
		// -provider: pflag read shorthands p, r, o, ...
		name, _, _ = strings.Cut(short, "=")
		if fs.Lookup(name) != nil {
			return "--" + name
		}
	}
	if near := suggest.Closest(name, names); near != "" {
		return "--" + near
	}
	return ""
}
