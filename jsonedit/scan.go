// Package jsonedit edits JSON documents people own as text: it scans a
// document into values with their byte offsets, and splices values in or
// out in the document's own layout, so that every key, order, formatting
// choice, comment (in JSON with comments) and byte of the rest survives.
// It never re-marshals a document.
// dalo edits the harnesses' hook configuration with it.
package jsonedit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// A Value is one JSON value of a scanned document and where it is.
type Value struct {
	Kind       byte // '{', '[', '"', '0' (number), 'l' (true, false, null)
	Start, End int  // the value is doc[start:end]
	Members    []Member
	Elems      []*Value
	Str        string // a string's decoded text
	// dups are the members of an object whose key an earlier member has
	// (index into members), each with the index of the first: JSON readers
	// differ on which copy counts, so no editor should touch such an object.
	dups [][2]int
	// skimmed is set on a value scanned without its members and elements
	// (ScanMember), and dupIn then is the first object in it, itself
	// first, that holds a key twice (with the first such pair alone as
	// its members), or nil.
	skimmed bool
	dupIn   *Value
}

// Duplicate returns the first pair of members of v, an object, that share
// a key: the first copy and the next one.
func (v *Value) Duplicate() (first, again *Member, ok bool) {
	if len(v.dups) == 0 {
		return nil, nil, false
	}
	d := v.dups[0]
	return &v.Members[d[0]], &v.Members[d[1]], true
}

// AnyDuplicate returns the first object in v (in document order, v itself
// first) that holds a key twice, or nil.
func AnyDuplicate(v *Value) *Value {
	if len(v.dups) > 0 {
		return v
	}
	if v.skimmed {
		return v.dupIn
	}
	for _, m := range v.Members {
		if d := AnyDuplicate(m.Val); d != nil {
			return d
		}
	}
	for _, e := range v.Elems {
		if d := AnyDuplicate(e); d != nil {
			return d
		}
	}
	return nil
}

// A Member is one key and value of an object. KeyStart is the offset of
// the key's opening quote: where a splice that removes the member starts.
type Member struct {
	KeyStart int
	Key      string
	Val      *Value
}

// Member returns the first member of v, an object, whose key is key, or
// nil. An object holding a key twice is refused before editing
// (Duplicate), so the first is the only one.
func (v *Value) Member(key string) *Member {
	for i := range v.Members {
		if v.Members[i].Key == key {
			return &v.Members[i]
		}
	}
	return nil
}

// A SyntaxError is a position in a document that is not valid JSON.
type SyntaxError struct {
	Line, Column int
	Msg          string
}

// Error gives the 1-based line and column; the caller adds the file.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%d:%d: not valid JSON: %s", e.Line, e.Column, e.Msg)
}

type scanner struct {
	doc   []byte
	pos   int
	depth int
	// member, when set, keeps only the values of the top-level object and
	// of its member of that key; every other member's value is checked
	// but skimmed (Value.skimmed).
	member string
	// checked: the document was scanned whole before and changed since
	// only by splices of JSON rendered here (Render, InsertMember, ...),
	// so a skimmed string is skipped to its closing quote, not checked
	// again.
	checked bool
	// skimDepth is the depth of the outermost skimmed container being
	// scanned, or 0.
	skimDepth int
	// skimTop skims the whole document; visit, when set, is called with
	// every string value (ScanStrings).
	skimTop bool
	visit   func(tok []byte)
	// comments: the document is JSON with comments, // to the end of the
	// line and /* */, wherever whitespace may be.
	comments bool
}

// MaxDepth is how deeply a document may nest.
const MaxDepth = 512

// utf8BOM is the byte order mark JSON does not allow.
const utf8BOM = "\xef\xbb\xbf"

// Scan scans a whole document: one value with optional whitespace.
func Scan(doc []byte) (*Value, error) { return scanDoc(&scanner{doc: doc}) }

// ScanStrings checks doc as Scan does and calls visit with each string
// value in it (not the keys), quotes and escapes included, without keeping
// anything else. With comments, comments are whitespace.
func ScanStrings(doc []byte, comments bool, visit func(tok []byte)) error {
	_, err := scanDoc(&scanner{doc: doc, visit: visit, skimTop: true, comments: comments})
	return err
}

// ScanMember is Scan for an editor of one member of the top-level object:
// it checks the whole document and finds every key held twice, but keeps
// values only in the top-level object and its member key. A user's
// settings.json can hold megabytes of permissions dalo never reads beside
// its "hooks", and install scans it once per edit. With comments, it reads
// comments as whitespace.
func ScanMember(doc []byte, key string, comments bool) (*Value, error) {
	return scanDoc(&scanner{doc: doc, member: key, comments: comments})
}

