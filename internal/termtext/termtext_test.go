package termtext

import (
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"Notes for a design review.", "Notes for a design review."},
		{`C:\path "quoted" ünïcödé 日本語 …`, `C:\path "quoted" ünïcödé 日本語 …`},
		// What moves the cursor or rewrites a line.
		{"ok\x1b[2K\rREPLACED\nsecond", `ok\x1b[2K\rREPLACED\nsecond`},
		{"tab\there", `tab\there`},
		{"bell\a bs\b ff\f vt\v del\x7f nul\x00", `bell\a bs\b ff\f vt\v del\x7f nul\x00`},
		// C1 controls: U+009B is CSI on terminals that read 8-bit controls.
		{"\u009b2J \u0085", `\u009b2J \u0085`},
		// Bidirectional formatting, line and paragraph separators, a
		// zero-width joiner and a no-break space: not shown as themselves.
		{"abc\u202edcb\u2066 \u2028\u2029\u200d\u00a0", `abc\u202edcb\u2066 \u2028\u2029\u200d\u00a0`},
		// Bytes that are not UTF-8, and U+FFFD written as such.
		{"a\xffb\xc3", `a\xffb\xc3`},
		{"\ufffd", "\ufffd"},
		{"\U000e0001", `\U000e0001`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzEscape: the result is printable UTF-8 on one line, with no byte a
// terminal acts on, and text that needs no escaping is kept as is.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"plain", "a\x1b[2Jb", "\r\n\t", "\xff\xfe", "\u202e", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Escape(%q) = %q: not UTF-8", s, out)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || strings.ContainsRune("\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069", r) {
				t.Fatalf("Escape(%q) = %q holds %U", s, out, r)
			}
		}
		// What the writer passes through unescaped, Escape leaves alone
		// line by line.
		if plain([]byte(s)) {
			for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\t' }) {
				if Escape(line) != line {
					t.Fatalf("plain(%q), but Escape changes %q", s, line)
				}
			}
		}
		if Escape(out) != out {
			t.Fatalf("Escape is not idempotent on %q", s)
		}
		if !strings.ContainsAny(out, `\`) && out != s {
			t.Fatalf("Escape(%q) = %q changed text that needed no escape", s, out)
		}
	})
}

// TestPrintableASCII holds PrintableASCII, which looks at eight bytes a step, to a
// byte at a time, with each byte value at each place of a word.
func TestPrintableASCII(t *testing.T) {
	want := func(s string, lines bool) int {
		for i := 0; i < len(s); i++ {
			if c := s[i]; !(c >= 0x20 && c < 0x7f || lines && (c == '\n' || c == '\t')) {
				return i
			}
		}
		return len(s)
	}
	base := "0123456789abcdef ~!{}"
	for c := range 256 {
		for at := range len(base) {
			s := base[:at] + string([]byte{byte(c)}) + base[at:]
			for _, lines := range []bool{false, true} {
				w := want(s, lines)
				if got := PrintableASCII(s, lines); got != w {
					t.Errorf("PrintableASCII(%q, %t) = %d, want %d", s, lines, got, w)
				}
				if got := PrintableASCII([]byte(s), lines); got != w {
					t.Errorf("PrintableASCII([]byte(%q), %t) = %d, want %d", s, lines, got, w)
				}
			}
		}
	}
}

func TestWriter(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	for _, s := range []string{"col1\tcol2\n", "evil\x1b[2K\rline", "\n", "done"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if want := "col1\tcol2\nevil\\x1b[2K\\rline\ndone"; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
}

// A report of a large source is megabytes of plain text: written through
// as it is, not copied.
func TestWriterPassesPlainTextThrough(t *testing.T) {
	w := NewWriter(io.Discard)
	p := []byte("plugins/x/PLUGIN.toml:3:1: warning W101 hook[0]\tüñï 日本\n")
	if n := testing.AllocsPerRun(100, func() { w.Write(p) }); n != 0 {
		t.Errorf("Write of plain text allocates %v times", n)
	}
}

// ShellQuote writes a word a shell reads back as it, bare when nothing in
// it is special, and ShellWord reads back what it wrote.
func TestShellQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/usr/bin/dalo-hook", "/usr/bin/dalo-hook"},
		{"", "''"},
		{"my dir", "'my dir'"},
		{"it's", `'it'\''s'`},
		{"$HOME;rm", "'$HOME;rm'"},
	} {
		got := ShellQuote(tc.in)
		if got != tc.want {
			t.Errorf("ShellQuote(%q) = %s, want %s", tc.in, got, tc.want)
		}
		word, rest, ok := ShellWord(got + " --home x")
		if tc.in != "" && (!ok || word != tc.in || rest != " --home x") {
			t.Errorf("ShellWord(%s) = %q, %q, %v", got, word, rest, ok)
		}
	}
}
