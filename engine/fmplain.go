package engine

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"dalo/internal/termtext"
)

// plainFrontMatter reads src, a front matter, when it is written in the
// plain YAML most front matter is: top-level keys, each at the start of
// its line, holding a one-line scalar (plain, quoted, or null, a boolean
// or a number: plainOpaque), a plain or quoted scalar that goes on on
// indented lines (starting on its key's line or the next), a block
// scalar (|, > and their - and + forms, in paragraphs, its lines
// indented at least as the first, its empty lines empty or of spaces), a
// mapping of such one-line scalars indented alike, or a list (a block
// sequence of such scalars, a flow sequence), flow mappings and
// sequences in each other (flowMap), on their key's line, over lines
// (flowOverLines) or below it (belowKey), or block mappings and
// sequences nested in each other (plainNode), with comment lines and
// lines of spaces between keys, comments after keys and values, and a
// document's end (...) after the last. It
// returns what fmMapping makes of CUE's syntax tree of the same
// YAML and each key's line (counted from line 1 of src), without CUE's
// YAML decoder, which cost more than the rest of a skill's checks.
// Anything else, or anything whose reading it is not sure of (a scalar
// YAML could read as a number, a boolean or null; a tab where
// tabbedValue does not take one; a control character, a line break other than LF or CR
// LF, or text that is not UTF-8; a key held twice; no key at all), makes
// ok false, and the caller decodes the YAML itself. FuzzPlainFrontMatter
// holds it to CUE's decoder.
//
// lines[i] is the line of fm.keys[i], not a map: the caller needs a key's
// line only for a violation, and most front matter has none. dec, when
// not nil, is where escaped values are decoded (doubleQuoted).
func plainFrontMatter(src string, dec *[]byte) (fm *fmStruct, lines []int, ok bool) {
	fm, lines, twice, ok := plainFrontMatterKeys(src, dec)
	if ok && twice.line > 0 {
		releasePlain(fm, lines)
		return nil, nil, false
	}
	return fm, lines, ok
}

// A keyTwice is a top-level key a front matter holds twice: the line of
// its second (line) and of its first, counted from line 1 of the YAML.
type keyTwice struct {
	key         string
	line, first int
}

// plainFrontMatterKeys is plainFrontMatter, but for a top-level key held
// twice, which it reports in twice (the first such) and reads on past,
// keeping the first: YAML holds a key once, and the rest must still be
// read plain for the front matter to be no worse than that
// (Rules.plainFindings).
func plainFrontMatterKeys(src string, dec *[]byte) (fm *fmStruct, lines []int, twice keyTwice, ok bool) {
	if len(src) == 0 || src[len(src)-1] != '\n' {
		return nil, nil, twice, false
	}
	n, crlf, tabs, ok := plainText(src)
	if !ok {
		return nil, nil, twice, false
	}
	// Its lines are walked in place: the values are cut from it, where
	// splitting it cost a string header a line. YAML reads a CR LF as
	// one line break, so the text of a file written with them is read
	// with LF alone (no other CR is left: plainLine declines one).
	text := src
	if crlf {
		text = strings.ReplaceAll(src, "\r\n", "\n")
	}
	fm = newFMStruct(n)
	lines, fm.lines = slices.Grow(fm.lines[:0], n), nil // back at releasePlain
	line := 1
	for i := 0; i < len(text); {
		l, next := lineAt(text, i)
		if l == "" || l[0] == '#' || l[0] == ' ' && spaces(l) {
			// An empty line (or one of spaces alone), or a comment: a
			// # at the start of a line is one wherever a key could
			// start.
			line++
			i = next
			continue
		}
		if l == "..." && commentsOnly(text[next:]) {
			// The document's end, as js-yaml, Psych and ruamel write
			// it after a kept block scalar: nothing is read past it.
			break
		}
		key, rest, ok := plainKey(l)
		if !ok {
			return nil, nil, twice, false
		}
		var body string
		var nbody int
		if rest == "" {
			// A block under its key may hold empty lines and comments
			// between its own (plainNode reads past them), and a list
			// may stand at its key's indentation, as PyYAML's
			// yaml.dump writes one.
			if body, nbody = indentedBlock(text, next); nbody == 0 {
				body, nbody = indentless(text, next)
			}
		} else {
			body, nbody = indented(text, next)
			block := nbody > 0 && (rest[0] == '|' || rest[0] == '>')
			if block || rest[0] == '\'' || rest[0] == '"' {
				// A block or quoted scalar's paragraphs: the empty
				// lines between its lines are its own.
				body, nbody = blockBody(text, next)
			}
		}
		tabbed := tabs && strings.IndexByte(l, '\t') >= 0
		if tabbed && !tabbedValue(rest, nbody) {
			return nil, nil, twice, false
		}
		if nbody == 0 || rest != "" && (rest[0] == '|' || rest[0] == '>') {
			rest = withoutComment(rest) // description: >-  # folded
		}
		if tabbed {
			// YAML trims the blanks after a plain scalar, tabs too, and
			// before a comment.
			rest = strings.TrimRight(rest, " \t")
		}
		v, ok := topValue(rest, body, nbody, text[next+len(body):], dec)
		if !ok {
			return nil, nil, twice, false
		}
		if k := fm.field(key); k >= 0 {
			if twice.line == 0 {
				twice = keyTwice{key, line, lines[k]}
			}
			if v.m != nil {
				v.m.release() // read to know the rest is plain, not kept
			}
		} else {
			fm.add(key, v)
			lines = append(lines, line)
		}
		line += 1 + nbody
		i = next + len(body)
	}
	if len(fm.fields) == 0 {
		return nil, nil, twice, false // comments alone
	}
	return fm, lines, twice, true
}

// plainText reports whether every line of src is one plainLine takes,
// or one that starts a key and holds tabs where tabbedValue may take
// them, and returns how many keys src holds at most and whether it holds
// CR LF line breaks and tabs.
func plainText(src string) (n int, crlf, tabs, ok bool) {
	if termtext.PrintableASCII(src, true) == len(src) && strings.IndexByte(src, '\t') < 0 {
		// Printable ASCII in lines, as nearly all front matter is: every
		// line is plain, and its lines bound its keys (room for them
		// all is kept in the pool). Looked at line by line, as the rest
		// must be, this was a tenth of reading an agent's front matter.
		return strings.Count(src, "\n"), false, false, true
	}
	for rest := src; len(rest) > 0; {
		i := strings.IndexByte(rest, '\n')
		l := rest[:i]
		if i > 0 && l[i-1] == '\r' {
			l, crlf = l[:i-1], true
		}
		tab := strings.IndexByte(l, '\t') >= 0
		if tab {
			// A tab is read only in a line that starts a key (see
			// tabbedValue), never in one indented under it.
			if i > 0 && rest[0] == ' ' || !plainLine(strings.ReplaceAll(l, "\t", " ")) {
				return 0, false, false, false
			}
			tabs = true
		} else if !plainLine(l) {
			return 0, false, false, false
		}
		if i == 0 || rest[0] != ' ' {
			n++
		}
		rest = rest[i+1:]
	}
	return n, crlf, tabs, true
}

// plainLine reports whether a line of front matter, without its line
// break, holds only characters plainFrontMatter reads as YAML's decoder
// does: printable ASCII, and printable characters outside ASCII that
// YAML allows and does not read as a line break or a byte order mark
// (NEL U+0085, LS U+2028, PS U+2029 and U+FEFF are declined), in valid
// UTF-8. Most front matter is ASCII, which it checks eight bytes a step.
func plainLine(l string) bool {
	i := termtext.PrintableASCII(l, false)
	for i < len(l) {
		if c := l[i]; c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(l[i:])
		switch {
		case r == utf8.RuneError && size == 1,
			r < 0xa0, // C1 controls and NEL
			r == 0x2028, r == 0x2029, r == 0xfeff,
			r >= 0xd800 && r < 0xe000, r == 0xfffe, r == 0xffff:
			return false
		}
		i += size
	}
	return true
}

