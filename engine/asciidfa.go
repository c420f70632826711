package engine

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
)

// A matcher is a compiled =~ operand. The rules' patterns are short
// anchored classes over ASCII ("^[a-z0-9]+(-[a-z0-9]+)*$", "^\\S+$") and
// the values they test are mostly ASCII identifiers, for which regexp's
// general machinery (one-pass or backtracking over runes) costs hundreds
// of nanoseconds a string. dfa, when the pattern allows one, decides the
// same question a byte at a time with a table lookup; any other input
// goes to re.
type matcher struct {
	re  *regexp.Regexp
	dfa *asciiDFA // nil: the pattern has something asciiDFA does not model
}

// MatchString is re.MatchString(s).
func (p *matcher) MatchString(s string) bool {
	if p.dfa != nil {
		if m, ok := p.dfa.match(s); ok {
			return m
		}
	}
	return p.re.MatchString(s)
}

// asciiDFAStates bounds the states of an asciiDFA: the table is 128 bytes
// a state, and a pattern that needs more is not one of the short ones the
// DFA is for. A counted repeat takes a state a count: "^[0-9a-f]{64}$"
// (a digest) needs 66.
const asciiDFAStates = 128

// An asciiDFA is a deterministic automaton equivalent to a regular
// expression's MatchString on strings of ASCII bytes: each such byte is
// one rune, so the program's rune instructions are decided by a byte
// table. State 0 is dead (no match can start or continue), state 1 the
// start of the text.
type asciiDFA struct {
	next  []uint8 // next[s<<7|b] is the state after byte b in state s
	flags []uint8 // per state: dfaMatch, dfaMatchAtEnd
}

const (
	dfaMatch      = 1 << iota // a match has ended: MatchString is true whatever follows
	dfaMatchAtEnd             // a match ends here if the text ends here ($)
)

// match is whether s matches, ok false when s has a byte the DFA does not
// model (>= 0x80, where regexp decodes runes). A verdict reached before
// such a byte stands: the text up to it is runes of one byte each, and a
// match that ended, or no thread left alive, does not depend on what follows.
func (d *asciiDFA) match(s string) (matched, ok bool) {
	st := 1
	for i := 0; i < len(s); i++ {
		if d.flags[st]&dfaMatch != 0 {
			return true, true
		}
		b := s[i]
		if b >= 0x80 {
			return false, false
		}
		st = int(d.next[st<<7|int(b)])
		if st == 0 {
			return false, true
		}
	}
	return d.flags[st] != 0, true
}

// newASCIIDFA builds the DFA for pattern by subset construction over the
// program regexp.Compile would run, or returns nil when the program has
// an empty-width assertion other than ^ and $ at the text's ends (word
// boundaries, (?m) line ends) or needs more than asciiDFAStates states.
func newASCIIDFA(pattern string) *asciiDFA {
	// regexp.Compile's own steps: Perl flags, simplified, compiled.
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil
	}
	for i := range prog.Inst {
		in := &prog.Inst[i]
		if in.Op == syntax.InstEmptyWidth && syntax.EmptyOp(in.Arg)&^(syntax.EmptyBeginText|syntax.EmptyEndText) != 0 {
			return nil
		}
	}
	b := dfaBuilder{prog: prog, ids: map[string]uint8{}, mark: make([]uint32, len(prog.Inst))}
	// Dead state and start of text; a match may also start at any later
	// position (MatchString is unanchored), so every state after a byte
	// takes in the threads the program's start spawns away from the text's
	// start, which are none when it begins with ^.
	b.add(nil, false)
	b.add(b.closure(nil, []uint32{uint32(prog.Start)}, true), true)
	restart := b.closure(nil, []uint32{uint32(prog.Start)}, false)
	class, reps := byteClasses(prog)
	var step, to []uint32            // reused: add keeps a copy of a new state's set
	succ := make([]uint8, len(reps)) // a state's successor by class
	for s := 1; s < len(b.sets); s++ {
		set := b.sets[s]
		if b.flags[s]&dfaMatch != 0 {
			// A match has ended; match returns before reading on.
			continue
		}
		for k, c := range reps {
			step = step[:0]
			for _, pc := range set {
				in := &prog.Inst[pc]
				switch in.Op {
				case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
					if in.MatchRune(rune(c)) {
						step = append(step, in.Out)
					}
				}
			}
			to = b.closure(append(to[:0], restart...), step, false)
			id, ok := b.add(to, false)
			if !ok {
				return nil
			}
			succ[k] = id
		}
		for c := range 128 {
			b.next[s<<7|c] = succ[class[c]]
		}
	}
	return &asciiDFA{next: b.next, flags: b.flags}
}

