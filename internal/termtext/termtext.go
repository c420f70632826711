// Package termtext shows text that a package controls on a terminal as
// text. A package's description, version, file names, argv, matcher
// names and references reach dalo's human output, and a terminal acts on
// some characters rather than showing them: ESC starts a sequence that
// moves the cursor, erases or recolours lines; CR returns to the start of
// the line and LF starts a new one, so that either can make the line a
// user approves look like another; C1 controls (U+0080 to U+009F) act as
// ESC sequences on some terminals; bidirectional formatting characters
// reorder what is shown. Escape writes each such character as a Go escape
// (\x1b, \r, \n, \u202e), so that what the user reads is what the bytes
// say.
//
// JSON output is not escaped: it carries the bytes, and encoding/json
// already escapes what would break a line.
package termtext

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every character that is not printable written as
// a Go escape: what strconv.Quote escapes, except that s is not quoted and
// '"' and '\' stay as they are, so that ordinary text, paths included,
// reads unchanged. Printable is strconv.IsPrint: letters, marks, numbers,
// punctuation, symbols and the ASCII space. A byte that is not UTF-8 is
// written \xNN.
func Escape(s string) string {
	i := PrintableASCII(s, false)
	if i == len(s) {
		return s // printable ASCII: the common case, not copied
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		case strconv.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

const hex = "0123456789abcdef"

// NewWriter returns a writer to w that escapes, as Escape does, everything
// written to it except LF and TAB, which it passes on: they are dalo's own
// line breaks and column separators. It is the guard under every human
// output, so that a control character in text no formatting site escaped
// (an error naming a package's file, say) is still shown, not acted on.
// It cannot tell a line break in package text from dalo's own: wherever
// package text is formatted into a line, it goes through Escape.
//
// Each Write is escaped on its own; dalo writes whole formatted strings,
// so a character is never split between two writes.
func NewWriter(w io.Writer) io.Writer { return &writer{w} }

type writer struct{ w io.Writer }

func (w *writer) Write(p []byte) (int, error) {
	if plain(p) {
		// Nearly all of what dalo prints: passed on as it is.
		if _, err := w.w.Write(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	s := string(p)
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexAny(s, "\n\t")
		if i < 0 {
			b.WriteString(Escape(s))
			break
		}
		b.WriteString(Escape(s[:i]))
		b.WriteByte(s[i])
		s = s[i+1:]
	}
	if _, err := io.WriteString(w.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// plain reports whether p is lines of text Escape leaves as they are.
func plain(p []byte) bool {
	for i := 0; i < len(p); {
		if i += PrintableASCII(p[i:], true); i == len(p) {
			break
		}
		if p[i] < utf8.RuneSelf {
			return false
		}
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n == 1 || !strconv.IsPrint(r) {
			return false
		}
		i += n
	}
	return true
}

// PrintableASCII returns the length of the longest prefix of s that is
// printable ASCII (0x20 to 0x7e), or that or LF and TAB with lines. It
// looks at eight bytes a step where it can: a report is megabytes of such
// text, and a byte a step this was 3% of validating 1,000 packages; the
// validator asks it of front matter too.
func PrintableASCII[T string | []byte](s T, lines bool) int {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	ok := func(c byte) bool { return c >= 0x20 && c < 0x7f || lines && (c == '\n' || c == '\t') }
	i := 0
	for i+8 <= len(s) {
		b := s[i : i+8] // the eight loads become one, without bounds checks
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		// Once no byte has its high bit set, a byte below 0x20 borrows
		// into its own high bit subtracting 0x20 from each, and 0x7f is
		// the byte that XOR 0x7f makes zero, which borrows subtracting
		// one: each test is exact about whether any byte fails it.
		del := w ^ 0x7f*ones
		if (w|(w-0x20*ones)&^w|(del-ones)&^del)&high == 0 {
			i += 8
			continue
		}
		for end := i + 8; i < end; i++ { // a line break, or the end
			if !ok(s[i]) {
				return i
			}
		}
	}
	for ; i < len(s); i++ {
		if !ok(s[i]) {
			return i
		}
	}
	return i
}

// shellSafe is what a shell word may hold unquoted.
const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@"

// ShellQuote is s as one word of a POSIX shell command line: as it is when
// no character of it is special, else in single quotes. dalo writes
// commands with it that a shell runs (a harness entry's command, git's
// GIT_SSH_COMMAND) and that a user copies.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, shellSafe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellWord reads the shell word ShellQuote wrote at the start of s: bare,
// or single-quoted with '\” for a quote. It returns the word and the rest.
func ShellWord(s string) (word, rest string, ok bool) {
	if !strings.HasPrefix(s, "'") {
		w := s
		if i := strings.IndexByte(s, ' '); i >= 0 {
			w = s[:i]
		}
		if w == "" || strings.Trim(w, shellSafe) != "" {
			return "", "", false
		}
		return w, s[len(w):], true
	}
	var b strings.Builder
	for r := s[1:]; ; {
		i := strings.IndexByte(r, '\'')
		if i < 0 {
			return "", "", false
		}
		b.WriteString(r[:i])
		if !strings.HasPrefix(r[i:], `'\''`) {
			return b.String(), r[i+1:], true
		}
		b.WriteByte('\'')
		r = r[i+4:]
	}
}