// tabbedValue reports whether rest, the value after a key on a line that
// holds a tab, is a one-line plain scalar: YAML keeps a tab inside one
// and trims those after it, as Windows editors leave them (description:
// Step<TAB>one). A tab anywhere else (before the value, beside a # or a
// :, in a quoted, flow or block value, or a value that goes on over
// indented lines) is the decoder's to read.
func tabbedValue(rest string, nbody int) bool {
	if nbody > 0 || rest == "" || strings.Contains(rest, "\t#") || strings.Contains(rest, ":\t") {
		return false
	}
	switch rest[0] {
	case '\t', '"', '\'', '[', '{', '|', '>':
		return false
	}
	return true
}

// lineAt returns the line of text starting at i, without its newline,
// and where the next starts. Every line of text ends with a newline.
func lineAt(text string, i int) (line string, next int) {
	j := strings.IndexByte(text[i:], '\n')
	return text[i : i+j], i + j + 1
}

// indented returns the lines of text from i on that are indented (what
// the key before them holds) with their newlines, and how many they are:
// not lines of spaces alone after the last, which YAML reads as empty
// ones, as a template leaves them after a value.
func indented(text string, i int) (body string, n int) {
	j, end, lines := i, i, 0
	for j < len(text) && text[j] == ' ' {
		l, next := lineAt(text, j)
		j = next
		lines++
		if !spaces(l) {
			end, n = j, lines
		}
	}
	return text[i:end], n
}

// indentedBlock is indented, and also the empty lines and comment lines
// among the indented ones (not those after the last): a block mapping or
// sequence under a key, which YAML reads past them, as Claude Code's docs
// write mcpServers: with an empty line between servers.
func indentedBlock(text string, i int) (body string, n int) {
	body, n = indented(text, i)
	for {
		k, skipped := i+len(body), 0
		for k < len(text) {
			l, next := lineAt(text, k)
			if l != "" && l[0] != '#' && !spaces(l) {
				break
			}
			k = next
			skipped++
		}
		if skipped == 0 || k == len(text) || text[k] != ' ' {
			return body, n
		}
		more, m := indented(text, k)
		body, n = text[i:k+len(more)], n+skipped+m
	}
}

// withoutComment returns s, a value that ends on its line, without the
// comment after it, if any: a # after a blank, outside quotes (model:
// sonnet  # or opus). A value it cannot place a comment after (a flow
// sequence) it returns as it is, for the reader to decline.
func withoutComment(s string) string {
	if strings.IndexByte(s, '#') < 0 {
		return s // nearly every value, found with one byte search
	}
	i := strings.Index(s, " #")
	if i < 0 || s == "" {
		return s
	}
	n := i // where the value ends
	switch s[0] {
	case '[', '{':
		// A flow collection: its comment starts after its closing
		// bracket, the first there is (one in a quoted entry makes the
		// value declined, never misread).
		end := "]"
		if s[0] == '{' {
			end = "}"
		}
		i = strings.LastIndex(s, " #")
		v := strings.TrimRight(s[:i], " ")
		if strings.Index(v, end) != len(v)-1 {
			return s
		}
		return v
	case '\'':
		_, n, _ = singleQuoted(s, nil)
	case '"':
		_, n, _ = doubleQuoted(s, nil)
	}
	tail := strings.TrimLeft(s[n:], " ")
	if n == 0 || tail == "" || tail[0] != '#' || len(tail) == len(s)-n {
		return s // no comment, or no blank before it
	}
	return strings.TrimRight(s[:n], " ")
}

// indentless returns the lines of text from i on that are items of a
// block sequence at the indentation of the key before them ("- Read"
// at the start of its line), and the lines indented under each (the
// rest of a mapping in it, as PyYAML's yaml.dump writes a list of them:
// "- agent: x" and "  label: y"), with their newlines, and how many
// they are.
func indentless(text string, i int) (body string, n int) {
	j := i
	for strings.HasPrefix(text[j:], "- ") || n > 0 && j < len(text) && text[j] == ' ' {
		j += strings.IndexByte(text[j:], '\n') + 1
		n++
	}
	return text[i:j], n
}

// quotedLines reads a single-quoted scalar that goes on, after first,
// on the indented lines body, which may hold empty ones (PyYAML's
// yaml.dump wraps a long string that needs quotes so): YAML folds it,
// each line trimmed of its blanks and joined to the one before with a
// space, or with a line break for each empty line between them, and
// then reads it as singleQuoted does. The quote must close at the end of
// the last line.
func quotedLines(first, body string) (string, bool) {
	var b strings.Builder
	b.Grow(len(first) + len(body))
	b.WriteString(strings.TrimRight(first, " "))
	empty := 0
	for i := 0; i < len(body); {
		l, next := lineAt(body, i)
		i = next
		if l == "" {
			empty++
			continue
		}
		if l = strings.Trim(l, " "); l == "" {
			return "", false // a line of spaces alone
		}
		if empty == 0 {
			b.WriteByte(' ')
		}
		for range empty {
			b.WriteByte('\n')
		}
		b.WriteString(l)
		empty = 0
	}
	t := b.String()
	v, n, ok := singleQuoted(t, nil)
	if !ok || n != len(t) {
		return "", false
	}
	return v, true
}

// doubleQuotedLines reads a double-quoted scalar that goes on, after
// first, on the indented lines body, as PyYAML's yaml.safe_dump wraps a
// long string with characters outside ASCII (description: "V\xE9rifie
// \u2014 use when\⏎  \ reviewing..."). A line that ends in an escaping
// backslash joins the next with nothing between them; another joins it
// folded, its trailing blanks dropped, with a space, or a line break for
// each empty line between. Each next line loses its leading blanks
// either way. The joined text is read as doubleQuoted reads a line, its
// quote closing at its end. A line that ends in blanks after a
// backslash, and empty lines after an escaped break, are declined.
func doubleQuotedLines(first, body string, dec *[]byte) (string, bool) {
	var b strings.Builder
	b.Grow(len(first) + len(body))
	line := first
	empty := 0
	for i := 0; ; {
		// line is the one before the next, not yet written.
		trimmed := strings.TrimRight(line, " ")
		slashes := len(trimmed) - len(strings.TrimRight(trimmed, "\\"))
		if slashes%2 == 1 && len(trimmed) < len(line) {
			return "", false // "\ " at its end: an escape or a blank?
		}
		if i == len(body) {
			b.WriteString(line)
			break
		}
		l, next := lineAt(body, i)
		i = next
		if l == "" {
			empty++
			continue
		}
		if l = strings.TrimLeft(l, " "); l == "" {
			return "", false // a line of spaces alone
		}
		switch {
		case slashes%2 == 1 && (empty > 0 || !escapesWhole(trimmed[:len(trimmed)-1])):
			// Joined, the next line's digits would finish an escape
			// the break cut ("\x4\⏎ 1"), which YAML refuses.
			return "", false
		case slashes%2 == 1:
			b.WriteString(trimmed[:len(trimmed)-1]) // the escaped break
		case empty == 0:
			b.WriteString(trimmed)
			b.WriteByte(' ')
		default:
			b.WriteString(trimmed)
			for range empty {
				b.WriteByte('\n')
			}
		}
		line, empty = l, 0
	}
	t := b.String()
	v, n, ok := doubleQuoted(t, dec)
	if !ok || n != len(t) {
		return "", false
	}
	return v, true
}

// escapesWhole reports whether every escape of s, a line of a
// double-quoted scalar, ends within it: a backslash and its character,
// and the digits \x, \u and \U take.
func escapesWhole(s string) bool {
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			i++
			continue
		}
		if i+1 == len(s) {
			return false
		}
		n := 2
		switch s[i+1] {
		case 'x':
			n += 2
		case 'u':
			n += 4
		case 'U':
			n += 8
		}
		if i+n > len(s) {
			return false
		}
		i += n
	}
	return true
}

// flowMapping reads s, the value after a key, as a flow mapping on its
// line (metadata: {author: team, version: "1.0"}), into what fmMapping
// makes of it (see flowMap).
func flowMapping(s string, dec *[]byte) (*fmStruct, bool) {
	s = strings.TrimRight(s, " ")
	if s == "" || s[0] != '{' {
		return nil, false
	}
	m, n, ok := flowMap(s, 0, dec, 0)
	if ok && n != len(s) {
		m.release()
		return nil, false
	}
	return m, ok
}

// maxFlowDepth bounds the flow collections flowMap and flowSeq read in
// each other; deeper ones are the decoder's.
const maxFlowDepth = 16