// RescanMember is ScanMember for a document scanned before and since
// changed only by splices of JSON rendered here: what is skimmed is not
// checked again.
func RescanMember(doc []byte, key string, comments bool) (*Value, error) {
	return scanDoc(&scanner{doc: doc, member: key, comments: comments, checked: true})
}

// WithoutComments returns doc, JSON with comments, with each comment
// replaced by as many spaces (its newlines kept): what a JSON decoder
// reads as a reader of comments does, its offsets those of doc. doc must
// have been scanned with comments first.
func WithoutComments(doc []byte) []byte {
	out := bytes.Clone(doc)
	s := &scanner{doc: doc, comments: true}
	for s.pos < len(doc) {
		switch c := doc[s.pos]; {
		case c == '"':
			s.pos++
			for s.pos < len(doc) && doc[s.pos] != '"' {
				if doc[s.pos] == '\\' {
					s.pos++
				}
				s.pos++
			}
			s.pos++
		case c == '/':
			start := s.pos
			s.space()
			for i := start; i < s.pos; i++ {
				if out[i] != '\n' && out[i] != '\r' {
					out[i] = ' '
				}
			}
			if s.pos == start {
				s.pos++
			}
		default:
			s.pos++
		}
	}
	return out
}

func scanDoc(s *scanner) (*Value, error) {
	doc := s.doc
	if !s.checked && !utf8.Valid(doc) {
		return nil, &SyntaxError{1, 1, "not UTF-8"}
	}
	if bytes.HasPrefix(doc, []byte(utf8BOM)) {
		// RFC 8259 §8.1 forbids it, and the harnesses' own readers refuse
		// it: accepting it here would install hooks the harness never runs.
		return nil, &SyntaxError{1, 1, "the file starts with a UTF-8 byte order mark (U+FEFF), which JSON does not allow and the harness would not read either; save the file without it"}
	}
	s.space()
	v, err := s.value(!s.skimTop)
	if err != nil {
		return nil, err
	}
	s.space()
	if s.pos != len(doc) {
		return nil, s.errorf("unexpected %q after the top-level value", s.doc[s.pos])
	}
	return v, nil
}

func (s *scanner) errorf(format string, args ...any) error {
	line, col := Position(s.doc, s.pos)
	if s.comments && bytes.HasPrefix(s.doc[s.pos:], []byte("/*")) {
		// space stops at a comment with no end: say so, not what was due.
		return &SyntaxError{line, col, "a /* comment is never closed (no */ after it)"}
	}
	return &SyntaxError{line, col, fmt.Sprintf(format, args...)}
}

// Position gives the 1-based line and byte column of offset off.
func Position(doc []byte, off int) (int, int) {
	off = min(off, len(doc))
	line := 1 + bytes.Count(doc[:off], []byte("\n"))
	col := off + 1
	if i := bytes.LastIndexByte(doc[:off], '\n'); i >= 0 {
		col = off - i
	}
	return line, col
}

func (s *scanner) space() {
	for s.pos < len(s.doc) {
		// Blanks are stepped over in locals, as string's bytes are.
		doc, i := s.doc, s.pos
		for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
			i++
		}
		s.pos = i
		if i == len(doc) {
			return
		}
		switch s.doc[s.pos] {
		case '/':
			if !s.comments || s.pos+1 >= len(s.doc) {
				return
			}
			switch s.doc[s.pos+1] {
			case '/':
				if i := bytes.IndexByte(s.doc[s.pos:], '\n'); i >= 0 {
					s.pos += i + 1
				} else {
					s.pos = len(s.doc)
				}
			case '*':
				i := bytes.Index(s.doc[s.pos+2:], []byte("*/"))
				if i < 0 {
					return // an unclosed comment: an error where a value or end is due
				}
				s.pos += 2 + i + 2
			default:
				return
			}
		default:
			return
		}
	}
}

// value scans one value; when keep is false, it is skimmed: checked and
// placed, its strings not decoded, its members and elements not kept.
func (s *scanner) value(keep bool) (*Value, error) {
	if s.pos >= len(s.doc) {
		return nil, s.errorf("unexpected end of input")
	}
	switch c := s.doc[s.pos]; {
	case c == '{':
		return s.object(keep)
	case c == '[':
		return s.array(keep)
	case c == '"':
		start := s.pos
		str, err := s.string(keep)
		if err == nil && s.visit != nil {
			s.visit(s.doc[start:s.pos])
		}
		if err != nil || s.skipping() {
			return nil, err
		}
		return &Value{Kind: '"', Start: start, End: s.pos, Str: str, skimmed: !keep}, nil
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(s.doc[s.pos:], []byte(lit)) {
				s.pos += len(lit)
				if s.skipping() {
					return nil, nil
				}
				return &Value{Kind: 'l', Start: s.pos - len(lit), End: s.pos}, nil
			}
		}
		return nil, s.errorf("unexpected %q", c)
	}
}

