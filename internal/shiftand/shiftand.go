// Package shiftand matches the regular expressions that are a sequence of
// single characters between ^ and $ (such as ^mcp__[^_].*__.+$, the
// provider tables' MCP tool names) as the bits of one word: the
// Shift-And algorithm. Each character of the text is a table lookup and
// a few shifts, where regexp's backtracker, asked the same question of
// every tool name of every hook, spent most of validating hooks that name
// hundreds of MCP tools.
//
// Compile accepts only what it matches exactly as package regexp does;
// for anything else it reports false, and the caller asks regexp.
package shiftand

import (
	"regexp/syntax"
	"unicode/utf8"
)

// A Matcher matches one anchored sequence of at most maxElems elements,
// each a set of characters matched once, at most once (?) or any number
// of times (*; + is one, then any number). Bit i of a state is "the
// first i elements matched, the next is element i"; bit n, the whole.
type Matcher struct {
	n     int
	ascii [utf8.RuneSelf]uint64 // the elements each ASCII character matches
	stay  uint64                // the elements that repeat (*)
	skip  uint64                // the elements that may match nothing (* and ?)
	sets  [][]rune              // each element's ranges, for the characters outside ASCII
	start uint64                // the state before the text: bit 0, closed
}

// maxElems leaves bit 63 for the whole pattern matched.
const maxElems = 63

// Compile makes a Matcher of expr, parsed with the flags regexp.Compile
// uses, when it is a sequence Matcher can hold; ok is false otherwise.
func Compile(expr string) (m *Matcher, ok bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, false
	}
	re = re.Simplify()
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[0].Op != syntax.OpBeginText || re.Sub[len(re.Sub)-1].Op != syntax.OpEndText {
		return nil, false
	}
	m = &Matcher{}
	for _, sub := range re.Sub[1 : len(re.Sub)-1] {
		if !m.add(sub) {
			return nil, false
		}
	}
	for c := range rune(utf8.RuneSelf) {
		for i, set := range m.sets {
			if in(set, c) {
				m.ascii[c] |= 1 << i
			}
		}
	}
	m.start = m.closed(1)
	return m, true
}

// add appends the elements of sub, reporting false when it is not one
// Matcher holds.
func (m *Matcher) add(sub *syntax.Regexp) bool {
	switch sub.Op {
	case syntax.OpLiteral:
		if sub.Flags&syntax.FoldCase != 0 {
			return false
		}
		for _, r := range sub.Rune {
			if !m.elem([]rune{r, r}, false, false) {
				return false
			}
		}
		return true
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return m.elem(charSet(sub), false, false)
	case syntax.OpQuest, syntax.OpStar, syntax.OpPlus:
		set := charSet(sub.Sub[0])
		if set == nil {
			return false
		}
		if sub.Op == syntax.OpPlus && !m.elem(set, false, false) {
			return false
		}
		return m.elem(set, sub.Op != syntax.OpQuest, true)
	}
	return false
}

// elem appends the element of set: repeated when stay, and which may
// match nothing when skip.
func (m *Matcher) elem(set []rune, stay, skip bool) bool {
	if set == nil || m.n == maxElems {
		return false
	}
	if stay {
		m.stay |= 1 << m.n
	}
	if skip {
		m.skip |= 1 << m.n
	}
	m.sets = append(m.sets, set)
	m.n++
	return true
}

// charSet is the ranges of one character re matches, nil when it
// matches anything else (a string, a case folded, an empty class).
func charSet(re *syntax.Regexp) []rune {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 1 && re.Flags&syntax.FoldCase == 0 {
			return []rune{re.Rune[0], re.Rune[0]}
		}
	case syntax.OpCharClass:
		if len(re.Rune) > 0 {
			return re.Rune
		}
	case syntax.OpAnyChar:
		return []rune{0, utf8.MaxRune}
	case syntax.OpAnyCharNotNL:
		return []rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}
	}
	return nil
}

// in reports whether c is in the ranges of set.
func in(set []rune, c rune) bool {
	for i := 0; i < len(set); i += 2 {
		if set[i] <= c && c <= set[i+1] {
			return true
		}
	}
	return false
}

// closed is the state s with each element that may match nothing
// passed over.
func (m *Matcher) closed(s uint64) uint64 {
	for {
		t := s | (s&m.skip)<<1
		if t == s {
			return s
		}
		s = t
	}
}

// MatchString reports whether s matches the expression, as
// regexp.MatchString does: bytes that are not UTF-8 are each the
// character U+FFFD.
func (m *Matcher) MatchString(s string) bool {
	st := m.start
	for i := 0; i < len(s) && st != 0; {
		var matches uint64
		if c := s[i]; c < utf8.RuneSelf {
			matches = m.ascii[c]
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			for e, set := range m.sets {
				if in(set, r) {
					matches |= 1 << e
				}
			}
			i += size
		}
		t := st & matches
		st = m.closed((t&^m.stay)<<1 | t&m.stay)
	}
	return st&(1<<m.n) != 0
}