// flowMap reads the flow mapping at s[i], a '{', and returns it and
// where it ends: keys plain (a letter, then key bytes) or quoted (key
// bytes, as JSON writes them: {"author": "dev"}, where the colon may
// follow the quote with no blank), each once, and values quoted, plain
// ones that hold no flow indicator, null, booleans and numbers
// (plainOpaque: opaque), or flow collections (flowValue), as JSON
// pasted into a front matter holds an MCP server's settings. An empty
// value or a comma last is declined.
func flowMap(s string, i int, dec *[]byte, depth int) (*fmStruct, int, bool) {
	m := newFMStruct(4) // {} is an empty one (disallowedTools: {})
	decline := func() (*fmStruct, int, bool) {
		m.release()
		return nil, 0, false
	}
	i = skipBlanks(s, i+1)
	if i < len(s) && s[i] == '}' {
		return m, i + 1, true
	}
	for i < len(s) {
		var key string
		switch c := s[i]; {
		case c == '"' || c == '\'':
			end := strings.IndexByte(s[i+1:], c)
			if end <= 0 {
				return decline()
			}
			key = s[i+1 : i+1+end]
			if end > maxSimpleKey || c == '"' && strings.IndexByte(key, '\\') >= 0 {
				return decline() // past a simple key's 1024, or an escape
			}
			i = skipBlanks(s, i+end+2)
			if i == len(s) || s[i] != ':' {
				return decline()
			}
			i++
		default:
			n := 0
			for i+n < len(s) && (isKeyByte(s[i+n]) || n > 0 && (s[i+n] == '.' || s[i+n] == '/')) {
				n++ // a dot or a slash within, as in a block's keys
			}
			if n == 0 || n > maxSimpleKey || !isLetter(c) || yamlWord(s[i:i+n]) || !strings.HasPrefix(s[i+n:], ": ") {
				return decline()
			}
			key = s[i : i+n]
			i += n + 1
		}
		v, n, ok := flowValue(s, skipBlanks(s, i), "}", dec, depth)
		if !ok || !m.add(key, v) {
			if v.m != nil {
				v.m.release()
			}
			return decline()
		}
		i = skipBlanks(s, n)
		if i < len(s) && s[i] == '}' {
			return m, i + 1, true
		}
		if i == len(s) || s[i] != ',' {
			return decline()
		}
		if i = skipBlanks(s, i+1); i < len(s) && s[i] == '}' {
			return m, i + 1, true // a comma last, as Prettier leaves one
		}
	}
	return decline()
}

// flowValue reads the value at s[i] in a flow collection whose closing
// bracket is end: a quoted scalar, a flow mapping or sequence, or a
// plain scalar to the next comma or end, and returns it and where it
// ends.
func flowValue(s string, i int, end string, dec *[]byte, depth int) (fmVal, int, bool) {
	if i == len(s) {
		return fmVal{}, 0, false
	}
	switch s[i] {
	case '"':
		v, n, ok := doubleQuoted(s[i:], dec)
		return fmVal{kind: fmString, s: v}, i + n, ok
	case '\'':
		v, n, ok := singleQuoted(s[i:], dec)
		return fmVal{kind: fmString, s: v}, i + n, ok
	case '{':
		if depth == maxFlowDepth {
			return fmVal{}, 0, false
		}
		m, n, ok := flowMap(s, i, dec, depth+1)
		return fmVal{kind: fmMap, m: m}, n, ok
	case '[':
		if depth == maxFlowDepth {
			return fmVal{}, 0, false
		}
		n, ok := flowSeq(s, i, dec, depth+1)
		return fmVal{kind: fmOpaque}, n, ok
	}
	n := strings.IndexAny(s[i:], ","+end)
	if n < 0 {
		return fmVal{}, 0, false // no closing bracket
	}
	w := strings.TrimRight(s[i:i+n], " ")
	switch {
	case w != "" && plainOpaque(w):
		return fmVal{kind: fmOpaque}, i + n, true
	case flowPlain(w):
		v, ok := oneLineScalar(w, dec)
		return fmVal{kind: fmString, s: v}, i + n, ok
	}
	return fmVal{}, 0, false
}

// flowSeq reads the flow sequence at s[i], a '[', as flowMap reads a
// mapping, and returns where it ends: the rules read no list's items
// (fmOpaque), so it says only whether the list is one.
func flowSeq(s string, i int, dec *[]byte, depth int) (int, bool) {
	i = skipBlanks(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1, true // [] (disallowedTools: [])
	}
	for i < len(s) {
		v, n, ok := flowValue(s, i, "]", dec, depth)
		if v.m != nil {
			v.m.release()
		}
		if !ok {
			return 0, false
		}
		i = skipBlanks(s, n)
		if i < len(s) && s[i] == ']' {
			return i + 1, true
		}
		if i == len(s) || s[i] != ',' {
			return 0, false
		}
		if i = skipBlanks(s, i+1); i < len(s) && s[i] == ']' {
			return i + 1, true // a comma last, as Prettier leaves one
		}
	}
	return 0, false
}

// skipBlanks returns the index of the first byte of s from i on that is
// not a blank.
func skipBlanks(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// blockBody is what indented returns, and for a block scalar or a
// quoted one also the empty lines between its indented ones (paragraphs),
// not those after the last: they end it, and its value is the same with
// them or without (a clipped or stripped block scalar keeps no line break
// at its end but one; a quoted one closes before them).
func blockBody(text string, i int) (body string, n int) {
	body, n = indented(text, i)
	for {
		k := i + len(body)
		empty := 0
		for k < len(text) {
			l, next := lineAt(text, k)
			if !spaces(l) {
				break
			}
			k = next
			empty++
		}
		if empty == 0 || k == len(text) || text[k] != ' ' {
			return body, n
		}
		more, m := indented(text, k)
		body, n = text[i:k+len(more)], n+empty+m
	}
}

// maxSimpleKey bounds the keys the reader takes: YAML reads a key as one
// only within 1024 characters of its start (go.yaml.in/yaml/v3: a simple
// key goes stale past them), and a key's quotes and colon are some of
// them.
const maxSimpleKey = 1000

// plainKey splits a line "key: rest" or "key:" whose key is a word YAML
// reads as a string, and returns rest without its leading blanks.
func plainKey(line string) (key, rest string, ok bool) {
	if line != "" && (line[0] == '"' || line[0] == '\'') {
		return quotedKey(line)
	}
	n := 0
	for n < len(line) && (isKeyByte(line[n]) || n > 0 && (line[n] == '.' || line[n] == '/')) {
		n++ // a dot or a slash within (metadata: acme.com/owner: x)
	}
	if n == 0 || n > maxSimpleKey || !isLetter(line[0]) || n == len(line) || line[n] != ':' || yamlWord(line[:n]) {
		return "", "", false
	}
	rest = line[n+1:]
	if rest != "" && rest[0] != ' ' {
		return "", "", false
	}
	return line[:n], afterKey(rest), true
}

// afterKey is what follows a key's colon, rest, without its leading
// blanks, or nothing when that is a comment (metadata:  # owned by ...):
// its value is then on the lines below, or null.
func afterKey(rest string) string {
	if rest = strings.TrimLeft(rest, " "); rest != "" && rest[0] == '#' {
		return ""
	}
	return rest
}

// quotedKey is plainKey of a line whose key is quoted ("name": x), as
// some YAML writers quote every key, and authors a key no plain one can
// be ("acme.com/owner", "display name"): a key of any characters but an
// escape (a backslash in double quotes) or its quote, which YAML reads
// as written.
func quotedKey(line string) (key, rest string, ok bool) {
	q := line[0]
	end := strings.IndexByte(line[1:], q) + 1
	if end <= 1 {
		return "", "", false
	}
	key = line[1:end]
	if end > maxSimpleKey {
		return "", "", false // past where YAML reads a simple key
	}
	if q == '"' && strings.IndexByte(key, '\\') >= 0 {
		return "", "", false
	}
	rest = line[end+1:]
	if rest == "" || rest[0] != ':' || len(rest) > 1 && rest[1] != ' ' {
		return "", "", false
	}
	return key, afterKey(rest[1:]), true
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

func isKeyByte(b byte) bool {
	return isLetter(b) || b >= '0' && b <= '9' || b == '_' || b == '-'
}

// yamlWord reports whether a plain scalar made of letters alone is one
// YAML reads as a boolean or null, in any case: true, false or null. The
// words YAML 1.1 also read so (yes, no, on, off, y, n) CUE's decoder
// reads as strings, as YAML 1.2 does (proactive: yes). It errs toward
// yes, which only sends the front matter the slower way: EqualFold also
// folds a few letters outside ASCII to these words, and any case is
// taken where YAML takes three.
func yamlWord(s string) bool {
	if len(s) < len("null") || len(s) > len("false") {
		return false // most values and keys: no word to fold them to
	}
	switch s[0] | 0x20 { // lower case, for a letter
	case 'n', 't', 'f':
	default:
		return false // no word starts so: most short keys (key-0) and values
	}
	for _, w := range [...]string{"true", "false", "null"} {
		if strings.EqualFold(s, w) {
			return true
		}
	}
	return false
}

// oneLineScalar reads the value after a key when nothing indented
// follows it: a plain scalar that is surely a string, a single-quoted one
// (singleQuoted), or a double-quoted one (doubleQuoted).
func oneLineScalar(s string, dec *[]byte) (string, bool) {
	if s == "" {
		return "", false // null
	}
	switch s[0] {
	case '"':
		v, n, ok := doubleQuoted(s, dec)
		if !ok || strings.TrimRight(s[n:], " ") != "" {
			return "", false
		}
		return v, true
	case '\'':
		v, n, ok := singleQuoted(s, dec)
		if !ok || strings.TrimRight(s[n:], " ") != "" {
			return "", false
		}
		return v, true
	}
	s = strings.TrimRight(s, " ")
	// A plain scalar that starts as plainStart says and holds no ": ",
	// " #" or final ':' is a string, unless it is one of YAML's words.
	if !plainStart(s) || indicated(s) || strings.HasSuffix(s, ":") || yamlWord(s) {
		return "", false
	}
	return s, true
}

// indicated reports whether s holds ": " or " #", where a plain scalar
// would end: a value rarely holds either, and two searches for them were
// a tenth of reading an agent's front matter. Each of ':' and '#' is
// found with a byte search, where a 20 KB description costs a loop
// over every byte as much as the rest of its file's checks.
func indicated(s string) bool {
	for i := 0; ; {
		j := strings.IndexByte(s[i:], ':')
		if j < 0 {
			break
		}
		if i += j + 1; i < len(s) && s[i] == ' ' {
			return true
		}
	}
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '#')
		if j < 0 {
			return false
		}
		if i += j; i > 0 && s[i-1] == ' ' {
			return true
		}
		i++
	}
}

