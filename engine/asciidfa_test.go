package engine

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
)

// rulePatterns is every =~ and !~ operand of the rules that is a constant
// string: literals, and names and interpolations of the package's constants
// (#refAtom, #nonBlank), resolved the way the leaf program does.
func rulePatterns(t testing.TB) []string {
	t.Helper()
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var declined []string
	add := func(x ast.Expr) {
		v, err := r.leaf.operand(x)
		if s, ok := v.(string); err == nil && ok {
			seen[s] = true
			return
		}
		declined = append(declined, ast.Node(x).Pos().String())
	}
	it, err := r.root.Fields(cue.Definitions(true), cue.Hidden(true), cue.Optional(true))
	if err != nil {
		t.Fatal(err)
	}
	for it.Next() {
		src := it.Value().Source()
		if src == nil {
			continue
		}
		ast.Walk(src, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.UnaryExpr:
				if x.Op == token.MAT || x.Op == token.NMAT {
					add(x.X)
				}
			case *ast.BinaryExpr:
				if x.Op == token.MAT || x.Op == token.NMAT {
					add(x.Y)
				}
			}
			return true
		}, nil)
	}
	if len(declined) > 0 {
		t.Logf("patterns not constant: %v", declined)
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	for _, want := range []string{`^[a-z0-9]+(-[a-z0-9]+)*$`, `^[A-Za-z_][A-Za-z0-9_]*$`, `^\S+$`, `^[^\x00]+$`, `^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`} {
		if !seen[want] {
			t.Fatalf("the rules' patterns %q lack %q: the walk misses some", out, want)
		}
	}
	return out
}

// dfaInputs is strings to match patterns against: the leaf corpus's, every
// string of up to two bytes over an alphabet of the classes' edges,
// runes of two and three bytes and invalid UTF-8 among ASCII, and random
// strings of the bytes the patterns name.
func dfaInputs(r *Rules, patterns []string) []string {
	var in []string
	for _, v := range leafCorpus(r) {
		if s, ok := v.(string); ok {
			in = append(in, s)
		}
	}
	alpha := []string{"", "a", "z", "A", "Z", "0", "9", "-", "_", ".", ":", "+", "/", "~", "$", " ", "\t", "\n", "\x00", "\x1f", "\x7f", "@", "é", "\xff", "\u3000", "\u017f", "\u212a", "k"}
	for _, a := range alpha {
		for _, b := range alpha {
			in = append(in, a+b)
		}
	}
	var bytes []byte
	for _, p := range patterns {
		bytes = append(bytes, p...)
	}
	bytes = append(bytes, "aZ09 \t\n\x00\x7f\xc3\xa9"...)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = bytes[rng.IntN(len(bytes))]
		}
		in = append(in, string(b))
	}
	return in
}

// TestRulePatternsDFA holds every pattern of the rules to having a DFA,
// which decides ASCII strings without regexp, and to agreeing with regexp
// on ASCII strings and others.
func TestRulePatternsDFA(t *testing.T) {
	pats := rulePatterns(t)
	if len(pats) < 15 {
		t.Fatalf("found %d patterns in the rules, want all of them: %q", len(pats), pats)
	}
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	inputs := dfaInputs(r, pats)
	var c patterns
	for _, pat := range pats {
		m, err := c.compile(pat)
		if err != nil {
			t.Fatalf("%q: %v", pat, err)
		}
		if m.dfa == nil {
			t.Errorf("%q has no DFA: its ASCII strings go to regexp", pat)
			continue
		}
		for _, s := range inputs {
			if got, want := m.MatchString(s), m.re.MatchString(s); got != want {
				t.Errorf("%q on %q: %v, regexp says %v", pat, s, got, want)
			}
		}
	}
}

