package plan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A reader reads the JSON that install and approve write (the dispatch
// index and the grants) without reflection, on dispatch's hot path: a
// dispatcher is a process of a few milliseconds, and encoding/json spent
// about a fifth of it filling its type caches and walking reflect.Values
// for a handful of small files.
//
// It reads only what it reads to the very value encoding/json would:
// every key of a struct spelt exactly as its field's json name and held
// once, integers without fraction or exponent that fit, strings of valid
// UTF-8, no nesting deeper than maxDepth, and nothing after the value. At
// anything else it fails (bad), and the caller decodes the same bytes with
// encoding/json, whose value and error stand. FuzzRead holds the two to
// agreeing wherever the reader does not fail.
type reader struct {
	b   []byte
	i   int
	bad bool
}

// maxDepth bounds the nesting the reader follows; encoding/json's own
// bound is far deeper, so a deeper input is left to it.
const maxDepth = 64

// fail marks the read failed and stops it: every loop ends at the end of
// the input.
func (r *reader) fail() {
	r.bad = true
	r.i = len(r.b)
}

// peek skips white space and returns the next byte, 0 at the end.
func (r *reader) peek() byte {
	for ; r.i < len(r.b); r.i++ {
		switch c := r.b[r.i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}

// eat consumes c if it is next.
func (r *reader) eat(c byte) bool {
	if r.peek() == c && !r.bad {
		r.i++
		return true
	}
	return false
}

// lit consumes the literal s (null, true, false) if it is next.
func (r *reader) lit(s string) bool {
	if r.peek() == s[0] && bytes.HasPrefix(r.b[r.i:], []byte(s)) {
		r.i += len(s)
		return true
	}
	return false
}

// ok says whether the read went to the end of the input without failing.
func (r *reader) ok() bool {
	r.peek()
	return !r.bad && r.i == len(r.b)
}

// members reads an object, calling each with every key, the reader at its
// value, which each must read. null reads as no object: false.
func (r *reader) members(each func(key string)) bool {
	if r.lit("null") {
		return false
	}
	if !r.eat('{') {
		r.fail()
		return false
	}
	if r.eat('}') {
		return true
	}
	for !r.bad {
		k := r.text()
		if !r.eat(':') {
			r.fail()
			break
		}
		each(k)
		if !r.eat(',') {
			if !r.eat('}') {
				r.fail()
			}
			break
		}
	}
	return true
}

// fields reads a struct's object, or null (no change), calling field with
// each key; field reads its value and says whether it knows the key. A
// key it does not know, or one held twice, fails the read: encoding/json
// would match it by case, or decode it twice.
func (r *reader) fields(field func(key string) bool) {
	var seen [24]string
	n := 0
	r.members(func(k string) {
		if n == len(seen) || slices.Contains(seen[:n], k) || !field(k) {
			r.fail()
			return
		}
		seen[n] = k
		n++
	})
}

// array reads an array, calling elem for each element, which elem must
// read. null reads as no array: false.
func (r *reader) array(elem func()) bool {
	if r.lit("null") {
		return false
	}
	if !r.eat('[') {
		r.fail()
		return false
	}
	if r.eat(']') {
		return true
	}
	for !r.bad {
		elem()
		if !r.eat(',') {
			if !r.eat(']') {
				r.fail()
			}
			break
		}
	}
	return true
}

// strings reads a []string: nil for null, empty (not nil) for [].
func (r *reader) strings() []string {
	out := []string{}
	if !r.array(func() { out = append(out, r.text()) }) {
		return nil
	}
	return out
}

// readMap reads a map whose values elem reads: nil for null. A key held
// twice fails the read (encoding/json keeps the last).
func readMap[V any](r *reader, elem func() V) map[string]V {
	m := map[string]V{}
	if !r.members(func(k string) {
		if _, dup := m[k]; dup {
			r.fail()
		}
		m[k] = elem()
	}) {
		return nil
	}
	return m
}

// stringMap reads a map[string]string: nil for null.
func (r *reader) stringMap() map[string]string {
	return readMap(r, r.text)
}

// boolean reads a bool; null is false, as it leaves a fresh one.
func (r *reader) boolean() bool {
	switch {
	case r.lit("true"):
		return true
	case r.lit("false"), r.lit("null"):
		return false
	}
	r.fail()
	return false
}

// integer reads an int: digits with an optional sign, no fraction or
// exponent (which encoding/json refuses for an int, or reads otherwise).
// null is 0.
func (r *reader) integer() int {
	if r.lit("null") {
		return 0
	}
	s := r.number()
	if r.bad || bytes.ContainsAny(s, ".eE") {
		r.fail()
		return 0
	}
	n, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil || int64(int(n)) != n {
		r.fail()
		return 0
	}
	return int(n)
}

// number reads a JSON number's literal, as the grammar has it.
func (r *reader) number() []byte {
	r.peek()
	start := r.i
	digits := func() int {
		n := 0
		for r.i < len(r.b) && '0' <= r.b[r.i] && r.b[r.i] <= '9' {
			r.i++
			n++
		}
		return n
	}
	if r.i < len(r.b) && r.b[r.i] == '-' {
		r.i++
	}
	if lead := r.i; digits() == 0 || r.b[lead] == '0' && r.i-lead > 1 {
		r.fail()
		return nil
	}
	if r.i < len(r.b) && r.b[r.i] == '.' {
		r.i++
		if digits() == 0 {
			r.fail()
			return nil
		}
	}
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i++
		if r.i < len(r.b) && (r.b[r.i] == '+' || r.b[r.i] == '-') {
			r.i++
		}
		if digits() == 0 {
			r.fail()
			return nil
		}
	}
	return r.b[start:r.i]
}

// text reads a string; null is "", as it leaves a fresh one.
func (r *reader) text() string {
	if r.lit("null") {
		return ""
	}
	if !r.eat('"') {
		r.fail()
		return ""
	}
	start := r.i
	r.i += plainRun(r.b[r.i:])
	if r.i == len(r.b) || !utf8.Valid(r.b[start:r.i]) {
		r.fail() // encoding/json reads invalid UTF-8 as U+FFFD
		return ""
	}
	switch r.b[r.i] {
	case '"':
		r.i++
		return string(r.b[start : r.i-1])
	case '\\':
		return r.escaped(append([]byte(nil), r.b[start:r.i]...))
	}
	r.fail() // a control character
	return ""
}

// escaped reads the rest of a string with an escape in it, after buf.
func (r *reader) escaped(buf []byte) string {
	for r.i < len(r.b) {
		n := plainRun(r.b[r.i:])
		if !utf8.Valid(r.b[r.i : r.i+n]) {
			r.fail()
			break
		}
		buf = append(buf, r.b[r.i:r.i+n]...)
		r.i += n
		if r.i == len(r.b) {
			break
		}
		switch c := r.b[r.i]; {
		case c == '"':
			r.i++
			return string(buf)
		case c == '\\' && r.i+1 < len(r.b):
			e := r.b[r.i+1]
			r.i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				ru := r.hex4()
				if utf16.IsSurrogate(ru) {
					// Only a whole pair is read here; encoding/json
					// reads the rest its own way.
					if !bytes.HasPrefix(r.b[r.i:], []byte(`\u`)) {
						r.fail()
						break
					}
					r.i += 2
					if ru = utf16.DecodeRune(ru, r.hex4()); ru == utf8.RuneError {
						r.fail()
					}
				}
				buf = utf8.AppendRune(buf, ru)
			default:
				r.fail()
			}
		default: // a control character, or a backslash at the end
			r.fail()
		}
	}
	r.fail()
	return ""
}

// plainRun returns how many bytes b begins with that a JSON string holds
// as they are: none a quote, a backslash or a control character. It looks
// at eight bytes a step, so that the megabyte of a file a harness is about
// to write costs a dispatcher little more than reading it: flagged is the
// classic test for a byte below 0x20 or equal to one given, whose lowest
// flag is always a true one (a borrow only runs upwards).
func plainRun(b []byte) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	flagged := func(w uint64) uint64 {
		below := (w - 0x20*ones) &^ w
		quote := w ^ '"'*ones
		slash := w ^ '\\'*ones
		return (below | (quote-ones)&^quote | (slash-ones)&^slash) & highs
	}
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if m := flagged(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' {
			break
		}
	}
	return i
}