// doubleQuoted reads s, which starts with a double quote, as YAML reads
// a double-quoted scalar that closes on its line, and returns its value
// and n, the length of s up to and with the closing quote. Its escapes
// are decoded as go.yaml.in/yaml/v3 decodes them (Claude Code's subagents
// commonly write a description of examples so: "Use when...\n\n<example>
// user: \"...\"</example>"); one YAML 1.1 does not have (\/, \q), or a
// \x, \u or \U that names no character, makes ok false, as does a
// scalar no quote closes on the line: YAML would fold it.
//
// A value with escapes is decoded onto *dec, and is a view of it, when
// dec is not nil: the caller keeps nothing of the value past its next use
// of *dec (plainFindings). Decoding each into a string of its own
// was a quarter of what validating packages of twelve such subagents
// allocated, and with no collection under way, memory the kernel faults
// in. The text between escapes is found with IndexByte, where a loop a
// byte at a time was 4% of that validation's CPU; each of the two bytes
// it stops at is searched for again only once the one found is behind.
func doubleQuoted(s string, dec *[]byte) (v string, n int, ok bool) {
	quote := strings.IndexByte(s[1:], '"') + 1 // 0: none
	esc := strings.IndexByte(s[1:], '\\') + 1
	switch {
	case quote == 0:
		return "", 0, false
	case esc == 0 || quote < esc:
		return s[1:quote], quote + 1, true // no escape: most are so
	}
	var b []byte
	if dec != nil {
		b = *dec
	} else {
		b = make([]byte, 0, len(s))
	}
	from := len(b)
	for i, run := esc, 1; ; {
		// i is at a backslash or at the closing quote.
		b = append(b, s[run:i]...)
		if s[i] == '"' {
			if dec == nil {
				return unsafe.String(unsafe.SliceData(b), len(b)), i + 1, true
			}
			*dec = b
			return unsafe.String(unsafe.SliceData(b[from:]), len(b)-from), i + 1, true
		}
		if i+1 == len(s) {
			return "", 0, false // a line break escaped
		}
		e := s[i+1]
		i += 2
		if r, ok := yamlEscape(e); ok {
			b = utf8.AppendRune(b, r)
		} else {
			digits := 0
			switch e {
			case 'x':
				digits = 2
			case 'u':
				digits = 4
			case 'U':
				digits = 8
			}
			if digits == 0 || i+digits > len(s) {
				return "", 0, false
			}
			// ParseUint in base 16 takes hex digits alone: no sign,
			// prefix or underscore.
			r, err := strconv.ParseUint(s[i:i+digits], 16, 32)
			if err != nil || r >= 0xd800 && r <= 0xdfff || r > 0x10ffff {
				return "", 0, false
			}
			b = utf8.AppendRune(b, rune(r))
			i += digits
		}
		run = i
		if quote < i {
			if quote = strings.IndexByte(s[i:], '"'); quote < 0 {
				return "", 0, false
			}
			quote += i
		}
		if esc >= 0 && esc < i {
			if esc = strings.IndexByte(s[i:], '\\'); esc >= 0 {
				esc += i
			}
		}
		i = quote
		if esc >= 0 && esc < quote {
			i = esc
		}
	}
}

// singleQuoted reads s, which starts with a single quote, as YAML reads
// a single-quoted scalar that closes on its line, and returns its value
// and n, the length of s up to and with the closing quote: a quote
// doubled is one quote (PyYAML's yaml.dump writes 'It”s' so). The value
// of one with a doubled quote is decoded onto *dec when dec is not nil,
// as doubleQuoted's are.
func singleQuoted(s string, dec *[]byte) (v string, n int, ok bool) {
	end := strings.IndexByte(s[1:], '\'') + 1
	switch {
	case end == 0:
		return "", 0, false
	case end+1 == len(s) || s[end+1] != '\'':
		return s[1:end], end + 1, true // no quote doubled: most are so
	}
	var b []byte
	if dec != nil {
		b = *dec
	} else {
		b = make([]byte, 0, len(s))
	}
	from := len(b)
	for run := 1; ; {
		// end is at a quote, doubled or closing.
		if end+1 < len(s) && s[end+1] == '\'' {
			b = append(b, s[run:end+1]...)
			run = end + 2
		} else {
			b = append(b, s[run:end]...)
			if dec == nil {
				return unsafe.String(unsafe.SliceData(b), len(b)), end + 1, true
			}
			*dec = b
			return unsafe.String(unsafe.SliceData(b[from:]), len(b)-from), end + 1, true
		}
		next := strings.IndexByte(s[run:], '\'')
		if next < 0 {
			return "", 0, false
		}
		end = run + next
	}
}

// yamlEscape returns what the one-character escape \e of a double-quoted
// scalar stands for in YAML 1.1, as go.yaml.in/yaml/v3 reads it (a tab
// after the backslash is one too, but plainLine declines tabs).
func yamlEscape(e byte) (rune, bool) {
	switch e {
	case '0':
		return 0, true
	case 'a':
		return '\a', true
	case 'b':
		return '\b', true
	case 't':
		return '\t', true
	case 'n':
		return '\n', true
	case 'v':
		return '\v', true
	case 'f':
		return '\f', true
	case 'r':
		return '\r', true
	case 'e':
		return 0x1b, true
	case ' ', '"', '\'', '\\':
		return rune(e), true
	case 'N':
		return 0x85, true
	case '_':
		return 0xa0, true
	case 'L':
		return 0x2028, true
	case 'P':
		return 0x2029, true
	}
	return 0, false
}

