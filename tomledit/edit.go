// Package tomledit edits TOML documents people own as text: it sets and
// removes the string values of one field under the keys of one table, in
// the document's own layout, so that every comment, order, formatting
// choice and byte of the rest survives. It never re-marshals a document,
// and it refuses an edit that would read back as more than the edit.
// dalo records a harness's hook trust in the user's Codex config.toml with
// it; its Quote writes every TOML string dalo writes.
package tomledit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Quote writes s as a TOML basic string: JSON's escapes are TOML's, but
// for DEL (U+007F), which JSON leaves as it is and TOML refuses in a
// basic string. Bytes that are not UTF-8 become U+FFFD.
func Quote(s string) string {
	if plain(s) {
		return `"` + s + `"` // what the encoder writes, without making one
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "\x7f", `\u007f`)
}

// plain reports whether s is printable ASCII but for the quote and the
// backslash: nothing a TOML or JSON basic string escapes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// A RefusedError is an edit the document cannot take as it is written:
// the result would not read back as the document with the edit made and
// nothing else changed (a document that declares the table inline, say).
type RefusedError struct {
	File string
	Key  string // the key whose value would not read back as set, or ""
	Err  error  // why the result would not read back as TOML, or nil
}

// Error says what the edit would do that it must not.
func (e *RefusedError) Error() string {
	switch {
	case e.Err != nil:
		return fmt.Sprintf("%s: the edit would not read back as TOML (%v)", e.File, e.Err)
	case e.Key != "":
		return fmt.Sprintf("%s: the value of %s would not read back as set in this file as it is written", e.File, e.Key)
	}
	return fmt.Sprintf("%s: the edit would change more of this file than its keys", e.File)
}

// A Written is a value Set wrote: its key, the value, and the text Set
// appended for it, or "" when it set the value in a table already there.
type Written struct {
	Key, Value, Added string
}

// byteOrderMark is UTF-8's byte order mark. TOML does not allow one, but
// Codex reads a config.toml that starts with it (as a user's editor on
// Windows may write it): Values reads past it, and Set and Drop edit what
// follows it and keep it.
var byteOrderMark = []byte("\ufeff")

// Values reads table."<key>".field of every key of the TOML document doc,
// named name in its errors, where that field is a string.
func Values(name string, doc []byte, table, field string) (map[string]string, error) {
	doc, _ = bytes.CutPrefix(doc, byteOrderMark)
	var m map[string]any
	if err := toml.Unmarshal(doc, &m); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("%s:%d:%d: not valid TOML: %v", name, row, col, de)
		}
		return nil, fmt.Errorf("%s: not valid TOML: %v", name, err)
	}
	out := map[string]string{}
	var cur any = m
	for _, part := range strings.Split(table, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return out, nil
		}
		cur = mm[part]
	}
	keys, _ := cur.(map[string]any)
	for k, v := range keys {
		if kv, ok := v.(map[string]any); ok {
			if h, ok := kv[field].(string); ok {
				out[k] = h
			}
		}
	}
	return out, nil
}

// A splice replaces doc[start:end] with text.
type splice struct {
	start, end int
	text       string
}

// Set is doc with table."<key>".field = value for each key of set,
// every other byte kept: a value that is there is replaced in place, a
// table that is there gets the field after its header, and a key with
// neither gets a table of its own appended at the end. It returns, per key
// appended, the exact text appended. The result must read back as doc
// with those values set and nothing else changed, or it is refused: a
// document that declares the table inline, say, cannot take the edit.
func Set(name string, doc []byte, table, field string, set map[string]string) ([]byte, map[string]string, error) {
	if body, ok := bytes.CutPrefix(doc, byteOrderMark); ok {
		out, added, err := Set(name, body, table, field, set)
		if err != nil {
			return nil, nil, err
		}
		return append(slices.Clip(byteOrderMark), out...), added, nil
	}
	before, err := Values(name, doc, table, field)
	if err != nil {
		return nil, nil, err
	}
	prefix := strings.Split(table, ".")
	var splices []splice
	done := map[string]bool{}
	headers := map[string]int{} // key → end of its [table."key"] header line
	walk(doc, func(path []string, kv *unstable.Node, lineEnd int) {
		if kv == nil { // a table header
			if len(path) == len(prefix)+1 && slices.Equal(path[:len(prefix)], prefix) {
				headers[path[len(prefix)]] = lineEnd
			}
			return
		}
		if len(path) != len(prefix)+2 || !slices.Equal(path[:len(prefix)], prefix) || path[len(prefix)+1] != field {
			return
		}
		key := path[len(prefix)]
		h, ok := set[key]
		if !ok || done[key] {
			return
		}
		v := kv.Value()
		splices = append(splices, splice{int(v.Raw.Offset), int(v.Raw.Offset + v.Raw.Length), Quote(h)})
		done[key] = true
	})
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	added := map[string]string{}
	var tail strings.Builder
	end := doc
	for _, k := range keys {
		if done[k] {
			continue
		}
		line := field + " = " + Quote(set[k]) + "\n"
		if at, ok := headers[k]; ok {
			splices = append(splices, splice{at, at, line})
			continue
		}
		text := "[" + table + "." + Quote(k) + "]\n" + line
		switch {
		case len(end) == 0 && tail.Len() == 0:
		case tail.Len() > 0 || bytes.HasSuffix(end, []byte("\n")):
			text = "\n" + text
		default:
			text = "\n\n" + text
		}
		tail.WriteString(text)
		added[k] = text
	}
	out := apply(doc, splices)
	out = append(out, tail.String()...)
	after, err := Values(name, out, table, field)
	if err != nil {
		return nil, nil, &RefusedError{File: name, Err: err}
	}
	for k, h := range set {
		if after[k] != h {
			return nil, nil, &RefusedError{File: name, Key: k}
		}
		delete(after, k)
		delete(before, k)
	}
	if !reflect.DeepEqual(before, after) || !sameTOMLBut(doc, out, prefix, set) {
		return nil, nil, &RefusedError{File: name}
	}
	return out, added, nil
}