// byteClasses partitions the ASCII bytes into classes that every rune
// instruction of prog matches alike ([0-9a-f] makes two), so that a
// state's successors are worked out once a class: class is each byte's,
// reps a byte of each.
func byteClasses(prog *syntax.Prog) (class [128]uint8, reps []byte) {
	// The distinct rune instructions: a counted repeat repeats one.
	var distinct []*syntax.Inst
	for i := range prog.Inst {
		in := &prog.Inst[i]
		switch in.Op {
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			if !slices.ContainsFunc(distinct, func(d *syntax.Inst) bool {
				return d.Op == in.Op && d.Arg == in.Arg && slices.Equal(d.Rune, in.Rune)
			}) {
				distinct = append(distinct, in)
			}
		}
	}
	n := len(distinct)
	sig := make([]byte, 128*n) // sig[c*n:][:n]: which of them match byte c
	for j, in := range distinct {
		for c := range 128 {
			if in.MatchRune(rune(c)) {
				sig[c*n+j] = 1
			}
		}
	}
	ids := map[string]uint8{}
	for c := range 128 {
		row := sig[c*n : c*n+n]
		k, ok := ids[string(row)]
		if !ok {
			k = uint8(len(reps))
			ids[string(row)] = k
			reps = append(reps, byte(c))
		}
		class[c] = k
	}
	return class, reps
}

type dfaBuilder struct {
	prog  *syntax.Prog
	sets  [][]uint32 // a state's instructions that wait on input or the end
	ids   map[string]uint8
	next  []uint8
	flags []uint8
	mark  []uint32 // mark[pc] == gen: pc seen in this walk
	gen   uint32
	stack []uint32
	key   []byte
}

// visit is whether pc is new to the current walk, marking it seen.
func (b *dfaBuilder) visit(pc uint32) bool {
	if b.mark[pc] == b.gen {
		return false
	}
	b.mark[pc] = b.gen
	return true
}

// closure adds to set the instructions reachable from pcs without reading
// a byte, at the text's start or not, keeping those that read a rune,
// match, or wait for the text's end; it returns them sorted, without
// duplicates.
func (b *dfaBuilder) closure(set []uint32, pcs []uint32, atStart bool) []uint32 {
	stack := append(b.stack[:0], pcs...)
	b.gen++
	for _, pc := range set {
		b.visit(pc)
	}
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !b.visit(pc) {
			continue
		}
		in := &b.prog.Inst[pc]
		if next, ok := epsilon(stack, in); ok {
			stack = next
			continue
		}
		switch in.Op {
		case syntax.InstEmptyWidth:
			op := syntax.EmptyOp(in.Arg)
			if op&syntax.EmptyBeginText != 0 && !atStart {
				continue // can never hold again
			}
			if op&syntax.EmptyEndText != 0 {
				set = append(set, pc) // holds only if the text ends here
				continue
			}
			stack = append(stack, in.Out)
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL, syntax.InstMatch:
			set = append(set, pc)
		}
	}
	b.stack = stack
	slices.Sort(set)
	return slices.Compact(set)
}

// epsilon appends to stack the instructions in leads to without reading
// a byte or asserting anything (an alternation's two, a capture's or a
// no-op's next), and reports whether in is such an instruction: what
// closure and stateFlags both follow.
func epsilon(stack []uint32, in *syntax.Inst) ([]uint32, bool) {
	switch in.Op {
	case syntax.InstAlt, syntax.InstAltMatch:
		return append(stack, in.Out, in.Arg), true
	case syntax.InstCapture, syntax.InstNop:
		return append(stack, in.Out), true
	}
	return stack, false
}

// add is the state for set, made if new; ok is false past asciiDFAStates.
// The start of text is a state of its own even when another has its set:
// the ^ it may wait on behind a $ holds only there ("$^").
func (b *dfaBuilder) add(set []uint32, atStart bool) (id uint8, ok bool) {
	key := b.key[:0]
	if atStart {
		key = append(key, '^')
	}
	for _, pc := range set {
		key = strconv.AppendUint(key, uint64(pc), 10)
		key = append(key, ',')
	}
	b.key = key
	if id, ok := b.ids[string(key)]; ok {
		return id, true
	}
	if len(b.sets) >= asciiDFAStates {
		return 0, false
	}
	id = uint8(len(b.sets))
	b.ids[string(key)] = id
	b.sets = append(b.sets, slices.Clone(set))
	b.next = append(b.next, make([]uint8, 128)...)
	b.flags = append(b.flags, b.stateFlags(set, atStart))
	return id, true
}

// stateFlags is whether set holds a match, and whether it would at the
// text's end: the end-of-text assertions it waits on then hold, and so do
// those of the start of text in the start state ("^$" on "").
func (b *dfaBuilder) stateFlags(set []uint32, atStart bool) uint8 {
	var f uint8
	stack := slices.Clone(set)
	b.gen++
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !b.visit(pc) {
			continue
		}
		in := &b.prog.Inst[pc]
		if next, ok := epsilon(stack, in); ok {
			stack = next
			continue
		}
		switch in.Op {
		case syntax.InstMatch:
			if slices.Contains(set, pc) {
				f |= dfaMatch
			}
			f |= dfaMatchAtEnd
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&syntax.EmptyBeginText != 0 && !atStart {
				continue
			}
			stack = append(stack, in.Out)
		}
	}
	return f
}