// plainOpaque reports whether s, the value after a key when nothing
// indented follows it, is one YAML surely reads as null, a boolean or a
// number, which fmMapping makes opaque: nothing, ~, null, true, false,
// a decimal integer or a decimal fraction, negative or not, with an
// exponent or not (disable-model-invocation: true, version: 1.0,
// max_turns: -1, temperature: 1e-05, as Go, PyYAML and SnakeYAML write
// 0.00001). Other spellings YAML 1.1 or 1.2 may read so (yes, 0x1f, .5)
// are left to the decoder.
func plainOpaque(s string) bool {
	s = strings.TrimRight(s, " ")
	switch s {
	case "", "~", "null", "true", "false", "Null", "True", "False", "NULL", "TRUE", "FALSE":
		return true // YAML 1.2's three spellings of each (disable-model-invocation: True)
	}
	mantissa, exp, e := strings.Cut(strings.TrimPrefix(s, "-"), "e")
	if !e {
		mantissa, exp, e = strings.Cut(mantissa, "E")
	}
	if e {
		// A sign or none, and one or two digits: 1e400 is past a
		// float64, which YAML then reads as a string.
		exp = strings.TrimPrefix(strings.TrimPrefix(exp, "-"), "+")
		if exp == "" || len(exp) > 2 || !digits(exp) {
			return false
		}
	}
	whole, frac, dot := strings.Cut(mantissa, ".")
	return decimal(whole) && (!dot || frac != "" && digits(frac) || e && frac == "")
}

// decimal reports whether s is a decimal integer YAML reads as one: 0, or
// digits that do not start with 0 (which YAML 1.1 reads as octal), and
// few enough that it fits in an int64.
func decimal(s string) bool {
	if s == "0" {
		return true
	}
	return s != "" && len(s) <= 18 && s[0] != '0' && digits(s)
}

// digits reports whether s is ASCII digits alone, or empty: strings.Trim
// with a cutset made the cutset's table on every scalar, a twentieth of
// reading an agent's front matter.
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isDate reports whether s is a date as YAML writes one: 2025-01-02.
func isDate(s string) bool {
	if len(s) != len("2025-01-02") || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i != 4 && i != 7 && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return true
}

// plainStart reports whether a plain scalar that starts so is surely a
// string, not a number, a date, an alias or another indicator's: it
// starts with a letter, a character outside ASCII (YAML has no indicator
// there), one of < (but not the merge key <<), (, / and $, it is a path
// from the working or home directory (./x, ../x, ~/x: no float starts
// with a dot and a slash, and ~ is null only alone), or it is a version
// number of three parts or more (1.0.0), which no number or date of
// YAML's is, or it starts with a date, a digit and holds a blank, or a
// dash or two and a letter (see the cases). A hook's command:
// ./scripts/check.sh in an agent's hooks block sent the whole front
// matter to CUE's decoder, 46 times the floor's CPU on packages of six
// such agents; an MCP server's args: - -y 16 times.
func plainStart(s string) bool {
	switch c := s[0]; {
	case isLetter(c), c >= utf8.RuneSelf, c == '(', c == '/', c == '$':
		return true
	case c == '.' || c == '~':
		return strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || strings.HasPrefix(s, "~/")
	case c == '<':
		return !strings.HasPrefix(s, "<<")
	case c == '-':
		return option(s)
	case c >= '0' && c <= '9':
		if strings.IndexByte(s, ' ') > 0 {
			// No number holds a blank (3 ways to go, 50% off), and a
			// timestamp that does (2001-12-14 21:59:43.10 -5) CUE's
			// decoder reads as the string written.
			return true
		}
		if len(s) >= len("2025-01-02") && isDate(s[:len("2025-01-02")]) {
			// YAML's date or timestamp (created: 2025-01-15T10:00:00Z),
			// which CUE's decoder reads as the string written, or a
			// string that starts with one: no number does.
			return true
		}
		if strings.IndexFunc(s, notInNumbers) >= 0 {
			// A version with a pre-release (1.4.0-beta.2), a duration
			// (30s), a share (100%): a character no number of YAML's
			// holds, in any base or form.
			return true
		}
		parts := 0
		for p := range strings.SplitSeq(s, ".") {
			if p == "" || !digits(p) {
				return false
			}
			parts++
		}
		return parts >= 3
	}
	return false
}

// notInNumbers reports whether r is a character none of YAML's numbers
// holds: not a digit, a hex digit, a sign, a dot, an underscore or a
// base's letter (0x, 0o, 0b). A colon is none: YAML 1.1's base 60 CUE's
// decoder reads as the string written (schedule: 09:30).
func notInNumbers(r rune) bool {
	switch {
	case r >= '0' && r <= '9', r >= 'a' && r <= 'f', r >= 'A' && r <= 'F':
		return false
	}
	return !strings.ContainsRune("+-._xXoO", r)
}

// option reports whether s starts as an option does, as MCP servers'
// args list them (- -y, - --read-only, [-y, x]): a dash or two before a
// letter, which no number or indicator is.
func option(s string) bool {
	t := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "-")
	return len(t) < len(s) && t != "" && isLetter(t[0])
}

// plainLines reads a plain scalar that goes on, after first, on the
// indented lines body (description: Use when the user\n  asks for it.):
// YAML folds it, each line trimmed of its blanks and joined to the one
// before with a space. The first line must be one oneLineScalar reads;
// the others may start with any character but a comment's #, as YAML
// reads on in a plain scalar past its first character (PyYAML's
// safe_dump wraps a long value at a blank, so that a line may start with
// a quote, a backtick, "- " or "&&"), and none may hold a comment, a
// key's ": " or end in a colon.
func plainLines(first, body string) (string, bool) {
	if first == "" || first[0] == '"' || first[0] == '\'' {
		return "", false
	}
	if _, ok := oneLineScalar(first, nil); !ok {
		return "", false
	}
	return foldLines(first, body, func(l string) bool {
		return l != "" && l[0] != '#' && !indicated(l) && !strings.HasSuffix(l, ":")
	})
}

// foldLines joins first and the lines of body as YAML folds a scalar's
// lines where no line is empty: each trimmed of its blanks and joined to
// the one before with a space. Every line of body, trimmed, must be one
// take takes.
func foldLines(first, body string, take func(l string) bool) (string, bool) {
	var b strings.Builder
	b.Grow(len(first) + len(body))
	b.WriteString(strings.TrimRight(first, " "))
	for i := 0; i < len(body); {
		l, next := lineAt(body, i)
		i = next
		if l = strings.Trim(l, " "); !take(l) {
			return "", false
		}
		b.WriteByte(' ')
		b.WriteString(l)
	}
	return b.String(), true
}

// blockScalar reads a block scalar whose header (after the key) is head
// and whose lines are body, each indented by at least as many spaces as
// the first or empty: literal (|) or folded (>), its last line break
// kept or stripped (-). A line of spaces no more than the indentation is
// an empty one, as a template that indents every line of a text writes
// its paragraphs' breaks; one of more spaces (text of spaces alone), or
// a first line of spaces, is declined. A line indented more
// keeps its extra spaces, and YAML folds no line break next to it: a
// folded description wrapped at a space starts a line so. Folded, an
// empty line is a line break, and the break before it is dropped unless
// a line indented more is next to it (go.yaml.in/yaml/v3's folding).
func blockScalar(head, body string, n int) (string, bool) {
	var literal bool
	switch head {
	case "|", "|-", "|+":
		literal = true
	case ">", ">-", ">+":
	default:
		return "", false
	}
	indent := len(body) - len(strings.TrimLeft(body, " "))
	if first, _ := lineAt(body, 0); strings.TrimLeft(first, " ") == "" {
		return "", false
	}
	size := 1
	for i := 0; i < len(body); {
		l, next := lineAt(body, i)
		switch {
		case spaces(l):
			if len(l) > indent {
				return "", false
			}
		case len(l) <= indent || strings.TrimLeft(l[:indent], " ") != "":
			return "", false
		}
		size += max(len(l)-indent, 0) + 1
		i = next
	}
	if n == 1 && strings.HasSuffix(head, "-") {
		// One line, its break stripped: the line is the value.
		return body[indent : len(body)-1], true
	}
	var b strings.Builder
	b.Grow(size)
	spaced := false // the line of text before is indented more
	empty := 0      // empty lines since the line of text before
	for i := 0; i < len(body); {
		l, next := lineAt(body, i)
		i = next
		if spaces(l) {
			empty++
			continue
		}
		l = l[indent:]
		if b.Len() > 0 {
			breaks := 1 + empty
			if !literal && !spaced && l[0] != ' ' {
				breaks = empty // folded
				if empty == 0 {
					b.WriteByte(' ')
				}
			}
			for range breaks {
				b.WriteByte('\n')
			}
		}
		b.WriteString(l)
		spaced, empty = l[0] == ' ', 0
	}
	if !strings.HasSuffix(head, "-") {
		b.WriteByte('\n')
	}
	return b.String(), true
}