// dfaCorner is patterns at the edges of what asciiDFA models, each either
// modelled exactly or refused.
var dfaCorner = []string{
	``, `^`, `$`, `^$`, `$^`, `^^`, `$$`, `a$|^b`, `^a|b$`, `(?:^|a)b`, `a(?:$|b)`, `x*$`, `^x*`,
	`(?i)k`, `(?i)[a-z]+`, `(?i)s`, `[^a]`, `.`, `(?s).`, `\S`, `\s+`, `\w+`, `\d`, `[[:^alpha:]]`,
	`\b`, `\Ba`, `(?m)^a$`, `\A`, `\z`, `a|`, `(a|b)*c`, `a{3,5}`, `[^\x00-\x1f\x7f]+`, `\pL`, `\PL`,
	`é`, `[^é]`, `a\x{80}`, `(a*)*`, `((((a+)?)*)+)$`, `[a-z]{20}`, `(a|b)*a(a|b){8}`,
}

func FuzzASCIIDFA(f *testing.F) {
	for _, p := range dfaCorner {
		for _, s := range []string{"", "a", "b", "ab", "ba", "x", "k", "K", "\u212a", "\n", "a\n", "é", "aaa", "\x80a"} {
			f.Add(p, s)
		}
	}
	f.Fuzz(func(t *testing.T, pat, s string) {
		re, err := regexp.Compile(pat)
		if err != nil {
			return
		}
		d := newASCIIDFA(pat)
		if d == nil {
			return
		}
		m := &matcher{re: re, dfa: d}
		if got, want := m.MatchString(s), re.MatchString(s); got != want {
			t.Fatalf("%q on %q: %v, regexp says %v", pat, s, got, want)
		}
	})
}

// TestASCIIDFACorners runs the corner patterns over every string of up to
// three bytes of a small alphabet, and refuses what cannot be modelled.
func TestASCIIDFACorners(t *testing.T) {
	alpha := []string{"a", "b", "c", "x", "k", "K", "s", " ", "\n", "0", "é", "\u212a", "\xff"}
	ins := []string{""}
	for n, prev := 0, []string{""}; n < 3; n++ {
		var next []string
		for _, p := range prev {
			for _, a := range alpha {
				next = append(next, p+a)
			}
		}
		ins, prev = append(ins, next...), next
	}
	ins = append(ins, strings.Repeat("a", 20), strings.Repeat("ab", 9)+"a"+strings.Repeat("b", 8))
	modelled := 0
	for _, pat := range dfaCorner {
		re := regexp.MustCompile(pat)
		d := newASCIIDFA(pat)
		if d == nil {
			continue
		}
		modelled++
		m := &matcher{re: re, dfa: d}
		for _, s := range ins {
			if got, want := m.MatchString(s), re.MatchString(s); got != want {
				t.Errorf("%q on %q: %v, regexp says %v", pat, s, got, want)
			}
		}
	}
	for _, pat := range []string{`\b`, `\Ba`, `(?m)^a$`, `(a|b)*a(a|b){8}`} {
		if newASCIIDFA(pat) != nil {
			t.Errorf("%q has a DFA; want none (an assertion it does not model, or too many states)", pat)
		}
	}
	if modelled < len(dfaCorner)-4 {
		t.Errorf("%d of %d corner patterns have a DFA", modelled, len(dfaCorner))
	}
}

// BenchmarkRulePatternsDFA is the cost of building the rules' DFAs, which
// every process pays once, and of matching a typical name against each.
func BenchmarkRulePatternsDFA(b *testing.B) {
	pats := rulePatterns(b)
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range pats {
				newASCIIDFA(p)
			}
		}
	})
	var ms []*matcher
	var c patterns
	for _, p := range pats {
		m, err := c.compile(p)
		if err != nil {
			b.Fatal(err)
		}
		ms = append(ms, m)
	}
	for _, name := range []string{"dfa", "regexp"} {
		b.Run("match/"+name, func(b *testing.B) {
			for b.Loop() {
				for _, m := range ms {
					if name == "dfa" {
						m.MatchString("own-0001-tool_x")
					} else {
						m.re.MatchString("own-0001-tool_x")
					}
				}
			}
		})
	}
}
