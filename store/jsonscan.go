package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The harness configuration files belong to the user. dalo edits them as
// text: it scans the JSON into values with byte offsets and splices its own
// entries in or out, so that every key, order, formatting choice, comment
// (where the harness reads the file with comments) and byte of the user's
// survives. It never re-marshals the user's document.

// A jvalue is one JSON value of a scanned document and where it is.
type jvalue struct {
	kind       byte // '{', '[', '"', '0' (number), 'l' (true, false, null)
	start, end int  // the value is doc[start:end]
	members    []jmember
	elems      []*jvalue
	str        string // a string's decoded text
	// dups are the members of an object whose key an earlier member has
	// (index into members), each with the index of the first: JSON readers
	// differ on which copy counts, so dalo edits no such object.
	dups [][2]int
	// skimmed is set on a value scanned without its members and elements
	// (scanConfigJSON), and dupIn then is the first object in it, itself
	// first, that holds a key twice (with the first such pair alone as
	// its members), or nil.
	skimmed bool
	dupIn   *jvalue
}

// duplicate returns the first pair of members of v, an object, that share
// a key: the first copy and the next one.
func (v *jvalue) duplicate() (first, again *jmember, ok bool) {
	if len(v.dups) == 0 {
		return nil, nil, false
	}
	d := v.dups[0]
	return &v.members[d[0]], &v.members[d[1]], true
}

// anyDuplicate returns the first object in v (in document order, v itself
// first) that holds a key twice, or nil.
func anyDuplicate(v *jvalue) *jvalue {
	if len(v.dups) > 0 {
		return v
	}
	if v.skimmed {
		return v.dupIn
	}
	for _, m := range v.members {
		if d := anyDuplicate(m.val); d != nil {
			return d
		}
	}
	for _, e := range v.elems {
		if d := anyDuplicate(e); d != nil {
			return d
		}
	}
	return nil
}

type jmember struct {
	keyStart int
	key      string
	val      *jvalue
}

func (v *jvalue) member(key string) *jmember {
	for i := range v.members {
		if v.members[i].key == key {
			return &v.members[i]
		}
	}
	return nil
}

// A SyntaxError is a position in a document that is not valid JSON.
type SyntaxError struct {
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%d:%d: not valid JSON: %s", e.Line, e.Column, e.Msg)
}

type scanner struct {
	doc   []byte
	pos   int
	depth int
	// config: the document is a harness configuration, of which dalo
	// reads the top-level object and what its "hooks" member holds; every
	// other member's value is checked but skimmed (jvalue.skimmed).
	config bool
	// checked: the document was scanned whole before and changed since
	// only by dalo's splices of JSON it rendered itself (editConfig), so
	// a skimmed string is skipped to its closing quote, not checked again.
	checked bool
	// skimDepth is the depth of the outermost skimmed container being
	// scanned, or 0.
	skimDepth int
	// skimTop skims the whole document; visit, when set, is called with
	// every string value (scanStrings).
	skimTop bool
	visit   func(tok []byte)
	// comments: the harness reads the document as JSON with comments, //
	// to the end of the line and /* */, wherever whitespace may be.
	comments bool
}

const maxJSONDepth = 512

// scanJSON scans a whole document: one value with optional whitespace.
func scanJSON(doc []byte) (*jvalue, error) { return scanDoc(&scanner{doc: doc}) }

// scanStrings checks doc as scanJSON does and calls visit with each string
// value in it (not the keys), quotes and escapes included, without keeping
// anything else. With comments, comments are whitespace.
func scanStrings(doc []byte, comments bool, visit func(tok []byte)) error {
	_, err := scanDoc(&scanner{doc: doc, visit: visit, skimTop: true, comments: comments})
	return err
}