// spaces reports whether l, a line, is empty or of spaces alone.
func spaces(l string) bool { return strings.TrimLeft(l, " ") == "" }

// commentsOnly reports whether every line of text is empty, of spaces
// alone, or a comment after them: a tab, or a blank outside ASCII, is
// no blank to YAML there.
func commentsOnly(text string) bool {
	for l := range strings.SplitSeq(text, "\n") {
		if l = strings.TrimLeft(l, " "); l != "" && l[0] != '#' {
			return false
		}
	}
	return true
}

// emptyLines counts the lines empty or of spaces alone text starts with.
func emptyLines(text string) int {
	n := 0
	for i := 0; i < len(text); {
		l, next := lineAt(text, i)
		if !spaces(l) {
			break
		}
		i, n = next, n+1
	}
	return n
}

// spacesAfter reports whether the lines of spaces alone at the start of
// text, after the block scalar whose lines are body, hold more spaces
// than its indentation: YAML reads such a line as the scalar's, spaces
// of its text, where the reader took them for the empty lines after it.
func spacesAfter(text, body string) bool {
	indent := len(body) - len(strings.TrimLeft(body, " "))
	for i := 0; i < len(text); {
		l, next := lineAt(text, i)
		if !spaces(l) {
			break
		}
		if len(l) > indent {
			return true
		}
		i = next
	}
	return false
}

// plainSequence reports whether the indented lines of a key with nothing
// after it are a block sequence of one-line scalars, every "- " indented
// alike.
func plainSequence(body string) bool {
	indent := len(body) - len(strings.TrimLeft(body, " "))
	for i := 0; i < len(body); {
		l, next := lineAt(body, i)
		i = next
		if len(l) <= indent+2 || strings.TrimLeft(l[:indent], " ") != "" || l[indent:indent+2] != "- " {
			return false
		}
		if item := l[indent+2:]; !plainWord(item) {
			if _, ok := oneLineScalar(withoutComment(strings.TrimLeft(item, " ")), nil); !ok {
				return false
			}
		}
	}
	return true
}

// plainWord reports whether s is a word oneLineScalar reads as a string
// whatever comes before it: a letter, then key bytes and dots alone (no
// blank, comment, colon or quote), and none of YAML's words. A list of
// tools or skills is nearly all such words, each looked at once here
// where oneLineScalar's checks looked at it some six times.
func plainWord(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isKeyByte(c) && c != '.' {
			return false
		}
	}
	return !yamlWord(s)
}

// flowWords reports whether s, the value after a key, is a flow sequence
// on its line YAML surely reads as such (flowSeq): quoted scalars
// (["Read", 'Grep']), plain ones ([Read, Bash(git diff:*)]) that start
// with a letter or digit and hold none of the flow indicators ,[]{}, no
// quote, '#' or '?', and no ':' that ends them or comes before a space,
// and flow collections. The rules read no list's items (fmOpaque): it
// says only whether the list is one.
func flowWords(s string) bool {
	s = strings.TrimRight(s, " ")
	if s == "" || s[0] != '[' {
		return false
	}
	var dec []byte // what escaped items decode to, dropped
	n, ok := flowSeq(s, 0, &dec, 0)
	return ok && n == len(s)
}

// topValue reads the value of a top-level key: rest, what follows its
// colon on its line, and body, the nbody lines under it (indented, or a
// list at its indentation); after is the text past them.
func topValue(rest, body string, nbody int, after string, dec *[]byte) (v fmVal, ok bool) {
	v, ok = fmVal{kind: fmString}, true
	switch {
	case nbody > 0 && rest != "" && rest[0] == '\'':
		v.s, ok = quotedLines(rest, body)
	case nbody > 0 && rest != "" && rest[0] == '"':
		v.s, ok = doubleQuotedLines(rest, body, dec)
	case nbody == 0 && rest != "" && rest[0] == '{':
		v.kind = fmMap
		v.m, ok = flowMapping(rest, dec)
	case rest == "" && nbody > 0 && strings.HasPrefix(strings.TrimLeft(body, " "), "- "):
		// A list: the rules read no list's items (fmOpaque).
		if v.kind, ok = fmOpaque, plainSequence(body); !ok {
			v, ok = plainNode(body, after, dec)
		}
	case rest == "" && nbody > 0 && belowKeyStarts(strings.TrimLeft(body, " ")):
		// A flow collection or a quoted scalar that starts on the
		// line below its key, as Prettier breaks a long one.
		l, next := lineAt(body, 0)
		v, ok = belowKey(strings.TrimLeft(l, " "), body[next:], dec)
	case rest == "" && nbody > 0:
		v.kind = fmMap
		if v.m, ok = plainMapping(body, nbody, dec); !ok {
			if v, ok = plainNode(body, after, dec); !ok {
				// A plain scalar that starts on the line below its
				// key, as Prettier wraps a long description.
				l, next := lineAt(body, 0)
				v = fmVal{kind: fmString}
				v.s, ok = plainLines(strings.TrimLeft(l, " "), body[next:])
			}
		}
	case nbody > 0 && (rest[0] == '[' || rest[0] == '{'):
		v, ok = flowOverLines(rest, body, dec)
	case nbody > 0 && rest[0] != '|' && rest[0] != '>':
		v.s, ok = plainLines(rest, body)
	case nbody > 0:
		v.s, ok = blockScalar(rest, body, nbody)
		ok = ok && !spacesAfter(after, body)
		if strings.HasSuffix(rest, "+") {
			// Kept: the empty lines after its last are its
			// line breaks too (blockBody leaves them out).
			v.s += strings.Repeat("\n", emptyLines(after))
		}
	case rest != "" && rest[0] == '[':
		v.kind, ok = fmOpaque, flowWords(rest)
	case plainOpaque(rest):
		v.kind = fmOpaque
	default:
		v.s, ok = oneLineScalar(rest, dec)
	}
	return v, ok
}

// belowKeyStarts reports whether s, the text of the line below a key
// with nothing after its colon, starts a flow collection or a quoted
// scalar (belowKey), not a mapping whose first key is quoted.
func belowKeyStarts(s string) bool {
	switch s[0] {
	case '[', '{':
		return true
	case '"', '\'':
		l, _, _ := strings.Cut(s, "\n")
		_, _, key := quotedKey(l)
		return !key
	}
	return false
}

// belowKey reads a flow collection or a quoted scalar that starts with
// first, on the line below its key, and goes on on the lines body, as
// flowOverLines, quotedLines and doubleQuotedLines read one on its key's
// line; a line of body not indented (a comment at the start of a line)
// is declined.
func belowKey(first, body string, dec *[]byte) (fmVal, bool) {
	for i := 0; i < len(body); {
		l, next := lineAt(body, i)
		if l != "" && l[0] != ' ' {
			return fmVal{}, false
		}
		i = next
	}
	var s string
	var ok bool
	switch first[0] {
	case '[', '{':
		return flowOverLines(first, body, dec)
	case '"':
		s, ok = doubleQuotedLines(first, body, dec)
	default:
		s, ok = quotedLines(first, body)
	}
	return fmVal{kind: fmString, s: s}, ok
}

// flowOverLines reads a flow collection that starts with first and goes
// on on the indented lines body, as PyYAML's default flow style and
// SnakeYAML's write a list or a map of scalars wrapped at 80 columns
// (tools: [Read, Grep,\n    Glob]): YAML reads each line break in a flow
// collection, and the blanks around it, as one space, in a plain or a
// quoted scalar as between its items. A line empty or of spaces (a break
// a scalar would keep), a comment, or a line that ends in a backslash
// (an escaped break in double quotes) is declined.
func flowOverLines(first, body string, dec *[]byte) (fmVal, bool) {
	if strings.Contains(first, " #") {
		return fmVal{}, false
	}
	joined, ok := foldLines(first, body, func(l string) bool {
		return l != "" && l[0] != '#' && !strings.Contains(l, " #") && !strings.HasSuffix(l, "\\")
	})
	if !ok || strings.HasSuffix(first, "\\") || keyOverLines(first, body) {
		return fmVal{}, false
	}
	if joined[0] == '[' {
		return fmVal{kind: fmOpaque}, flowWords(joined)
	}
	m, ok := flowMapping(joined, dec)
	return fmVal{kind: fmMap, m: m}, ok
}