// skip reads past any JSON value, building nothing: what json.Valid
// accepts, strings holding invalid UTF-8 included (encoding/json reads
// them as U+FFFD), nested no deeper than maxDepth.
func (r *reader) skip(depth int) {
	if depth > maxDepth {
		r.fail()
		return
	}
	switch r.peek() {
	case '{':
		r.i++
		if r.eat('}') {
			return
		}
		for !r.bad {
			if r.peek() != '"' {
				r.fail()
				return
			}
			r.skipString()
			if !r.eat(':') {
				r.fail()
				return
			}
			r.skip(depth + 1)
			if !r.eat(',') {
				if !r.eat('}') {
					r.fail()
				}
				return
			}
		}
	case '[':
		r.array(func() { r.skip(depth + 1) })
	case '"':
		r.skipString()
	case 't':
		if !r.lit("true") {
			r.fail()
		}
	case 'f':
		if !r.lit("false") {
			r.fail()
		}
	case 'n':
		if !r.lit("null") {
			r.fail()
		}
	default:
		r.number()
	}
}

// skipString reads past the string at r.i, checking only its escapes.
func (r *reader) skipString() {
	r.i++ // the opening quote
	for {
		r.i += plainRun(r.b[r.i:])
		if r.i == len(r.b) {
			r.fail()
			return
		}
		switch r.b[r.i] {
		case '"':
			r.i++
			return
		case '\\':
			if r.i+1 == len(r.b) {
				r.fail()
				return
			}
			e := r.b[r.i+1]
			r.i += 2
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				r.hex4()
			default:
				r.fail()
			}
			if r.bad {
				return
			}
		default:
			r.fail()
			return
		}
	}
}

// hex4 reads the four hex digits of a \u escape.
func (r *reader) hex4() rune {
	if r.i+4 > len(r.b) {
		r.fail()
		return 0
	}
	n, err := strconv.ParseUint(string(r.b[r.i:r.i+4]), 16, 32)
	if err != nil {
		r.fail()
		return 0
	}
	r.i += 4
	return rune(n)
}

// value reads any JSON value as encoding/json does into an any: objects
// as map[string]any, arrays as []any, numbers as float64.
func (r *reader) value(depth int) any {
	if depth > maxDepth {
		r.fail()
		return nil
	}
	switch r.peek() {
	case '{':
		return readMap(r, func() any { return r.value(depth + 1) })
	case '[':
		a := []any{}
		r.array(func() { a = append(a, r.value(depth+1)) })
		return a
	case '"':
		return r.text()
	case 't', 'f':
		return r.boolean()
	case 'n':
		if r.lit("null") {
			return nil
		}
	default:
		s := r.number()
		if r.bad {
			return nil
		}
		f, err := strconv.ParseFloat(string(s), 64)
		if err == nil {
			return f
		}
	}
	r.fail()
	return nil
}