// Drop is doc without the values Set wrote (recs) where each is still what
// Set wrote: a table Set appended whole goes whole, a value it set in
// place goes with its line. A key whose value was changed since is kept.
func Drop(name string, doc []byte, table, field string, recs []Written) ([]byte, error) {
	if body, ok := bytes.CutPrefix(doc, byteOrderMark); ok {
		out, err := Drop(name, body, table, field, recs)
		if err != nil {
			return nil, err
		}
		return append(slices.Clip(byteOrderMark), out...), nil
	}
	state, err := Values(name, doc, table, field)
	if err != nil {
		return nil, err
	}
	prefix := strings.Split(table, ".")
	mine := map[string]Written{}
	for _, r := range recs {
		if state[r.Key] == r.Value {
			mine[r.Key] = r
		}
	}
	out := doc
	for _, r := range mine {
		if r.Added != "" {
			if i := bytes.LastIndex(out, []byte(r.Added)); i >= 0 {
				out = append(append([]byte(nil), out[:i]...), out[i+len(r.Added):]...)
				delete(mine, r.Key)
			}
		}
	}
	var splices []splice
	walk(out, func(path []string, kv *unstable.Node, lineEnd int) {
		if kv == nil || len(path) != len(prefix)+2 || !slices.Equal(path[:len(prefix)], prefix) || path[len(prefix)+1] != field {
			return
		}
		if _, ok := mine[path[len(prefix)]]; !ok {
			return
		}
		start := int(kv.Raw.Offset)
		for start > 0 && out[start-1] != '\n' {
			start--
		}
		splices = append(splices, splice{start, lineEnd, ""})
	})
	out = apply(out, splices)
	if _, err := Values(name, out, table, field); err != nil {
		return nil, &RefusedError{File: name, Err: err}
	}
	return out, nil
}

// walk calls fn for every table header (kv nil) and key-value of doc
// with its full key path, and the offset just past its line.
func walk(doc []byte, fn func(path []string, kv *unstable.Node, lineEnd int)) {
	var p unstable.Parser
	p.Reset(doc)
	var table []string
	lineEnd := func(off int) int {
		if i := bytes.IndexByte(doc[off:], '\n'); i >= 0 {
			return off + i + 1
		}
		return len(doc)
	}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = table[:0]
			it := e.Key()
			last := 0
			for it.Next() {
				n := it.Node()
				table = append(table, string(n.Data))
				last = int(n.Raw.Offset + n.Raw.Length)
			}
			if e.Kind == unstable.Table {
				fn(append([]string(nil), table...), nil, lineEnd(last))
			} else {
				table = append(table, "\x00array") // nothing of ours is in an array of tables
			}
		case unstable.KeyValue:
			path := append([]string(nil), table...)
			it := e.Key()
			for it.Next() {
				path = append(path, string(it.Node().Data))
			}
			fn(path, e, lineEnd(int(e.Raw.Offset+e.Raw.Length)))
		}
	}
}

func apply(doc []byte, ss []splice) []byte {
	sort.Slice(ss, func(i, j int) bool { return ss[i].start > ss[j].start })
	out := append([]byte(nil), doc...)
	for _, s := range ss {
		out = append(out[:s.start], append([]byte(s.text), out[s.end:]...)...)
	}
	return out
}

// sameTOMLBut says whether a and b decode to the same document once the
// keys of set under prefix are taken out of both.
func sameTOMLBut(a, b []byte, prefix []string, set map[string]string) bool {
	var ma, mb map[string]any
	if toml.Unmarshal(a, &ma) != nil || toml.Unmarshal(b, &mb) != nil {
		return false
	}
	for _, m := range []map[string]any{ma, mb} {
		cur := m
		for _, p := range prefix {
			next, ok := cur[p].(map[string]any)
			if !ok {
				cur = nil
				break
			}
			cur = next
		}
		if cur != nil {
			for k := range set {
				delete(cur, k)
			}
		}
	}
	prune(ma)
	prune(mb)
	return reflect.DeepEqual(ma, mb)
}

// prune removes the tables left empty, so that a table Set created
// compares equal to none.
func prune(m map[string]any) {
	for k, v := range m {
		if mm, ok := v.(map[string]any); ok {
			prune(mm)
			if len(mm) == 0 {
				delete(m, k)
			}
		}
	}
}