// skipping reports whether the value being scanned is inside a skimmed
// container: nothing asks where it is, so a scalar there gets no Value.
func (s *scanner) skipping() bool { return s.skimDepth > 0 && s.depth >= s.skimDepth }

func (s *scanner) nest() error {
	s.depth++
	if s.depth > MaxDepth {
		return s.errorf("nested more than %d levels", MaxDepth)
	}
	return nil
}

func (s *scanner) object(keep bool) (*Value, error) {
	if err := s.nest(); err != nil {
		return nil, err
	}
	defer func() { s.depth-- }()
	v := &Value{Kind: '{', Start: s.pos, skimmed: !keep}
	if !keep && s.skimDepth == 0 {
		s.skimDepth = s.depth
		defer func() { s.skimDepth = 0 }()
	}
	if !keep {
		// A skimmed object keeps its members only until its end, to find
		// keys held twice; then only the first such pair, if any.
		defer func() { v.Members = nil }()
	}
	var keys map[string]int // key → index of its first member, once the object is large
	s.pos++
	s.space()
	if s.pos < len(s.doc) && s.doc[s.pos] == '}' {
		s.pos++
		v.End = s.pos
		return v, nil
	}
	for {
		s.space()
		if s.pos >= len(s.doc) || s.doc[s.pos] != '"' {
			return nil, s.errorf("expected a string key")
		}
		ks := s.pos
		key, err := s.string(true)
		if err != nil {
			return nil, err
		}
		s.space()
		if s.pos >= len(s.doc) || s.doc[s.pos] != ':' {
			return nil, s.errorf("expected ':' after key %q", key)
		}
		s.pos++
		s.space()
		// With member set, the top level and that member are kept.
		val, err := s.value(keep && (s.member == "" || s.depth > 1 || key == s.member))
		if err != nil {
			return nil, err
		}
		if !keep {
			v.skim(val)
			val = nil
		}
		// Small objects are searched; a large one keeps an index, so that
		// a document is scanned in linear time.
		if keys == nil && len(v.Members) >= 16 {
			keys = make(map[string]int, 2*len(v.Members))
			for i, m := range v.Members {
				if _, ok := keys[m.Key]; !ok {
					keys[m.Key] = i
				}
			}
		}
		if keys != nil {
			if i, ok := keys[key]; ok {
				v.dups = append(v.dups, [2]int{i, len(v.Members)})
			} else {
				keys[key] = len(v.Members)
			}
		} else {
			for i := range v.Members {
				if v.Members[i].Key == key {
					v.dups = append(v.dups, [2]int{i, len(v.Members)})
					break
				}
			}
		}
		v.Members = append(v.Members, Member{KeyStart: ks, Key: key, Val: val})
		s.space()
		if s.pos >= len(s.doc) {
			return nil, s.errorf("unexpected end of input in an object")
		}
		switch s.doc[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			v.End = s.pos
			if !keep && len(v.dups) > 0 {
				d := v.dups[0]
				v.dupIn = &Value{Kind: '{', Start: v.Start, End: v.End, Members: []Member{v.Members[d[0]], v.Members[d[1]]}, dups: [][2]int{{0, 1}}}
				v.dups = nil
			}
			return v, nil
		default:
			return nil, s.errorf("expected ',' or '}' in an object, found %q", s.doc[s.pos])
		}
	}
}

// skim records in v, a skimmed container, the first object holding a key
// twice that c, a value in it, holds: the first in document order, since
// v's own pair, found at its end, replaces it.
func (v *Value) skim(c *Value) {
	if v.dupIn == nil && c != nil && c.skimmed {
		v.dupIn = c.dupIn
	}
}

func (s *scanner) array(keep bool) (*Value, error) {
	if err := s.nest(); err != nil {
		return nil, err
	}
	defer func() { s.depth-- }()
	v := &Value{Kind: '[', Start: s.pos, skimmed: !keep}
	if !keep && s.skimDepth == 0 {
		s.skimDepth = s.depth
		defer func() { s.skimDepth = 0 }()
	}
	s.pos++
	s.space()
	if s.pos < len(s.doc) && s.doc[s.pos] == ']' {
		s.pos++
		v.End = s.pos
		return v, nil
	}
	for {
		s.space()
		e, err := s.value(keep)
		if err != nil {
			return nil, err
		}
		if keep {
			v.Elems = append(v.Elems, e)
		} else {
			v.skim(e)
		}
		s.space()
		if s.pos >= len(s.doc) {
			return nil, s.errorf("unexpected end of input in an array")
		}
		switch s.doc[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			v.End = s.pos
			return v, nil
		default:
			return nil, s.errorf("expected ',' or ']' in an array, found %q", s.doc[s.pos])
		}
	}
}