// keyOverLines reports whether the flow collection that starts with
// first and goes on on the lines body holds a quoted key over lines: a
// quoted scalar with a line break inside it, or between it and the colon
// after it. YAML holds a key on one line, and flowOverLines's joining
// would hide the break from flowMap.
func keyOverLines(first, body string) bool {
	if !strings.ContainsAny(first, `"'`) && !strings.ContainsAny(body, `"'`) {
		return false
	}
	s := first + "\n" + body
	start := true // at a token's start, where a quote opens a scalar
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case (c == '"' || c == '\'') && start:
			broke, j := false, i+1
			for ; j < len(s); j++ {
				if s[j] == '\n' {
					broke = true
				} else if c == '"' && s[j] == '\\' {
					j++ // an escape
				} else if s[j] == c {
					if c == '"' || j+1 == len(s) || s[j+1] != '\'' {
						break
					}
					j++ // '' is a quote inside
				}
			}
			if j >= len(s) {
				return true // no closing quote: declined
			}
			k := j + 1
			for ; k < len(s) && (s[k] == ' ' || s[k] == '\n'); k++ {
				broke = broke || s[k] == '\n'
			}
			if broke && k < len(s) && s[k] == ':' {
				return true
			}
			i, start = j, false
		case c == '{' || c == '[' || c == ',' || c == ':':
			start = true
		case c == ' ' || c == '\n':
		default:
			start = false
		}
	}
	return false
}

// flowPlain reports whether w is a plain scalar flowWords reads.
func flowPlain(w string) bool {
	if w == "" || !isLetter(w[0]) && (w[0] < '0' || w[0] > '9') && !option(w) && !plainStart(w) {
		return false
	}
	if len(w) > 1 && w[0] == '0' && w[1] >= '0' && w[1] <= '9' {
		// YAML 1.1's octal, which CUE's decoder refuses as a float
		// (00.0): left to it, to say so.
		return false
	}
	for j := 0; j < len(w); j++ {
		switch w[j] {
		case '[', ']', '{', '}', '#', '?':
			return false
		case '"', '\'':
			if j == 0 {
				return false
			}
		case ':':
			if j+1 == len(w) || w[j+1] == ' ' {
				return false
			}
		}
	}
	return true
}

// plainMapping reads the indented lines of a key with nothing after it as
// a mapping of one-line scalars, every key indented alike.
func plainMapping(body string, n int, dec *[]byte) (*fmStruct, bool) {
	indent := len(body) - len(strings.TrimLeft(body, " "))
	s := newFMStruct(n)
	// A body this declines, such as a hooks: block, goes on to
	// plainNode, which takes a mapping of its own: s goes back.
	decline := func() (*fmStruct, bool) {
		s.release()
		return nil, false
	}
	for i := 0; i < len(body); {
		l, next := lineAt(body, i)
		i = next
		if len(l) <= indent || strings.TrimLeft(l[:indent], " ") != "" {
			return decline()
		}
		key, rest, ok := plainKey(l[indent:])
		if !ok {
			return decline()
		}
		rest = withoutComment(rest)
		v := fmVal{kind: fmOpaque}
		if !plainOpaque(rest) {
			v.kind = fmString
			if v.s, ok = oneLineScalar(rest, dec); !ok {
				return decline()
			}
		}
		if !s.add(key, v) {
			return decline() // a key held twice
		}
	}
	return s, true
}

// The mappings and line tables plainFrontMatter reads front matter into
// are released once its check is done (releasePlain) and reused for the
// next: a front matter is checked and dropped, and dalo collects no
// garbage while it validates (cmd/dalo limitMemory), so memory not reused
// is memory the kernel faults in; they were a sixth of what checking a
// package of bench/sourcegen's skills shape allocated. A mapping keeps
// its line table (fmStruct.lines): pooled on its own, each put made a
// slice header on the heap.
var fmStructs sync.Pool

// maxPooledFMKeys bounds the keys of an index a released mapping keeps.
const maxPooledFMKeys = 1024

// newFMStruct returns an empty mapping with room for n fields.
func newFMStruct(n int) *fmStruct {
	if s, ok := fmStructs.Get().(*fmStruct); ok {
		// One too small grows: dropped, it took its index and line
		// table with it.
		s.fields = slices.Grow(s.fields, n)
		return s
	}
	return &fmStruct{fields: make([]fmEntry, 0, n)}
}

// releasePlain gives what plainFrontMatter returned to the next front
// matter read: fm, the mappings it holds, and lines. Neither may be used
// after; the strings they held may, unless they were decoded onto a
// buffer (doubleQuoted).
func releasePlain(fm *fmStruct, lines []int) {
	fm.lines = lines[:0]
	fm.release()
}

// release gives s and the mappings it holds to newFMStruct.
func (s *fmStruct) release() {
	for _, f := range s.fields {
		if f.val.m != nil {
			f.val.m.release()
		}
	}
	clear(s.fields) // holds no string alive in the pool
	index := s.index
	if len(index) > maxPooledFMKeys {
		index = nil // clearing it would cost each mapping after it its size
	}
	clear(index)
	*s = fmStruct{fields: s.fields[:0], index: index, lines: s.lines[:0]}
	fmStructs.Put(s)
}

// plainNode reads body, the lines indented under a key that holds
// neither a flat mapping nor a list of one-line scalars (plainMapping,
// plainSequence), as block mappings and sequences nested in each other
// (what Claude Code's hooks: and mcpServers: hold): a mapping's keys
// each at the start of its line at one indentation, holding a one-line
// value or, on the lines indented more (or a sequence at the key's own
// indentation), a node; a sequence's items each "- " at one indentation,
// holding a one-line value, a mapping whose first key follows the "- "
// and whose others are at that key's column, or, on the lines indented
// more, a node; a value may also be a block scalar (blockScalar) or a
// plain or quoted scalar that goes on over the lines indented more
// (plainLines, quotedLines). Empty lines and comment lines between these
// are passed over, as YAML does. A mapping is read into what fmMapping
// makes of CUE's tree, a sequence opaque (the rules read no list's
// items). Anything else ("- - ", an indentation that matches no node, an
// empty line inside a scalar over lines) is declined, and the
// front matter goes to CUE's decoder. A front matter with such a key was
// some 50 us a file there, against a few here (TestPlainFrontMatter's
// read list; FuzzPlainFrontMatter holds each reading to the decoder's).
func plainNode(body, after string, dec *[]byte) (fmVal, bool) {
	table := blockLines.Get().(*[]blockLine)
	p := blockParser{dec: dec, after: after, lines: slices.Grow((*table)[:0], strings.Count(body, "\n"))}
	defer func() {
		clear(p.lines) // holds none of the text alive in the pool
		*table = p.lines[:0]
		blockLines.Put(table)
	}()
	p.body = body
	for i := 0; i < len(body); {
		l, next := lineAt(body, i)
		s := strings.TrimLeft(l, " ")
		if s != "" && s[0] != '#' {
			// An empty line or a comment between a block's lines is
			// none of them (one in a block scalar is read from body).
			p.lines = append(p.lines, blockLine{len(l) - len(s), s, i})
		}
		i = next
	}
	v, ok := p.node()
	return v, ok && p.i == len(p.lines)
}

