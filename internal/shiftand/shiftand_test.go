package shiftand

import (
	"regexp"
	"strings"
	"testing"
)

// TestMatchString holds Matcher to regexp on the tables' patterns and on
// each kind of element, with names that match and names that nearly do.
func TestMatchString(t *testing.T) {
	names := []string{
		"", "m", "mcp", "mcp_", "mcp__", "mcp___", "mcp__a", "mcp__a_", "mcp__a__", "mcp__a__b",
		"mcp__github__create_issue", "mcp__gate-0000_0__tool_0", "mcp___x__y", "mcp__x___y",
		"mcp_github_create", "mcp__é__ü", "mcp__\xff__\xfe", "mcp__a\n__b", "mcp__a__\n",
		"Bash", "mcp__a__b\n", "xmcp__a__b", "MCP__a__b", "mcp__" + strings.Repeat("_", 40) + "a__b",
		"ab", "abc", "aab", "b", "ac", "a\nc", "aé", "a\u2028c",
	}
	for _, expr := range []string{
		"^mcp__[^_].*__.+$", "^mcp_[^_].*_.+$",
		"^a$", "^$", "^a?b$", "^a*b$", "^a+b?c?$", "^.*$", "^(?s:.)*$", "^[a-c]+$", "^[^a]*$",
		"^a.c$", "^a\\x{e9}$", "^é.?$", "^(?:ab)c$", "^ab*c*$",
	} {
		m, ok := Compile(expr)
		if !ok {
			t.Errorf("Compile(%q) declined", expr)
			continue
		}
		re := regexp.MustCompile(expr)
		for _, s := range names {
			if got, want := m.MatchString(s), re.MatchString(s); got != want {
				t.Errorf("%q on %q: %t, regexp says %t", expr, s, got, want)
			}
		}
	}
}

// TestCompileDeclines: what Matcher cannot hold is left to regexp.
func TestCompileDeclines(t *testing.T) {
	for _, expr := range []string{
		"mcp__.*", "^mcp__.*", "mcp$", "^(a)$", "^a|b$", "^(?i)a$", "^a{2,5}$", "^(?:ab)*$",
		"^\\bab$", "(", "^[^\\x00-\\x{10FFFF}]$", "^" + strings.Repeat("a", 64) + "$",
	} {
		if _, ok := Compile(expr); ok {
			t.Errorf("Compile(%q) accepted", expr)
		}
	}
	if _, ok := Compile("^" + strings.Repeat("a", 63) + "$"); !ok {
		t.Error("Compile of 63 elements declined")
	}
}

// FuzzMatchString holds Matcher to regexp on patterns made of the
// elements it holds and of some it does not, and on any text.
func FuzzMatchString(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, "mcp__a__b")
	f.Add([]byte{5, 7, 9, 4, 11}, "a_é\n")
	pieces := []string{"a", "b", "_", ".", "[^_]", "[a-c]", "é", "\\n", "(?s:.)", "*", "+", "?", "(?:ab)", "(a)", "|", "{2}", "(?i:a)", "[^\\n]", "\\x{2028}"}
	f.Fuzz(func(t *testing.T, code []byte, s string) {
		var b strings.Builder
		b.WriteString("^")
		for _, c := range code {
			b.WriteString(pieces[int(c)%len(pieces)])
		}
		b.WriteString("$")
		expr := b.String()
		m, ok := Compile(expr)
		if !ok {
			return
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			t.Fatalf("Compile(%q) accepted what regexp refuses: %v", expr, err)
		}
		if got, want := m.MatchString(s), re.MatchString(s); got != want {
			t.Fatalf("%q on %q: %t, regexp says %t", expr, s, got, want)
		}
	})
}

func BenchmarkMatchString(b *testing.B) {
	const expr, name = "^mcp__[^_].*__.+$", "mcp__gate-0000_12__tool_17"
	b.Run("shiftand", func(b *testing.B) {
		m, _ := Compile(expr)
		for b.Loop() {
			m.MatchString(name)
		}
	})
	b.Run("regexp", func(b *testing.B) {
		re := regexp.MustCompile(expr)
		for b.Loop() {
			re.MatchString(name)
		}
	})
}
