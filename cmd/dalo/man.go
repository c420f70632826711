package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"dalo/store"
)

const manDoc = `Man writes the manual pages of dalo into DIR, in man(7) format: dalo.1,
and one page a command (dalo-plugin-install.1), each made of the same
text as the command's help: its usage, description, flags and examples.
Each page is replaced atomically; other files in DIR are left alone.

Exit status: 0 written; 1 a page could not be written; 2 bad usage or a
DIR that is missing or not a directory.

Examples:
  dalo man ~/.local/share/man/man1 && man dalo-plugin-install
  dalo man /usr/local/share/man/man1
`

func init() {
	register(&command{name: "man", usage: "DIR", short: "write the manual pages into a directory", doc: manDoc, run: runMan})
}

func runMan(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() != 1 {
		return usageError(e, "man", "want exactly one DIR, got %d arguments", fs.NArg())
	}
	dir := fs.Arg(0)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usageError(e, "man", "%s is not a directory", dir)
	}
	pages := manPages()
	names := make([]string, 0, len(pages))
	for name := range pages {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := store.WriteFile(filepath.Join(dir, name), []byte(pages[name]), 0o644); err != nil {
			fmt.Fprintf(e.stderr, "dalo man: %v\n", err)
			return exitFail
		}
	}
	fmt.Fprintf(e.stdout, "wrote %d manual pages in %s\n", len(names), dir)
	return exitOK
}

// manPages is every manual page by file name, made from the command table.
func manPages() map[string]string {
	cs := append([]*command(nil), commands...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	pages := map[string]string{}
	var b strings.Builder
	manHeader(&b, "dalo", "validates, reviews and runs Portable Agent Packages")
	b.WriteString(".SH SYNOPSIS\n.B dalo\n[\\-\\-json] \\fIcommand\\fR [\\fIflags\\fR] [\\fIarguments\\fR]\n.br\n.B dalo\n\\-\\-version\n")
	b.WriteString(".SH DESCRIPTION\ndalo validates, reviews and runs Portable Agent Packages. Each command has a page of its own.\n.SH COMMANDS\n")
	for _, c := range cs {
		fmt.Fprintf(&b, ".TP\n.BR %s (1)\n%s\n", roff(manName(c)), roff(c.short))
	}
	pages["dalo.1"] = b.String()
	for _, c := range cs {
		var b strings.Builder
		manHeader(&b, manName(c), c.short)
		fmt.Fprintf(&b, ".SH SYNOPSIS\n.B dalo %s\n", roff(c.name))
		if c.usage != "" {
			b.WriteString(roff(expandDoc(c.usage)) + "\n")
		}
		description, sections := manDescription(expandDoc(c.doc))
		b.WriteString(description)
		b.WriteString(".SH OPTIONS\n")
		c.flagSet(&env{}).VisitAll(func(f *pflag.Flag) {
			varname, usage := pflag.UnquoteUsage(f)
			b.WriteString(".TP\n")
			if f.Shorthand != "" {
				fmt.Fprintf(&b, "\\fB\\-%s\\fR, ", f.Shorthand)
			}
			fmt.Fprintf(&b, "\\fB\\-\\-%s\\fR", roff(f.Name))
			if varname != "" && f.Value.Type() != "bool" {
				fmt.Fprintf(&b, " \\fI%s\\fR", roff(varname))
			}
			fmt.Fprintf(&b, "\n%s\n", roff(usage))
		})
		b.WriteString(sections)
		fmt.Fprintf(&b, ".SH SEE ALSO\n.BR dalo (1)\n")
		pages[manName(c)+".1"] = b.String()
	}
	return pages
}

// manName is c's page: dalo-plugin-install.
func manName(c *command) string { return "dalo-" + strings.ReplaceAll(c.name, " ", "-") }

func manHeader(b *strings.Builder, name, short string) {
	// No date: the pages of one dalo are the same bytes whenever written.
	fmt.Fprintf(b, ".TH %s 1 \"\" \"dalo\" \"dalo manual\"\n.SH NAME\n%s \\- %s\n", strings.ToUpper(roff(name)), roff(name), roff(short))
}

// manDescription turns a help text into man(7): a paragraph is filled
// text, an indented block (examples, a file's line) is kept as it is. The
// paragraphs from "Exit status:" or "Examples:" on open sections of their
// own, returned apart to follow the options.
func manDescription(doc string) (description, sections string) {
	var desc, rest strings.Builder
	desc.WriteString(".SH DESCRIPTION\n")
	b := &desc
	for _, para := range strings.Split(strings.TrimSpace(doc), "\n\n") {
		lines := strings.Split(para, "\n")
		switch {
		case lines[0] == "Examples:":
			b = &rest
			b.WriteString(".SH EXAMPLES\n")
			lines = lines[1:]
		case strings.HasPrefix(lines[0], "Exit status:"):
			b = &rest
			b.WriteString(".SH EXIT STATUS\n")
			lines[0] = strings.TrimSpace(strings.TrimPrefix(lines[0], "Exit status:"))
		}
		b.WriteString(".PP\n")
		verbatim := false
		for _, l := range lines {
			indented := strings.HasPrefix(l, "  ")
			switch {
			case indented && !verbatim:
				b.WriteString(".RS 4\n.nf\n")
			case !indented && verbatim:
				b.WriteString(".fi\n.RE\n")
			}
			verbatim = indented
			if indented {
				l = strings.TrimPrefix(l, "  ")
			}
			b.WriteString(roff(l) + "\n")
		}
		if verbatim {
			b.WriteString(".fi\n.RE\n")
		}
	}
	return desc.String(), rest.String()
}

// roff escapes text for a man page line: a backslash, a minus (so that
// flags copy as typed), and a leading dot or quote that would be read as
// a request.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