// blockScalar reads a block scalar whose header head follows a key at
// column indent (or an item's "- "), on the line before the next: its
// lines are those after it indented more than the key, and the empty
// lines between them, as blockScalar reads a top-level one's (command: |
// in a hooks: block). One that starts with an empty line is declined.
func (p *blockParser) blockScalar(indent int, head string) (fmVal, bool) {
	if strings.HasSuffix(head, "+") {
		return fmVal{}, false // its empty lines after may be the block's
	}
	key := p.lines[p.i-1]
	start := key.at + key.indent + len(key.s) + 1
	end, n, lines := start, 0, 0
	for j := start; j < len(p.body); {
		l, next := lineAt(p.body, j)
		if spaces(l) {
			if j == start {
				return fmVal{}, false
			}
			lines++
			j = next
			continue
		}
		if len(l)-len(strings.TrimLeft(l, " ")) <= indent {
			break
		}
		lines++
		end, n, j = next, lines, next
	}
	if n == 0 {
		return fmVal{}, false // empty
	}
	s, ok := blockScalar(head, p.body[start:end], n)
	// The lines of spaces after it may go on past the block, which
	// indentedBlock ends before them.
	rest := p.body[end:]
	ok = ok && !spacesAfter(rest, p.body[start:end]) && !(emptyLines(rest) == strings.Count(rest, "\n") && spacesAfter(p.after, p.body[start:end]))
	for p.i < len(p.lines) && p.lines[p.i].at < end {
		p.i++
	}
	return fmVal{kind: fmString, s: s}, ok
}

// plainLines reads a plain scalar that starts with first, after a key at
// column indent (or an item's "- "), and goes on over the lines after it
// indented more (summary: a long text\n    that goes on), as Prettier
// wraps a long value: plainLines folds them, and declines any that is
// not a plain scalar's (a key, an item, a comment after a value). An
// empty line or a comment line among them, which the parser's table
// leaves out, is declined too.
func (p *blockParser) plainLines(indent int, first string) (fmVal, bool) {
	body, ok := p.linesUnder(indent)
	if !ok {
		return fmVal{}, false
	}
	s, ok := plainLines(first, body)
	return fmVal{kind: fmString, s: s}, ok
}

// quotedLines reads a quoted scalar that starts with first, after a key
// at column indent (or an item's "- "), and goes on over the lines after
// it indented more, as quotedLines and doubleQuotedLines read a
// top-level one (PyYAML wraps a long value that needs quotes so: a
// metadata entry that holds ": "). An empty line or a comment line among
// them is declined, as plainLines declines one.
func (p *blockParser) quotedLines(indent int, first string) (fmVal, bool) {
	body, ok := p.linesUnder(indent)
	if !ok {
		return fmVal{}, false
	}
	var s string
	if first[0] == '"' {
		s, ok = doubleQuotedLines(first, body, p.dec)
	} else {
		s, ok = quotedLines(first, body)
	}
	return fmVal{kind: fmString, s: s}, ok
}

// linesUnder returns the lines after the one just read that are indented
// more than indent, and reads past them; false if an empty or a comment
// line comes before one of them (the parser's table holds neither).
func (p *blockParser) linesUnder(indent int) (string, bool) {
	prev := p.lines[p.i-1]
	start := prev.at + prev.indent + len(prev.s) + 1
	end := start
	for p.i < len(p.lines) && p.lines[p.i].indent > indent {
		l := p.lines[p.i]
		if l.at != end {
			return "", false
		}
		end = l.at + l.indent + len(l.s) + 1
		p.i++
	}
	return p.body[start:end], true
}

// blockLines holds the line tables of plainNode's blocks for the next:
// an agent's hooks: and mcpServers: blocks each made one.
var blockLines = sync.Pool{New: func() any { return new([]blockLine) }}

// A blockLine is a line of a nested block: its indentation, the rest, and
// where the line starts in the block.
type blockLine struct {
	indent int
	s      string
	at     int
}

type blockParser struct {
	body  string      // the block's text
	after string      // the text after it
	lines []blockLine // its lines but empty ones and comments
	i     int         // the next line to read
	dec   *[]byte
}

// node reads the node whose first line is the next, to the first line
// indented less than it.
func (p *blockParser) node() (fmVal, bool) {
	if p.i == len(p.lines) {
		return fmVal{}, false
	}
	l := p.lines[p.i]
	if isItem(l.s) {
		return p.sequence(l.indent)
	}
	key, rest, ok := plainKey(l.s)
	if !ok {
		return fmVal{}, false
	}
	p.i++
	return p.mapping(l.indent, key, rest)
}

// isItem reports whether s, a line without its indentation, is an item
// of a block sequence.
func isItem(s string) bool { return s == "-" || strings.HasPrefix(s, "- ") }

// mapping reads a block mapping whose keys are at column indent, the
// first key (and what follows it on its line) already read.
func (p *blockParser) mapping(indent int, key, rest string) (fmVal, bool) {
	m := newFMStruct(0)
	for {
		v, ok := p.value(indent, rest, true)
		if !ok || !m.add(key, v) {
			return fmVal{}, false
		}
		if p.i == len(p.lines) || p.lines[p.i].indent != indent || isItem(p.lines[p.i].s) {
			break
		}
		if key, rest, ok = plainKey(p.lines[p.i].s); !ok {
			return fmVal{}, false
		}
		p.i++
	}
	if p.i < len(p.lines) && p.lines[p.i].indent > indent {
		return fmVal{}, false // indented more than a key, under none
	}
	return fmVal{kind: fmMap, m: m}, true
}

// sequence reads a block sequence whose items are at column indent.
func (p *blockParser) sequence(indent int) (fmVal, bool) {
	for p.i < len(p.lines) && p.lines[p.i].indent == indent && isItem(p.lines[p.i].s) {
		item := strings.TrimPrefix(p.lines[p.i].s, "-")
		c := strings.TrimLeft(item, " ")
		col := indent + 1 + len(item) - len(c) // the item's content's column
		p.i++
		if key, rest, ok := plainKey(c); ok && c != "" && !isItem(c) {
			// A mapping in the item: its first key after the "- ",
			// read to know it is one and given back, as the list is
			// opaque.
			v, ok := p.mapping(col, key, rest)
			if !ok {
				return fmVal{}, false
			}
			v.m.release()
			continue
		}
		if isItem(c) || c != "" && c[0] == '#' {
			return fmVal{}, false
		}
		if _, ok := p.value(indent, c, false); !ok {
			return fmVal{}, false
		}
	}
	if p.i < len(p.lines) && p.lines[p.i].indent > indent {
		return fmVal{}, false
	}
	return fmVal{kind: fmOpaque}, true
}

// value reads what follows a key at column indent (or an item's "- "),
// rest on its line: a one-line value, or, when rest is empty, the node on
// the lines indented more, a sequence at the key's own indentation (only
// a key's, inKey), or null.
func (p *blockParser) value(indent int, rest string, inKey bool) (fmVal, bool) {
	raw := rest
	rest = withoutComment(rest)
	if rest != "" && (rest[0] == '|' || rest[0] == '>') {
		return p.blockScalar(indent, rest)
	}
	more := p.i < len(p.lines) && p.lines[p.i].indent > indent
	if rest == "" {
		switch {
		case more && belowKeyStarts(p.lines[p.i].s):
			first := p.lines[p.i].s
			p.i++
			body, ok := p.linesUnder(indent)
			if !ok {
				return fmVal{}, false
			}
			return belowKey(first, body, p.dec)
		case more:
			return p.node()
		case inKey && p.i < len(p.lines) && p.lines[p.i].indent == indent && isItem(p.lines[p.i].s):
			return p.sequence(indent)
		}
		return fmVal{kind: fmOpaque}, true // null
	}
	if more {
		switch rest[0] {
		case '\'', '"':
			return p.quotedLines(indent, raw)
		case '[', '{':
			body, ok := p.linesUnder(indent)
			if !ok {
				return fmVal{}, false
			}
			return flowOverLines(raw, body, p.dec)
		}
		return p.plainLines(indent, raw) // or a node after a value: declined
	}
	if plainWord(rest) {
		return fmVal{kind: fmString, s: rest}, true // type: command
	}
	switch {
	case rest[0] == '{':
		m, ok := flowMapping(rest, p.dec)
		return fmVal{kind: fmMap, m: m}, ok
	case rest[0] == '[':
		return fmVal{kind: fmOpaque}, flowWords(rest)
	case rest[0] == '&' || rest[0] == '*' || rest[0] == '!':
		return fmVal{}, false
	case plainOpaque(rest):
		return fmVal{kind: fmOpaque}, true
	}
	s, ok := oneLineScalar(rest, p.dec)
	return fmVal{kind: fmString, s: s}, ok
}