// stringSpecial marks the bytes that end a string's plain run: the closing
// quote, a backslash and the control characters JSON refuses in it.
var stringSpecial = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// plainRun returns the index of the first byte of doc at or after i that
// stringSpecial marks, or len(doc). It tests eight bytes a step where it
// can, each test exact about whether any of the eight is one: a byte
// below 0x20 borrows into a high bit it does not have subtracting 0x20
// from each, and '"' and '\\' are the bytes that XOR with them makes
// zero, which borrows subtracting one.
func plainRun(doc []byte, i int) int {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	for i+8 <= len(doc) {
		b := doc[i : i+8] // the eight loads become one, without bounds checks
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		quote, backslash := w^'"'*ones, w^'\\'*ones
		if ((w-0x20*ones)&^w|(quote-ones)&^quote|(backslash-ones)&^backslash)&high != 0 {
			break
		}
		i += 8
	}
	for i < len(doc) && !stringSpecial[doc[i]] {
		i++
	}
	return i
}

// string scans a string and returns its text, or "" when keep is false.
func (s *scanner) string(keep bool) (string, error) {
	start := s.pos
	escaped := false
	s.pos++ // the opening quote
	// Most bytes of a string are none of these: skip them eight at a
	// time (plainRun). A byte a step, through s.pos, was a third of an
	// install's CPU with a 50 MB settings.json.
	s.pos = plainRun(s.doc, s.pos)
	if !keep && s.checked {
		for {
			i := bytes.IndexByte(s.doc[s.pos:], '"')
			if i < 0 {
				s.pos = start
				return "", s.errorf("unterminated string")
			}
			s.pos += i
			n := 0 // backslashes before the quote: an odd number escapes it
			for j := s.pos - 1; j > start && s.doc[j] == '\\'; j-- {
				n++
			}
			s.pos++
			if n%2 == 0 {
				return "", nil
			}
		}
	}
	for s.pos < len(s.doc) {
		switch c := s.doc[s.pos]; {
		case c == '"':
			s.pos++
			if !keep {
				return "", nil // checked: what follows decodes the escapes
			}
			if !escaped {
				// Its bytes are its text: the document is valid UTF-8
				// (Scan) and control characters were refused. Most
				// strings are so, and decoding each through
				// encoding/json cost two thirds of scanning a large
				// settings.json.
				return string(s.doc[start+1 : s.pos-1]), nil
			}
			var out string
			if err := json.Unmarshal(s.doc[start:s.pos], &out); err != nil {
				s.pos = start
				return "", s.errorf("invalid string")
			}
			return out, nil
		case c == '\\':
			escaped = true
			if s.pos+1 >= len(s.doc) {
				return "", s.errorf("unterminated string")
			}
			switch s.doc[s.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos += 2
			case 'u':
				if s.pos+6 > len(s.doc) || !isHex4(s.doc[s.pos+2:s.pos+6]) {
					return "", s.errorf("invalid \\u escape")
				}
				s.pos += 6
			default:
				return "", s.errorf("invalid escape \\%c", s.doc[s.pos+1])
			}
		case c < 0x20:
			return "", s.errorf("control character in a string")
		default:
			s.pos++
		}
	}
	s.pos = start
	return "", s.errorf("unterminated string")
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (s *scanner) number() (*Value, error) {
	start := s.pos
	if s.doc[s.pos] == '-' {
		s.pos++
	}
	digits := func() int {
		n := 0
		for s.pos < len(s.doc) && s.doc[s.pos] >= '0' && s.doc[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if s.pos < len(s.doc) && s.doc[s.pos] == '0' {
		s.pos++
	} else if digits() == 0 {
		return nil, s.errorf("invalid number")
	}
	if s.pos < len(s.doc) && s.doc[s.pos] == '.' {
		s.pos++
		if digits() == 0 {
			return nil, s.errorf("invalid number")
		}
	}
	if s.pos < len(s.doc) && (s.doc[s.pos] == 'e' || s.doc[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.doc) && (s.doc[s.pos] == '+' || s.doc[s.pos] == '-') {
			s.pos++
		}
		if digits() == 0 {
			return nil, s.errorf("invalid number")
		}
	}
	if s.skipping() {
		return nil, nil
	}
	return &Value{Kind: '0', Start: start, End: s.pos}, nil
}
