package jsonedit

import (
	"bytes"
	"encoding/json"
	"strings"
)

// A Splice replaces doc[start:end] with text.
type Splice struct {
	Start, End int
	Text       string
}

// Apply returns a copy of doc with every splice of ss made. The splices
// must not overlap; their offsets are all into doc as it is, so they are
// made from the last to the first.
func Apply(doc []byte, ss []Splice) []byte {
	// Later splices first, so offsets stay valid; the splices never overlap.
	for i := 1; i < len(ss); i++ {
		for j := i; j > 0 && ss[j].Start > ss[j-1].Start; j-- {
			ss[j], ss[j-1] = ss[j-1], ss[j]
		}
	}
	out := append([]byte(nil), doc...)
	for _, sp := range ss {
		out = append(out[:sp.Start], append([]byte(sp.Text), out[sp.End:]...)...)
	}
	return out
}

// LineIndent is the whitespace that starts the line holding offset off, and
// whether only whitespace precedes off on that line.
func LineIndent(doc []byte, off int) (string, bool) {
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

// Layout says how to write new children into a container: on their own
// lines (with the indent of a child and of the closing bracket) or inline.
type Layout struct {
	Multiline    bool
	Child, Close string
}

// ContainerLayout reads how the container c lays out its children, so that
// a new child is written as the user's are: on its own line with their
// indent, or inline. An empty container takes the document's indent unit
// below its own line, unless the whole document is on one line.
func ContainerLayout(doc []byte, c *Value) Layout {
	closeIndent, _ := LineIndent(doc, c.Start)
	var first int = -1
	if len(c.Members) > 0 {
		first = c.Members[0].KeyStart
	} else if len(c.Elems) > 0 {
		first = c.Elems[0].Start
	}
	if first < 0 {
		if !bytes.Contains(bytes.TrimRight(doc, " \t\r\n"), []byte("\n")) {
			return Layout{} // a one-line document stays on one line
		}
		return Layout{Multiline: true, Child: closeIndent + docUnit(doc), Close: closeIndent}
	}
	ind, own := LineIndent(doc, first)
	if !own {
		return Layout{}
	}
	if ci, ownClose := LineIndent(doc, c.End-1); ownClose {
		closeIndent = ci
	}
	return Layout{Multiline: true, Child: ind, Close: closeIndent}
}

// Render marshals v for a place whose lines start with indent.
func Render(v any, indent, unit string, multiline bool) string {
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

// Inline renders v on one line in the style of doc: with a space after
// ':' and ',' unless the document writes its JSON without them.
func Inline(doc []byte, v any) string {
	out := Render(v, "", "", false)
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

// UnitOf is the indentation unit to render nested values with in a
// container of layout l: what a child's indent adds to its closing
// bracket's, else the document's own unit.
func UnitOf(l Layout, doc []byte) string {
	if l.Multiline && strings.HasPrefix(l.Child, l.Close) && len(l.Child) > len(l.Close) {
		return l.Child[len(l.Close):]
	}
	return docUnit(doc)
}

// InsertMember adds "key": v at the end of object obj.
func InsertMember(doc []byte, obj *Value, key string, v any) Splice {
	l := ContainerLayout(doc, obj)
	unit := UnitOf(l, doc)
	sep := ": "
	val := Render(v, l.Child, unit, true)
	if !l.Multiline {
		val = Inline(doc, v)
		if !bytes.Contains(doc, []byte(`": `)) && bytes.Contains(doc, []byte(`":`)) {
			sep = ":"
		}
	}
	kv := Render(key, "", "", false) + sep + val
	return insertChild(doc, obj, len(obj.Members) == 0, kv, l)
}

// InsertMembers adds members, keys[i] with vals[i], at the end of object
// obj, as InsertMember adding them one after another adds them, in one
// splice; ok is false for an object written on one line, where how a
// member is written depends on those added before it.
func InsertMembers(doc []byte, obj *Value, keys []string, vals []any) (sp Splice, ok bool) {
	l := ContainerLayout(doc, obj)
	if !l.Multiline {
		return Splice{}, false
	}
	unit := UnitOf(l, doc)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",\n" + l.Child)
		}
		b.WriteString(Render(k, "", "", false) + ": " + Render(vals[i], l.Child, unit, true))
	}
	return insertChild(doc, obj, len(obj.Members) == 0, b.String(), l), true
}

// AppendElem adds v at the end of array arr.
func AppendElem(doc []byte, arr *Value, v any) Splice {
	l := ContainerLayout(doc, arr)
	unit := UnitOf(l, doc)
	val := Render(v, l.Child, unit, true)
	if !l.Multiline {
		val = Inline(doc, v)
	}
	return insertChild(doc, arr, len(arr.Elems) == 0, val, l)
}

func insertChild(doc []byte, c *Value, empty bool, text string, l Layout) Splice {
	if empty {
		// An empty container may still hold comments: they stay, and the
		// child goes after them.
		from := c.Start + 1 + len(bytes.TrimRight(doc[c.Start+1:c.End-1], " \t\r\n"))
		if l.Multiline || bytes.Contains(doc[c.Start+1:from], []byte("//")) {
			return Splice{from, c.End - 1, "\n" + l.Child + text + "\n" + l.Close}
		}
		if from > c.Start+1 {
			text = " " + text
		}
		return Splice{from, c.End - 1, text}
	}
	var lastEnd int
	if c.Kind == '{' {
		lastEnd = c.Members[len(c.Members)-1].Val.End
	} else {
		lastEnd = c.Elems[len(c.Elems)-1].End
	}
	if l.Multiline {
		return Splice{lastEnd, lastEnd, ",\n" + l.Child + text}
	}
	if !bytes.Contains(doc, []byte(", ")) && !bytes.Contains(doc, []byte(`": `)) {
		return Splice{lastEnd, lastEnd, "," + text}
	}
	return Splice{lastEnd, lastEnd, ", " + text}
}

// RemoveChild removes child i of container c (an element, or a member from
// its key), with the separator that went with it. Removing the last child
// leaves interior between the brackets: what was there before a child was
// added, when known.
func RemoveChild(c *Value, i int, interior string) Splice {
	n := len(c.Elems)
	start := func(k int) int { return c.Elems[k].Start }
	end := func(k int) int { return c.Elems[k].End }
	if c.Kind == '{' {
		n = len(c.Members)
		start = func(k int) int { return c.Members[k].KeyStart }
		end = func(k int) int { return c.Members[k].Val.End }
	}
	switch {
	case n == 1:
		return Splice{c.Start + 1, c.End - 1, interior}
	case i < n-1:
		return Splice{start(i), start(i + 1), ""}
	default:
		return Splice{end(i - 1), end(i), ""}
	}
}
