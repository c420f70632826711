// Package instruction edits the blocks of standing instructions dalo
// writes into files the user owns (CLAUDE.md, AGENTS.md, a project file):
// each enabled instruction is one block between two marker lines, and no
// byte outside its blocks is touched:
//
//	<!-- dalo:begin instruction:design-context source=company package=company:design-review sha256=HEX -->
//	...the instruction, in the file's line endings...
//	<!-- dalo:end instruction:design-context source=company -->
//
// sha256 is the digest of the body exactly as written (the bytes between
// the two marker lines), so a block the user edited is told apart from one
// dalo wrote and is never overwritten or removed silently.
//
// The file alone says which blocks are dalo's. The store records what was
// enabled where, and the two facts about a file its bytes cannot tell:
// whether dalo created it, and whether dalo ended the user's last line
// because it had no final newline (Edit.NewlineAdded). With both,
// disabling every block restores the file to its exact bytes before
// enable. Nothing here reads or writes a file: Enable and Disable take
// and return bytes.
package instruction

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

const (
	beginPrefix = "<!-- dalo:begin "
	endPrefix   = "<!-- dalo:end "
	markerClose = " -->"
	utf8BOM     = "\xef\xbb\xbf"
)

// markerAtom is what a source id or an instruction selector must be to
// appear in a marker: the reference grammar admits spaces and "-->", which
// would make a marker ambiguous.
var (
	markerAtom    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	markerPackage = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*:[A-Za-z0-9][A-Za-z0-9._-]*$`)
	markerDigest  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// An ID names an instruction asset: instructions/<Selector>.md of
// the source registered as Source. It is the identity of a block: a file
// holds at most one block per ID.
type ID struct {
	Source   string `json:"source"`
	Selector string `json:"instruction"`
}

// String names the instruction as messages show it:
// "instruction:design-context (source company)".
func (id ID) String() string {
	return "instruction:" + id.Selector + " (source " + id.Source + ")"
}

func (id ID) check() error {
	if !markerAtom.MatchString(id.Source) {
		return fmt.Errorf("source id %q cannot appear in a marker: it must match %s", id.Source, markerAtom)
	}
	if !markerAtom.MatchString(id.Selector) {
		return fmt.Errorf("instruction selector %q cannot appear in a marker: it must match %s", id.Selector, markerAtom)
	}
	return nil
}

// An Asset is what enable writes: the instruction's identity, the
// package it was enabled through (SOURCE:NAME) and its Markdown.
type Asset struct {
	ID      ID
	Package string
	Content []byte
}

// A Block is one dalo block found in a file.
type Block struct {
	ID      ID
	Package string
	Digest  string // from the begin marker
	Line    int    // of the begin marker, 1-based
	Start   int    // byte offset of the begin marker line
	End     int    // byte offset just past the end marker line and its line ending
	Body    []byte // between the marker lines, as found
}

// Edited reports whether the body differs from what dalo wrote.
func (b *Block) Edited() bool { return bodyDigest(b.Body) != b.Digest }

// A MarkerError is a dalo marker line that does not parse or does not pair.
type MarkerError struct {
	File string
	Line int
	Msg  string
}

// Error names the file and line of the marker, and says that nothing is
// written until a person fixes it: dalo cannot tell whose text follows.
func (e *MarkerError) Error() string {
	return fmt.Sprintf("%s:%d: %s; dalo writes nothing until the marker is fixed or removed by hand (a marker quoted as an example, even in a code block, must be indented)", e.File, e.Line, e.Msg)
}

// A ConflictError is a block the user edited since dalo wrote it.
type ConflictError struct {
	File  string
	Block *Block
	Op    string // enable, disable
}

// Error names the edited block and the two ways out: merge the edit into
// the source, or --force.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s:%d: the block of %s was edited since dalo wrote it (its body no longer has sha256 %s); dalo will not %s it silently: merge the edit into the source, or use --force to let dalo take the block over", e.File, e.Block.Line, e.Block.ID, e.Block.Digest, conflictVerb(e.Op))
}

func conflictVerb(op string) string {
	if op == "disable" {
		return "remove"
	}
	return "overwrite"
}

// ErrNotEnabled is returned when a file has no block for an instruction.
var ErrNotEnabled = errors.New("not enabled")

// A textLine is one line of a file with its line ending, if any.
type textLine struct {
	off  int
	text []byte // without the line ending
	eol  []byte // "\n", "\r\n" or nothing at the end of the file
}

func splitTextLines(data []byte, off int) []textLine {
	var ls []textLine
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		var l textLine
		if i < 0 {
			l = textLine{off: off, text: data}
			data = nil
		} else {
			text, eol := data[:i], data[i:i+1]
			if len(text) > 0 && text[len(text)-1] == '\r' {
				text, eol = data[:i-1], data[i-1:i+1]
			}
			l = textLine{off: off, text: text, eol: eol}
			data = data[i+1:]
		}
		off += len(l.text) + len(l.eol)
		ls = append(ls, l)
	}
	return ls
}

// fileLineEnding is the style of the file: that of its first line; for a
// file without any, LF, or CRLF when its text ends with CR: a LF written
// after it would make its first line end with CRLF, and the file would
// then read as CRLF, unlike the block.
func fileLineEnding(content []byte) string {
	i := bytes.IndexByte(content, '\n')
	if i > 0 && content[i-1] == '\r' || i < 0 && bytes.HasSuffix(content, []byte("\r")) {
		return "\r\n"
	}
	return "\n"
}

// An EncodingError is a file, or an instruction's text, that is not
// UTF-8 text: one in UTF-16 (its byte order mark, or the NUL bytes of its
// ASCII), where a UTF-8 block would be text no harness reads as one
// encoding.
type EncodingError struct {
	File string
	Why  string
}

// Error names the file and why it is not UTF-8 text.
func (e *EncodingError) Error() string {
	return fmt.Sprintf("%s is not UTF-8 text: %s; dalo writes its blocks only into UTF-8 files, as UTF-8", e.File, e.Why)
}

// utf8Text is an *EncodingError when data, named name, is not UTF-8 text.
func utf8Text(name string, data []byte) error {
	switch {
	case bytes.HasPrefix(data, []byte("\xff\xfe")), bytes.HasPrefix(data, []byte("\xfe\xff")):
		return &EncodingError{name, "it starts with a UTF-16 byte order mark (save it as UTF-8 and run the command again)"}
	case bytes.IndexByte(data, 0) >= 0:
		return &EncodingError{name, "it holds a NUL byte (UTF-16 does, for every ASCII character)"}
	}
	return nil
}

// Parse finds every dalo block in data, the contents of the file
// named name. A line is a marker only when it starts the line with
// "<!-- dalo:begin " or "<!-- dalo:end "; any other line, including other
// tools' markers and dalo markers quoted inside a line, is user text. It
// does not parse Markdown: a fence opened in an instruction's own text, or
// left open in the user's, would otherwise hide dalo's markers from dalo,
// and harnesses read the file as text anyway.
func Parse(name string, data []byte) ([]*Block, error) {
	if err := utf8Text(name, data); err != nil {
		return nil, err
	}
	var (
		blocks    []*Block
		open      *Block
		bodyStart int
		seen      = map[ID]int{}
	)
	base := 0
	if bytes.HasPrefix(data, []byte(utf8BOM)) {
		base = len(utf8BOM)
	}
	for n, l := range splitTextLines(data[base:], base) {
		num := n + 1
		s := string(l.text)
		switch {
		case strings.HasPrefix(s, beginPrefix):
			id, pkg, sum, err := parseBegin(s)
			if err != nil {
				return nil, &MarkerError{name, num, err.Error()}
			}
			if open != nil {
				return nil, &MarkerError{name, num, fmt.Sprintf("begin marker inside the block of %s opened at line %d", open.ID, open.Line)}
			}
			if first, dup := seen[id]; dup {
				return nil, &MarkerError{name, num, fmt.Sprintf("a second block of %s (the first begins at line %d)", id, first)}
			}
			seen[id] = num
			open = &Block{ID: id, Package: pkg, Digest: sum, Line: num, Start: l.off}
			bodyStart = l.off + len(l.text) + len(l.eol)
		case strings.HasPrefix(s, endPrefix):
			id, err := parseEnd(s)
			if err != nil {
				return nil, &MarkerError{name, num, err.Error()}
			}
			if open == nil {
				return nil, &MarkerError{name, num, fmt.Sprintf("end marker of %s without a begin marker", id)}
			}
			if id != open.ID {
				return nil, &MarkerError{name, num, fmt.Sprintf("end marker of %s closes the block of %s opened at line %d", id, open.ID, open.Line)}
			}
			open.Body = data[bodyStart:l.off]
			open.End = l.off + len(l.text) + len(l.eol)
			blocks = append(blocks, open)
			open = nil
		}
	}
	if open != nil {
		return nil, &MarkerError{name, open.Line, fmt.Sprintf("the block of %s has no end marker", open.ID)}
	}
	return blocks, nil
}

func parseBegin(s string) (ID, string, string, error) {
	var id ID
	fields, err := markerFields(s, beginPrefix)
	if err != nil {
		return id, "", "", err
	}
	if len(fields) != 4 {
		return id, "", "", fmt.Errorf("malformed begin marker: want %sinstruction:SELECTOR source=ID package=SOURCE:NAME sha256=HEX%s", beginPrefix, markerClose)
	}
	id, err = markerID(fields[0], fields[1])
	if err != nil {
		return id, "", "", err
	}
	pkg, ok := strings.CutPrefix(fields[2], "package=")
	if !ok || !markerPackage.MatchString(pkg) {
		return id, "", "", fmt.Errorf("malformed begin marker: %q is not package=SOURCE:NAME", fields[2])
	}
	sum, ok := strings.CutPrefix(fields[3], "sha256=")
	if !ok || !markerDigest.MatchString(sum) {
		return id, "", "", fmt.Errorf("malformed begin marker: %q is not sha256= and 64 lowercase hex digits", fields[3])
	}
	return id, pkg, sum, nil
}

func parseEnd(s string) (ID, error) {
	fields, err := markerFields(s, endPrefix)
	if err != nil {
		return ID{}, err
	}
	if len(fields) != 2 {
		return ID{}, fmt.Errorf("malformed end marker: want %sinstruction:SELECTOR source=ID%s", endPrefix, markerClose)
	}
	return markerID(fields[0], fields[1])
}

func markerFields(s, prefix string) ([]string, error) {
	kind := strings.TrimSpace(strings.TrimPrefix(prefix, "<!-- dalo:"))
	mid, ok := strings.CutSuffix(strings.TrimPrefix(s, prefix), markerClose)
	if !ok {
		return nil, fmt.Errorf("malformed %s marker: it must end the line with %q", kind, strings.TrimSpace(markerClose))
	}
	return strings.Split(mid, " "), nil
}

func markerID(ref, src string) (ID, error) {
	sel, ok := strings.CutPrefix(ref, "instruction:")
	if !ok || !markerAtom.MatchString(sel) {
		return ID{}, fmt.Errorf("malformed marker: %q is not instruction:SELECTOR", ref)
	}
	id, ok := strings.CutPrefix(src, "source=")
	if !ok || !markerAtom.MatchString(id) {
		return ID{}, fmt.Errorf("malformed marker: %q is not source=ID", src)
	}
	return ID{Source: id, Selector: sel}, nil
}

func bodyDigest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// instructionBody is the instruction as written into a file with line ending eol:
// without a byte order mark, every line ending eol, the last one included.
func instructionBody(name string, content []byte, eol string) ([]byte, error) {
	content = bytes.TrimPrefix(content, []byte(utf8BOM))
	s := strings.ReplaceAll(string(content), "\r\n", "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	for n, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, beginPrefix) || strings.HasPrefix(l, endPrefix) {
			return nil, fmt.Errorf("%s:%d: an instruction cannot contain a dalo marker line", name, n+1)
		}
	}
	if eol != "\n" {
		s = strings.ReplaceAll(s, "\n", eol)
	}
	return []byte(s), nil
}

// BlockDigest is the digest of the body of block, a whole block as
// enable wrote it (Edit.Block): what its begin marker records.
func BlockDigest(block []byte) string {
	ls := splitTextLines(block, 0)
	if len(ls) < 2 {
		return ""
	}
	first, last := ls[0], ls[len(ls)-1]
	return bodyDigest(block[first.off+len(first.text)+len(first.eol) : last.off])
}

// blockText is a whole block: begin marker, body, end marker.
func blockText(in Asset, b []byte, eol string) []byte {
	var w bytes.Buffer
	fmt.Fprintf(&w, "%sinstruction:%s source=%s package=%s sha256=%s%s%s", beginPrefix, in.ID.Selector, in.ID.Source, in.Package, bodyDigest(b), markerClose, eol)
	w.Write(b)
	fmt.Fprintf(&w, "%sinstruction:%s source=%s%s%s", endPrefix, in.ID.Selector, in.ID.Source, markerClose, eol)
	return w.Bytes()
}

// Actions an edit can take.
const (
	ActionAdd       = "add"       // a new block
	ActionUnchanged = "unchanged" // the same block is already there
	ActionUpdate    = "update"    // an unedited block with other content or package is replaced
	ActionTakeOver  = "take over" // an edited block is replaced (--force)
	ActionRemove    = "remove"    // a block is removed
)

// An Edit is the result of enabling or disabling one block in a file's
// contents. Nothing is written: Before and After are bytes.
type Edit struct {
	Action       string
	Before       []byte
	After        []byte
	Block        []byte // the block as written (enable) or as removed (disable)
	NewlineAdded bool   // enable ended the user's last line
}

// Enable returns data, the contents of the file named name, with the
// block of in. A new block goes after everything else, separated from any
// text before it by one blank line, in the file's line-ending style, after
// its byte order mark if it has one; if the last line had no line ending,
// it gets one (Edit.NewlineAdded). A block already there with the same
// body and package is left alone; an unedited one is replaced in place; an
// edited one is a *ConflictError unless force.
func Enable(name string, data []byte, in Asset, force bool) (*Edit, error) {
	if err := in.ID.check(); err != nil {
		return nil, err
	}
	if !markerPackage.MatchString(in.Package) {
		return nil, fmt.Errorf("package %q cannot appear in a marker: it must be SOURCE:NAME matching %s", in.Package, markerPackage)
	}
	blocks, err := Parse(name, data)
	if err != nil {
		return nil, err
	}
	if err := utf8Text(in.ID.String(), in.Content); err != nil {
		return nil, err
	}
	content := bytes.TrimPrefix(data, []byte(utf8BOM))
	eol := fileLineEnding(content)
	b, err := instructionBody(in.Package+" "+in.ID.String(), in.Content, eol)
	if err != nil {
		return nil, err
	}
	text := blockText(in, b, eol)
	e := &Edit{Before: data, Block: text}
	for _, old := range blocks {
		if old.ID != in.ID {
			continue
		}
		switch {
		case old.Edited() && !force:
			return nil, &ConflictError{File: name, Block: old, Op: "enable"}
		case old.Edited():
			e.Action = ActionTakeOver
		case bytes.Equal(data[old.Start:old.End], text):
			e.Action = ActionUnchanged
			e.After = data
			return e, nil
		default:
			e.Action = ActionUpdate
		}
		e.After = joinBytes(data[:old.Start], text, data[old.End:])
		return e, nil
	}
	e.Action = ActionAdd
	var sep []byte
	if len(content) > 0 {
		if content[len(content)-1] != '\n' {
			sep = append(sep, eol...)
			e.NewlineAdded = true
		}
		sep = append(sep, eol...)
	}
	e.After = joinBytes(data, sep, text)
	return e, nil
}

// Disable returns data without the block of id, and without the blank
// line that separated it: the one before it, or else the one after it.
// newlineAdded says that enabling ended the user's last line; once no dalo
// block is left, that line ending goes too, unless the user has written
// after the block since. An edited block is a
// *ConflictError unless force; a missing one wraps ErrNotEnabled.
func Disable(name string, data []byte, id ID, force, newlineAdded bool) (*Edit, error) {
	blocks, err := Parse(name, data)
	if err != nil {
		return nil, err
	}
	var old *Block
	for _, b := range blocks {
		if b.ID == id {
			old = b
		}
	}
	if old == nil {
		return nil, fmt.Errorf("%s: %s: %w there", name, id, ErrNotEnabled)
	}
	if old.Edited() && !force {
		return nil, &ConflictError{File: name, Block: old, Op: "disable"}
	}
	start, end := old.Start, old.End
	base := 0
	if bytes.HasPrefix(data, []byte(utf8BOM)) {
		base = len(utf8BOM)
	}
	before := splitTextLines(data[base:start], base)
	after := splitTextLines(data[end:], end)
	switch {
	case len(before) > 0 && len(before[len(before)-1].text) == 0:
		start = before[len(before)-1].off
	case len(after) > 0 && len(after[0].text) == 0 && len(after[0].eol) > 0:
		end += len(after[0].eol)
	}
	out := joinBytes(data[:start], data[end:])
	// The line ending dalo added is the file's last byte only while the
	// block it preceded ends the file: text the user wrote after the block
	// ends with the user's own.
	// It is the file's line ending: a CR before it is the user's.
	if newlineAdded && len(blocks) == 1 && old.End == len(data) {
		if eol := fileLineEnding(out[base:]); bytes.HasSuffix(out[base:], []byte(eol)) {
			out = out[:len(out)-len(eol)]
		}
	}
	return &Edit{Action: ActionRemove, Before: data, After: out, Block: data[old.Start:old.End]}, nil
}

func joinBytes(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