// scanConfigJSON is scanJSON for a harness configuration: it checks the
// whole document and finds every key held twice, but keeps values only in
// the top-level object and its "hooks" member. A user's settings.json can
// hold megabytes of permissions dalo never reads, and install scans it
// once per edit. With comments, it reads comments as whitespace. checked
// says doc was scanned before and since changed only by splices of dalo's
// (scanner.checked).
func scanConfigJSON(doc []byte, comments, checked bool) (*jvalue, error) {
	return scanDoc(&scanner{doc: doc, config: true, comments: comments, checked: checked})
}

// withoutComments returns doc, JSON with comments, with each comment
// replaced by as many spaces (its newlines kept): what a JSON decoder
// reads as the harness does, its offsets those of doc. doc must have been
// scanned with comments first.
func withoutComments(doc []byte) []byte {
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

func scanDoc(s *scanner) (*jvalue, error) {
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
	line, col := position(s.doc, s.pos)
	return &SyntaxError{line, col, fmt.Sprintf(format, args...)}
}

// position gives the 1-based line and byte column of offset off.
func position(doc []byte, off int) (int, int) {
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
		switch s.doc[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
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
func (s *scanner) value(keep bool) (*jvalue, error) {
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
		return &jvalue{kind: '"', start: start, end: s.pos, str: str, skimmed: !keep}, nil
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(s.doc[s.pos:], []byte(lit)) {
				s.pos += len(lit)
				if s.skipping() {
					return nil, nil
				}
				return &jvalue{kind: 'l', start: s.pos - len(lit), end: s.pos}, nil
			}
		}
		return nil, s.errorf("unexpected %q", c)
	}
}

// skipping reports whether the value being scanned is inside a skimmed
// container: nothing asks where it is, so a scalar there gets no jvalue.
func (s *scanner) skipping() bool { return s.skimDepth > 0 && s.depth >= s.skimDepth }

func (s *scanner) nest() error {
	s.depth++
	if s.depth > maxJSONDepth {
		return s.errorf("nested more than %d levels", maxJSONDepth)
	}
	return nil
}

func (s *scanner) object(keep bool) (*jvalue, error) {
	if err := s.nest(); err != nil {
		return nil, err
	}
	defer func() { s.depth-- }()
	v := &jvalue{kind: '{', start: s.pos, skimmed: !keep}
	if !keep && s.skimDepth == 0 {
		s.skimDepth = s.depth
		defer func() { s.skimDepth = 0 }()
	}
	if !keep {
		// A skimmed object keeps its members only until its end, to find
		// keys held twice; then only the first such pair, if any.
		defer func() { v.members = nil }()
	}
	var keys map[string]int // key → index of its first member, once the object is large
	s.pos++
	s.space()
	if s.pos < len(s.doc) && s.doc[s.pos] == '}' {
		s.pos++
		v.end = s.pos
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
		// Of a configuration, the top level and hooks are kept.
		val, err := s.value(keep && (!s.config || s.depth > 1 || key == "hooks"))
		if err != nil {
			return nil, err
		}
		if !keep {
			v.skim(val)
			val = nil
		}
		// Small objects are searched; a large one keeps an index, so that
		// a document is scanned in linear time.
		if keys == nil && len(v.members) >= 16 {
			keys = make(map[string]int, 2*len(v.members))
			for i, m := range v.members {
				if _, ok := keys[m.key]; !ok {
					keys[m.key] = i
				}
			}
		}
		if keys != nil {
			if i, ok := keys[key]; ok {
				v.dups = append(v.dups, [2]int{i, len(v.members)})
			} else {
				keys[key] = len(v.members)
			}
		} else {
			for i := range v.members {
				if v.members[i].key == key {
					v.dups = append(v.dups, [2]int{i, len(v.members)})
					break
				}
			}
		}
		v.members = append(v.members, jmember{keyStart: ks, key: key, val: val})
		s.space()
		if s.pos >= len(s.doc) {
			return nil, s.errorf("unexpected end of input in an object")
		}
		switch s.doc[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			v.end = s.pos
			if !keep && len(v.dups) > 0 {
				d := v.dups[0]
				v.dupIn = &jvalue{kind: '{', start: v.start, end: v.end, members: []jmember{v.members[d[0]], v.members[d[1]]}, dups: [][2]int{{0, 1}}}
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
func (v *jvalue) skim(c *jvalue) {
	if v.dupIn == nil && c != nil && c.skimmed {
		v.dupIn = c.dupIn
	}
}

func (s *scanner) array(keep bool) (*jvalue, error) {
	if err := s.nest(); err != nil {
		return nil, err
	}
	defer func() { s.depth-- }()
	v := &jvalue{kind: '[', start: s.pos, skimmed: !keep}
	if !keep && s.skimDepth == 0 {
		s.skimDepth = s.depth
		defer func() { s.skimDepth = 0 }()
	}
	s.pos++
	s.space()
	if s.pos < len(s.doc) && s.doc[s.pos] == ']' {
		s.pos++
		v.end = s.pos
		return v, nil
	}
	for {
		s.space()
		e, err := s.value(keep)
		if err != nil {
			return nil, err
		}
		if keep {
			v.elems = append(v.elems, e)
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
			v.end = s.pos
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

// string scans a string and returns its text, or "" when keep is false.
func (s *scanner) string(keep bool) (string, error) {
	start := s.pos
	escaped := false
	s.pos++ // the opening quote
	// Most bytes of a string are none of these: skip them with one
	// table look-up each.
	for s.pos < len(s.doc) && !stringSpecial[s.doc[s.pos]] {
		s.pos++
	}
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
				// (scanJSON) and control characters were refused. Most
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

func (s *scanner) number() (*jvalue, error) {
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
	return &jvalue{kind: '0', start: start, end: s.pos}, nil
}

// A splice replaces doc[start:end] with text.
type splice struct {
	start, end int
	text       string
}

func applySplices(doc []byte, ss []splice) []byte {
	// Later splices first, so offsets stay valid; the splices never overlap.
	for i := 1; i < len(ss); i++ {
		for j := i; j > 0 && ss[j].start > ss[j-1].start; j-- {
			ss[j], ss[j-1] = ss[j-1], ss[j]
		}
	}
	out := append([]byte(nil), doc...)
	for _, sp := range ss {
		out = append(out[:sp.start], append([]byte(sp.text), out[sp.end:]...)...)
	}
	return out
}

// lineIndent is the whitespace that starts the line holding offset off, and
// whether only whitespace precedes off on that line.
func lineIndent(doc []byte, off int) (string, bool) {
	ls := bytes.LastIndexByte(doc[:off], '\n') + 1
	pre := doc[ls:off]
	trimmed := bytes.TrimLeft(pre, " \t")
	return string(pre[:len(pre)-len(trimmed)]), len(trimmed) == 0
}

// docUnit guesses the document's indentation unit from its first indented
// line; two spaces when it has none.
func docUnit(doc []byte) string {
	for _, line := range bytes.Split(doc, []byte("\n"))[1:] {
		t := bytes.TrimLeft(line, " \t")
		if len(t) > 0 && len(t) < len(line) {
			return string(line[:len(line)-len(t)])
		}
	}
	return "  "
}

// layout says how to write new children into a container: on their own
// lines (with the indent of a child and of the closing bracket) or inline.
type layout struct {
	multiline     bool
	child, close_ string
}

func containerLayout(doc []byte, c *jvalue) layout {
	closeIndent, _ := lineIndent(doc, c.start)
	var first int = -1
	if len(c.members) > 0 {
		first = c.members[0].keyStart
	} else if len(c.elems) > 0 {
		first = c.elems[0].start
	}
	if first < 0 {
		if !bytes.Contains(bytes.TrimRight(doc, " \t\r\n"), []byte("\n")) {
			return layout{} // a one-line document stays on one line
		}
		return layout{multiline: true, child: closeIndent + docUnit(doc), close_: closeIndent}
	}
	ind, own := lineIndent(doc, first)
	if !own {
		return layout{}
	}
	if ci, ownClose := lineIndent(doc, c.end-1); ownClose {
		closeIndent = ci
	}
	return layout{multiline: true, child: ind, close_: closeIndent}
}

// render marshals v for a place whose lines start with indent.
func render(v any, indent, unit string, multiline bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if multiline {
		enc.SetIndent(indent, unit)
	}
	enc.Encode(v)
	out := strings.TrimSuffix(b.String(), "\n")
	return out
}

// inline renders v on one line in the style of doc: with a space after
// ':' and ',' unless the document writes its JSON without them.
func inline(doc []byte, v any) string {
	out := render(v, "", "", false)
	if bytes.Contains(doc, []byte(`": `)) || !bytes.Contains(doc, []byte(`":`)) {
		out = spaced(out)
	}
	return out
}

// spaced puts a space after the ':' and ',' of compact JSON outside
// strings, the way people write one-line JSON.
func spaced(s string) string {
	var b strings.Builder
	in, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == ':' || c == ','):
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func unitOf(l layout, doc []byte) string {
	if l.multiline && strings.HasPrefix(l.child, l.close_) && len(l.child) > len(l.close_) {
		return l.child[len(l.close_):]
	}
	return docUnit(doc)
}

// insertMember adds "key": v at the end of object obj.
func insertMember(doc []byte, obj *jvalue, key string, v any) splice {
	l := containerLayout(doc, obj)
	unit := unitOf(l, doc)
	sep := ": "
	val := render(v, l.child, unit, true)
	if !l.multiline {
		val = inline(doc, v)
		if !bytes.Contains(doc, []byte(`": `)) && bytes.Contains(doc, []byte(`":`)) {
			sep = ":"
		}
	}
	kv := render(key, "", "", false) + sep + val
	return insertChild(doc, obj, len(obj.members) == 0, kv, l)
}

// appendElem adds v at the end of array arr.
func appendElem(doc []byte, arr *jvalue, v any) splice {
	l := containerLayout(doc, arr)
	unit := unitOf(l, doc)
	val := render(v, l.child, unit, true)
	if !l.multiline {
		val = inline(doc, v)
	}
	return insertChild(doc, arr, len(arr.elems) == 0, val, l)
}

func insertChild(doc []byte, c *jvalue, empty bool, text string, l layout) splice {
	if empty {
		// An empty container may still hold comments: they stay, and the
		// child goes after them.
		from := c.start + 1 + len(bytes.TrimRight(doc[c.start+1:c.end-1], " \t\r\n"))
		if l.multiline || bytes.Contains(doc[c.start+1:from], []byte("//")) {
			return splice{from, c.end - 1, "\n" + l.child + text + "\n" + l.close_}
		}
		if from > c.start+1 {
			text = " " + text
		}
		return splice{from, c.end - 1, text}
	}
	var lastEnd int
	if c.kind == '{' {
		lastEnd = c.members[len(c.members)-1].val.end
	} else {
		lastEnd = c.elems[len(c.elems)-1].end
	}
	if l.multiline {
		return splice{lastEnd, lastEnd, ",\n" + l.child + text}
	}
	if !bytes.Contains(doc, []byte(", ")) && !bytes.Contains(doc, []byte(`": `)) {
		return splice{lastEnd, lastEnd, "," + text}
	}
	return splice{lastEnd, lastEnd, ", " + text}
}

// removeChild removes child i of container c (an element, or a member from
// its key), with the separator that went with it. Removing the last child
// leaves interior between the brackets: what was there before a child was
// added, when known.
func removeChild(c *jvalue, i int, interior string) splice {
	n := len(c.elems)
	start := func(k int) int { return c.elems[k].start }
	end := func(k int) int { return c.elems[k].end }
	if c.kind == '{' {
		n = len(c.members)
		start = func(k int) int { return c.members[k].keyStart }
		end = func(k int) int { return c.members[k].val.end }
	}
	switch {
	case n == 1:
		return splice{c.start + 1, c.end - 1, interior}
	case i < n-1:
		return splice{start(i), start(i + 1), ""}
	default:
		return splice{end(i - 1), end(i), ""}
	}
}
