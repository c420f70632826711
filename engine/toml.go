package engine

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// utf8BOM is U+FEFF encoded in UTF-8, the byte order mark.
const utf8BOM = "\xef\xbb\xbf"

// A manifest is a decoded PLUGIN.toml with the position of every key and
// value, so that a finding about a field path can name its line and column.
type manifest struct {
	data  map[string]any
	spans map[string]span // field path (hook[0].effect) → positions
	lines []int           // byte offset of the start of each line
}

// A span holds where a field's key and its value start, as byte offsets
// plus one (0: none). For an element of an array of tables, key is its
// [[header]]. An offset becomes a line and column only when a finding asks
// (at): a search of the line table for each key and value was a third of
// the walk.
type span struct {
	key, value int32
}

// at returns the position for a finding about path: its value if it has
// one, else its key, else the nearest enclosing field that has a position.
func (m *manifest) at(path string) Pos {
	for {
		if s, ok := m.spans[path]; ok {
			if s.value > 0 {
				return m.pos(int(s.value - 1))
			}
			if s.key > 0 {
				return m.pos(int(s.key - 1))
			}
		}
		if path == "" {
			return Pos{1, 1}
		}
		path = parentPath(path)
	}
}

// keyAt returns the position of path's key (for unknown or duplicate keys).
func (m *manifest) keyAt(path string) Pos {
	if s, ok := m.spans[path]; ok && s.key > 0 {
		return m.pos(int(s.key - 1))
	}
	return m.at(path)
}

func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

func joinPath(parent, key string) string {
	if !isBareKey(key) {
		key = strconv.Quote(key)
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func indexPath(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

// A pathBuf makes the field paths of one walk (joinPath, indexPath) in one
// buffer, each path a string of it: strings.Builder only ever appends, so
// what String returned is never written again. A string of its own for
// each path was a sixth of the allocations of decoding a manifest.
type pathBuf struct{ b strings.Builder }

func (p *pathBuf) join(parent, key string) string {
	if !isBareKey(key) {
		return joinPath(parent, key)
	}
	start := p.b.Len()
	if parent != "" {
		p.b.WriteString(parent)
		p.b.WriteByte('.')
	}
	p.b.WriteString(key)
	return p.b.String()[start:]
}

func (p *pathBuf) index(parent string, i int) string {
	start := p.b.Len()
	p.b.WriteString(parent)
	p.b.WriteByte('[')
	var digits [20]byte
	p.b.Write(strconv.AppendInt(digits[:0], int64(i), 10))
	p.b.WriteByte(']')
	return p.b.String()[start:]
}

func isBareKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (m *manifest) pos(offset int) Pos {
	line := sort.Search(len(m.lines), func(i int) bool { return m.lines[i] > offset })
	return Pos{Line: line, Column: offset - m.lines[line-1] + 1}
}

// decodeManifest decodes src, reporting into l. It returns nil when the
// manifest cannot be decoded or breaks a limit of the reader (UTF-8, TOML
// syntax, duplicate keys, nesting, string and array sizes): the later stages
// would only repeat the same mistake.
func decodeManifest(src []byte, lim *Limits, l *diagList) *manifest {
	m := &manifest{lines: lineStarts(src)}
	if !utf8.Valid(src) {
		off := 0
		for off < len(src) {
			r, n := utf8.DecodeRune(src[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		l.errorf("E007", m.pos(off), "", "invalid UTF-8 (byte 0x%02x): a manifest is UTF-8 TOML", src[off])
		return nil
	}
	if fast := decodeOnce(src, m, lim); fast != nil {
		return fast
	}
	tomlUnmarshalled.Add(1)
	var data map[string]any
	if err := toml.Unmarshal(src, &data); err != nil {
		row, col := 1, 1
		field := ""
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col = de.Position()
			field = strings.Join(de.Key(), ".")
		}
		// Whether the document defines something twice is decided by our
		// own walk, which knows every key's full path, not by the wording
		// of go-toml's message. A duplicate after the place go-toml stopped
		// is not what it refused.
		if d := findDuplicate(src, m.lines); d != nil && d.pos.Line <= row {
			l.errorf("E009", d.pos, d.path, "%s", d.message())
			return nil
		}
		msg := strings.TrimPrefix(err.Error(), "toml: ")
		if off := m.lines[min(row, len(m.lines))-1] + col - 1; off >= 0 && string(src[off:min(off+len(utf8BOM), len(src))]) == utf8BOM {
			// go-toml names the first byte of U+FEFF as if it were a
			// character (U+00EF 'ï'); say what is there instead.
			msg = "a UTF-8 byte order mark (U+FEFF) can only open the file, once; remove this one"
		}
		l.errorf("E008", Pos{row, col}, field, "%s", msg)
		return nil
	}
	if data == nil {
		data = map[string]any{}
	}
	m.data = data
	m.spans = spanIndex(len(m.lines))
	w := walker{m: m, lim: lim, l: l}
	if !w.walk(src) {
		return nil
	}
	return m
}

// lineStarts returns the byte offset of the start of each line of src,
// found with IndexByte, many bytes a step, into a table sized by Count:
// a byte at a time it was over 1% of validating a source.
func lineStarts(src []byte) []int {
	n := bytes.Count(src, []byte{'\n'}) + 1
	var lines []int
	if b, ok := lineTables.Get().(*[]int); ok && cap(*b) >= n {
		lines = (*b)[:1]
	} else {
		lines = make([]int, 1, n)
	}
	lines[0] = 0
	for off := 0; ; {
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			return lines
		}
		off += i + 1
		lines = append(lines, off)
	}
}

// The index of spans and the line table of a manifest live while its
// package is checked, then are released (manifest.release) to be reused
// by the next: dalo collects no garbage while it validates (cmd/dalo
// limitMemory), so memory not reused is memory the kernel must fault in
// and zero, about 2.5 µs a 4 KiB page here, and the index was an eighth
// of what checking a package of bench/sourcegen's own shape allocated.
var (
	spanIndexes = sync.Pool{}
	lineTables  = sync.Pool{}
	// spanIndexesMade counts the indexes made, not reused: a test holds
	// the packages one worker checks to one.
	spanIndexesMade atomic.Int64
)

// maxPooledIndex is the most keys an index released for reuse may hold:
// a manifest's index is made for at most this many (spanIndex).
const maxPooledIndex = 4096

// spanIndex returns an empty index for a manifest of lines lines: one
// released before, or a new one sized from them, as most lines of a
// manifest hold a key (not grown step by step, it was a tenth of what
// checking a package allocated).
func spanIndex(lines int) map[string]span {
	if m, ok := spanIndexes.Get().(map[string]span); ok {
		return m
	}
	spanIndexesMade.Add(1)
	return make(map[string]span, min(lines, maxPooledIndex))
}

// release gives m's index and line table to the next manifest decoded. m
// must not be used after: its positions are gone. An index of more than
// maxPooledIndex keys is dropped instead: clearing a map costs what it
// grew to, and one manifest of a megabyte would make every small one
// after it pay that.
func (m *manifest) release() {
	if m.spans != nil && len(m.spans) <= maxPooledIndex {
		clear(m.spans)
		spanIndexes.Put(m.spans)
	}
	if m.lines != nil {
		lines := m.lines[:0]
		lineTables.Put(&lines)
	}
	*m = manifest{}
}

// tomlUnmarshalled counts the manifests go-toml decoded: a test holds
// generated sources to none (decodeOnce builds their data).
var tomlUnmarshalled atomic.Int64

// decodeOnce decodes src, whose line table m holds, in the one parse
// that indexes its positions, when it can: when the walk finds nothing
// to report and the document holds only what the walk builds itself
// (strings, booleans, plain decimal integers, arrays, inline tables,
// tables and arrays of tables, each defined once in the plainest way).
// Otherwise it returns nil and decodeManifest decodes with go-toml, then
// walks, as it always did, for the same data and the same diagnostics:
// go-toml's decoder was as costly as the walk, and they parsed the same
// bytes twice. FuzzDecodeOnce holds its data to go-toml's.
func decodeOnce(src []byte, m *manifest, lim *Limits) *manifest {
	var scratch diagList
	m.data = map[string]any{}
	m.spans = spanIndex(len(m.lines))
	w := walker{m: m, lim: lim, l: &scratch, build: true}
	if !w.walk(src) || w.bad || len(scratch.diags) != 0 {
		m.data, m.spans = nil, nil
		return nil
	}
	return m
}

// walker indexes positions from go-toml's parser and enforces the limits a
// reader must enforce before anything else looks at the data. With lim nil
// it only looks for the first duplicate definition (findDuplicate).
type walker struct {
	m      *manifest
	lim    *Limits
	l      *diagList
	arrays map[string]int // array-of-tables path → elements so far
	defs   map[string]definition
	dup    *duplicate
	src    []byte
	failed bool
	// With build set, the walk also builds m.data (decodeOnce), and
	// sets bad on anything it leaves to go-toml. kinds says how each
	// table it made was made (by its address: a table is found from its
	// parent, never by path, so the walk keeps no path of each key).
	build, bad bool
	kinds      map[uintptr]defKind
	paths      pathBuf
	short      shortStrings
	// again is the array of tables the last header added an element
	// to, while the build goes on under that element: the next header
	// that spells it alike adds the next (nextElement).
	again    arrayHeader
	resolved int64 // headers resolveHeader resolved (headersResolved)
}

// An arrayHeader is an [[array]] header whose element the walk is in:
// its keys' text (from, to: byte offsets of the source), the table
// holding the array (parent) under its last key, the array's path and
// the scope of its elements but for their path and table.
type arrayHeader struct {
	from, to int
	parent   map[string]any
	key      string
	path     string
	elem     scope
}

// A definition is how a field path was first defined, and where (a byte
// offset).
type definition struct {
	kind defKind
	off  int
}

type defKind uint8

const (
	defValue    defKind = iota + 1 // key = value (an inline table too)
	defDotted                      // the table a in a.b = 1
	defTable                       // [table]
	defImplicit                    // the table a in [a.b]
	defArray                       // [[array]]
)

// A duplicate is a field path defined a second time.
type duplicate struct {
	path       string
	pos, first Pos
	table      bool // the second definition is a [table] or [[array]] header
}

func (d *duplicate) message() string {
	what := "key"
	if d.table {
		what = "table"
	}
	return fmt.Sprintf("%s %s is already defined at line %d, column %d", what, d.path, d.first.Line, d.first.Column)
}

// findDuplicate walks src, which go-toml refused, for the first field path
// it defines twice. It ignores the limits and stops where the syntax breaks.
func findDuplicate(src []byte, lines []int) *duplicate {
	w := walker{m: &manifest{spans: make(map[string]span), lines: lines}}
	w.walk(src)
	return w.dup
}

// define records that path is defined as k at the byte offset off, and reports whether
// that is allowed: TOML lets a table a header or dotted key created on the
// way be defined later, and an array of tables grow, but nothing else be
// defined twice.
func (w *walker) define(path string, k defKind, off int) bool {
	if w.lim != nil {
		return true // go-toml decoded the document: nothing is defined twice
	}
	if w.defs == nil {
		w.defs = make(map[string]definition)
	}
	old, ok := w.defs[path]
	if !ok {
		w.defs[path] = definition{k, off}
		return true
	}
	var clash bool
	switch k {
	case defValue:
		clash = true
	case defDotted:
		clash = old.kind != defDotted && old.kind != defImplicit
	case defTable:
		clash = old.kind != defImplicit
		if !clash {
			w.defs[path] = definition{k, off}
		}
	case defImplicit:
		clash = old.kind == defValue
	case defArray:
		clash = old.kind != defArray
	}
	if clash && w.dup == nil {
		w.dup = &duplicate{path: path, pos: w.m.pos(off), first: w.m.pos(old.off), table: k == defTable || k == defArray}
		w.failed = true
	}
	return !clash
}

func (w *walker) walk(src []byte) bool {
	w.src = src
	// The paths of a manifest take about as many bytes as it does (1.03x
	// to 1.11x on bench/sourcegen's four shapes): one buffer holds them.
	w.paths.b.Grow(len(src) + len(src)/4)
	st := parsers.Get().(*walkState)
	defer st.put()
	w.arrays, w.kinds, w.short = st.arrays, st.kinds, st.short
	p := &st.parser
	p.Reset(src)
	table := scope{}
	if w.build {
		table.tbl = w.m.data
	}
	for p.NextExpression() && !w.failed {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			keys := e.Key()
			if e.Kind == unstable.ArrayTable && w.again.parent != nil {
				if s, ok := w.nextElement(keys); ok {
					table = s
					continue
				}
			}
			table = w.resolveHeader(&keys, e.Kind == unstable.ArrayTable)
		case unstable.KeyValue:
			w.keyValue(e, table)
		}
	}
	headersResolved.Add(w.resolved)
	if err := p.Error(); err != nil && w.lim != nil {
		// Unmarshal accepted the document, so this should not happen; report
		// rather than trust an index built from half a parse.
		w.l.errorf("E008", Pos{1, 1}, "", "%v", err)
		return false
	}
	return !w.failed
}

// parsers holds go-toml parsers between walks, with the walk's maps:
// Reset keeps a parser's node storage, which a new parser grew node by
// node, each manifest (a tenth of the bytes checking a package of
// bench/sourcegen's own shape allocated), and the maps of arrays and
// table kinds, made and grown for each manifest, were a tenth of what
// decoding one of twelve members allocated. The walk keeps no node past
// its end: what it keeps of one (a key, a string) it copies.
var parsers = sync.Pool{New: func() any {
	parsersMade.Add(1)
	return &walkState{arrays: make(map[string]int), kinds: make(map[uintptr]defKind), short: make(shortStrings)}
}}

// A walkState is what one walk uses and the next may use again.
type walkState struct {
	parser unstable.Parser
	arrays map[string]int
	kinds  map[uintptr]defKind
	short  shortStrings
}

// shortStrings holds the short keys and string values walks decoded
// lately, each as the interface data holds it: the same few (ref,
// requirement, "optional", "inline", "node") recur in every manifest,
// and a string and its interface made for each were a fifth of the
// allocations of decoding one of twelve members.
type shortStrings map[string]any

const (
	maxShortString  = 24   // bytes: names and enumerated values, not references
	maxShortStrings = 1024 // kept at once, then forgotten together
)

// value returns b as a string in an interface: one kept when b is short,
// made and kept when it is not yet.
func (s shortStrings) value(b []byte) any {
	if len(b) > maxShortString || s == nil {
		return string(b)
	}
	if x, ok := s[string(b)]; ok {
		return x
	}
	if len(s) == maxShortStrings {
		clear(s) // a source of names each its own must not grow it
	}
	str := string(b)
	x := any(str)
	s[str] = x
	return x
}

// key returns b as a string, as value does.
func (s shortStrings) key(b []byte) string {
	if len(b) > maxShortString || s == nil {
		return string(b)
	}
	return s.value(b).(string)
}

// parsersMade counts the parsers made for walks: a test holds one walk
// after another to one.
var parsersMade atomic.Int64

// maxPooledTables is the most arrays or tables a walk's maps may have
// held to be used again: clearing a map costs what it grew to, which a
// manifest of a megabyte would make every small one after it pay.
const maxPooledTables = 256

// put returns st to parsers, its maps emptied. The parser's storage may
// hold nodes of the last document (slices of its bytes) until the next
// walk writes over them.
func (st *walkState) put() {
	st.parser.Reset(nil)
	if len(st.arrays) > maxPooledTables || len(st.kinds) > maxPooledTables {
		return
	}
	clear(st.arrays)
	clear(st.kinds)
	parsers.Put(st)
}

// A scope is the table keys are defined in: its field path, its TOML
// nesting depth (array elements count), how many keys name it (array
// elements do not count) and whether the first is providers.
//
// Inside providers.<name>, an array element's path is written only when a
// finding needs it: up is the array's scope and index the element's.
type scope struct {
	path      string
	depth     int
	keys      int
	providers bool
	up        *scope
	index     int
	tbl       map[string]any // the table's data, when the walk builds it and s is a table's
}

// fieldPath returns s's field path.
func (s *scope) fieldPath() string {
	if s.up == nil {
		return s.path
	}
	return indexPath(s.up.fieldPath(), s.index)
}

// enter returns the scope of key k inside s.
func (s scope) enter(k string, paths *pathBuf) scope {
	return scope{path: paths.join(s.fieldPath(), k), depth: s.depth + 1, keys: s.keys + 1, providers: s.providers || s.keys == 0 && k == "providers"}
}

// inert reports whether what s holds is adapter-owned data: anything inside
// providers.<name>. The walker checks it against the reader's limits but
// indexes none of it: a megabyte of provider data must cost no more than
// reading it.
func (w *walker) inert(s scope) bool {
	return w.lim != nil && s.providers && s.keys >= 2
}

// checkKey refuses a key longer than the string limit: keys are strings.
func (w *walker) checkKey(k *unstable.Node, s scope) bool {
	if w.lim == nil || len(k.Data) <= w.lim.StringBytes {
		return true
	}
	w.l.errorf("E015", w.m.pos(int(k.Raw.Offset)), s.fieldPath(), "key of %d bytes is longer than %d bytes", len(k.Data), w.lim.StringBytes)
	w.failed = true
	return false
}

// resolveHeader turns the keys of a [table] or [[array]] header into its
// scope, indexing into arrays of tables declared so far.
func (w *walker) resolveHeader(keys *unstable.Iterator, isArray bool) scope {
	w.resolved++
	w.again = arrayHeader{}
	var first [8]*unstable.Node // deeper headers are rare
	parts := first[:0]
	for keys.Next() {
		parts = append(parts, keys.Node())
	}
	s := scope{}
	off := 0
	var tbl map[string]any
	if w.build {
		tbl = w.m.data
	}
	var again arrayHeader
	for i, k := range parts {
		if !w.checkKey(k, s) {
			return s
		}
		key := w.short.key(k.Data)
		s = s.enter(key, &w.paths)
		off = int(k.Raw.Offset)
		last := i == len(parts)-1
		if w.build {
			if last && isArray && tbl != nil {
				again = arrayHeader{parent: tbl, key: key, path: s.path}
			}
			tbl = w.headerTable(tbl, key, s.path, last, isArray)
		}
		switch {
		case last && isArray:
			w.define(s.path, defArray, off)
			n := w.arrays[s.path]
			if w.lim != nil && n == w.lim.ArrayEntries {
				w.l.errorf("E016", w.m.pos(off), s.path, "array has more than %d entries", w.lim.ArrayEntries)
				w.failed = true
				return s
			}
			w.arrays[s.path] = n + 1
			if n == 0 {
				w.m.spans[s.path] = span{key: int32(off) + 1}
			}
			s.path = w.paths.index(s.path, n)
			s.depth++
		case last:
			w.define(s.path, defTable, off)
		default:
			w.define(s.path, defImplicit, off)
		}
		if n, ok := w.arrays[s.path]; ok && !(last && isArray) {
			s.path = w.paths.index(s.path, n-1)
			s.depth++
		}
	}
	s.tbl = tbl
	sp := w.m.spans[s.path]
	sp.key = int32(off) + 1
	w.m.spans[s.path] = sp
	if w.lim != nil && s.depth > w.lim.TOMLNesting {
		w.l.errorf("E014", w.m.pos(off), s.path, "nesting deeper than %d levels", w.lim.TOMLNesting)
		w.failed = true
	}
	if again.parent != nil && tbl != nil && !w.bad && !w.failed && w.lim != nil {
		again.from = int(parts[0].Raw.Offset)
		again.to = off + int(parts[len(parts)-1].Raw.Length)
		again.elem = s
		again.elem.path, again.elem.tbl = "", nil
		w.again = again
	}
	return s
}

// headersResolved counts the headers resolveHeader resolved key by key,
// added once a walk: a test holds a manifest of many members to one for
// their array.
var headersResolved atomic.Int64

// nextElement is resolveHeader for an [[array]] header that spells the
// array the last header added an element to (w.again), with no other
// header between them: the tables on the way are the same, so only the
// new element is made, counted and placed. ok is false for any other
// header, and for an element over the limit, whose finding
// resolveHeader makes. An array of members, tools or hooks repeats its
// header for each element; resolved key by key again, decoding a
// manifest of a dozen members took a tenth longer.
func (w *walker) nextElement(keys unstable.Iterator) (scope, bool) {
	a := &w.again
	first, lastKey, end := -1, 0, 0
	for keys.Next() {
		k := keys.Node()
		if first < 0 {
			first = int(k.Raw.Offset)
		}
		lastKey = int(k.Raw.Offset)
		end = int(k.Raw.Offset + k.Raw.Length)
	}
	if first < 0 || string(w.src[first:end]) != string(w.src[a.from:a.to]) {
		return scope{}, false
	}
	count := w.arrays[a.path]
	if count == w.lim.ArrayEntries {
		return scope{}, false
	}
	// Nothing between the headers can reach the array, which the walk
	// built: the check only keeps a broken assumption from building
	// wrong data.
	arr, ok := a.parent[a.key].([]any)
	if !ok || len(arr) != count {
		return scope{}, false
	}
	w.arrays[a.path] = count + 1
	a.from, a.to = first, end
	s := a.elem
	s.path = w.paths.index(a.path, count)
	s.tbl = w.element(a.parent, a.key, arr)
	w.m.spans[s.path] = span{key: int32(lastKey) + 1}
	return s, true
}

func (w *walker) keyValue(e *unstable.Node, table scope) {
	keys := e.Key()
	s := table
	tbl := table.tbl // nil unless the walk builds this table's data
	var last *unstable.Node
	var k string // last's
	for keys.Next() {
		if last != nil {
			// s is a table the dotted key defines on the way.
			if !w.inert(s) {
				w.define(s.path, defDotted, int(last.Raw.Offset))
			}
			if _, ok := w.m.spans[s.path]; !ok && !w.inert(table) {
				w.m.spans[s.path] = span{key: int32(last.Raw.Offset) + 1}
			}
			if tbl != nil {
				tbl = w.dottedTable(tbl, k)
			}
		}
		last = keys.Node()
		if !w.checkKey(last, s) {
			return
		}
		k = w.short.key(last.Data)
		s = s.enter(k, &w.paths)
	}
	if tbl != nil {
		w.put(tbl, k, e.Value())
	}
	start := w.valueStart(last)
	if w.inert(table) {
		w.inertValue(e.Value(), s, start)
		return
	}
	if !w.define(s.path, defValue, int(last.Raw.Offset)) {
		return
	}
	w.value(e.Value(), s, start, int32(last.Raw.Offset)+1)
}

// headerTable returns the table of the header key k inside t, making it
// when the header makes it: the last key of a [table] header, an element
// of an [[array]] (path, the array's, counted in w.arrays), a table on
// the way. What TOML allows but this does not build (a header through an
// inline table) sets w.bad, as does what TOML forbids.
func (w *walker) headerTable(t map[string]any, k, path string, last, isArray bool) map[string]any {
	if t == nil {
		return nil
	}
	x, ok := t[k]
	switch {
	case last && isArray:
		arr, isArr := x.([]any)
		if ok && (!isArr || w.arrays[path] == 0) {
			break
		}
		return w.element(t, k, arr)
	case !ok:
		kind := defImplicit
		if last {
			kind = defTable
		}
		e := w.table(kind, 0)
		t[k] = e
		return e
	case last:
		// A table made on the way by an earlier header may be given a
		// header of its own, once ([a.b] then [a]).
		if e, isMap := x.(map[string]any); isMap && !isArray && w.kindOf(e) == defImplicit {
			w.kinds[reflect.ValueOf(e).Pointer()] = defTable
			return e
		}
	case w.arrays[path] > 0:
		if arr, isArr := x.([]any); isArr && len(arr) > 0 {
			if e, isMap := arr[len(arr)-1].(map[string]any); isMap {
				return e
			}
		}
	default:
		// A table on the way: one a header made, or one dotted keys
		// made, under which TOML lets a header define a table of its
		// own ([fruit] apple.color = "red", then [fruit.apple.texture]).
		if e, isMap := x.(map[string]any); isMap && (w.kindOf(e) == defImplicit || w.kindOf(e) == defTable || w.kindOf(e) == defDotted) {
			return e
		}
	}
	w.bad = true
	return nil
}

// element adds an element to arr, the array of tables t holds under k,
// and returns it. The elements of an array of tables have the same
// keys, most often: made as large as the one before, an element's map
// does not grow key by key (maps growing were some 6% of a cold
// validation of toolbox packages, perf, not all of them these).
func (w *walker) element(t map[string]any, k string, arr []any) map[string]any {
	hint := 0
	if len(arr) > 0 {
		if prev, isMap := arr[len(arr)-1].(map[string]any); isMap {
			hint = len(prev)
		}
	}
	e := w.table(defTable, hint)
	t[k] = append(arr, e)
	return e
}

// dottedTable returns the table the dotted key k makes inside t: one
// met again must be one dotted keys made.
func (w *walker) dottedTable(t map[string]any, k string) map[string]any {
	x, ok := t[k]
	if !ok {
		e := w.table(defDotted, 0)
		t[k] = e
		return e
	}
	if e, isMap := x.(map[string]any); isMap && w.kindOf(e) == defDotted {
		return e
	}
	w.bad = true
	return nil
}

// table makes a table of the document, made as kind says, with room
// for size keys.
func (w *walker) table(kind defKind, size int) map[string]any {
	e := make(map[string]any, size)
	w.kinds[reflect.ValueOf(e).Pointer()] = kind
	return e
}

// kindOf is how the table t was made, 0 for an inline table's.
func (w *walker) kindOf(t map[string]any) defKind {
	return w.kinds[reflect.ValueOf(t).Pointer()]
}

// put sets t[k] to the data of v, which must not be there yet.
func (w *walker) put(t map[string]any, k string, v *unstable.Node) {
	if _, ok := t[k]; ok {
		w.bad = true
		return
	}
	x, ok := nodeData(v, w.short)
	if !ok {
		w.bad = true
		return
	}
	t[k] = x
}

// nodeData is what go-toml decodes v into, for the values decodeOnce
// builds; ok is false for any other. Its short strings come from short.
func nodeData(v *unstable.Node, short shortStrings) (any, bool) {
	switch v.Kind {
	case unstable.String:
		return short.value(v.Data), true
	case unstable.Bool:
		return string(v.Data) == "true", true
	case unstable.Integer:
		return plainInt(v.Data)
	case unstable.Float:
		return plainFloat(v.Data)
	case unstable.LocalDate:
		var d toml.LocalDate
		return d, d.UnmarshalText(v.Data) == nil
	case unstable.LocalTime:
		var d toml.LocalTime
		return d, d.UnmarshalText(v.Data) == nil
	case unstable.LocalDateTime:
		var d toml.LocalDateTime
		return d, d.UnmarshalText(v.Data) == nil
	case unstable.DateTime:
		return plainDateTime(v.Data)
	case unstable.Array:
		n := 0
		for it := v.Children(); it.Next(); {
			n++
		}
		out := make([]any, 0, n) // comments counted: a few slots spare
		it := v.Children()
		for it.Next() {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			x, ok := nodeData(c, short)
			if !ok {
				return nil, false
			}
			out = append(out, x)
		}
		return out, true
	case unstable.InlineTable:
		out := map[string]any{}
		it := v.Children()
		for it.Next() {
			kv := it.Node()
			if kv.Kind != unstable.KeyValue {
				continue
			}
			keys := kv.Key()
			t := out
			var last string
			for n := 0; keys.Next(); n++ {
				if n > 0 {
					if _, ok := t[last]; ok {
						return nil, false // a table met again: left to go-toml
					}
					e := map[string]any{}
					t[last] = e
					t = e
				}
				last = short.key(keys.Node().Data)
			}
			if _, ok := t[last]; ok {
				return nil, false
			}
			x, ok := nodeData(kv.Value(), short)
			if !ok {
				return nil, false
			}
			t[last] = x
		}
		return out, true
	}
	return nil, false
}

// plainDateTime reads an offset date-time (2025-06-01T09:30:00+02:00,
// ...Z) as go-toml decodes one into an interface: a time.Time of its local
// date and time in UTC, for Z or an offset of zero, or else in a zone of
// its offset without a name. Any date-time sent the whole manifest to
// go-toml's decoder and a second walk, and tool-written provider data
// holds them (reviewed = 2025-06-01T09:30:00Z). FuzzDecodeOnce holds it to
// go-toml.
func plainDateTime(b []byte) (any, bool) {
	var local []byte
	zone := time.UTC
	switch n := len(b); {
	case n > 0 && (b[n-1] == 'Z' || b[n-1] == 'z'):
		local = b[:n-1]
	case n > 6 && (b[n-6] == '+' || b[n-6] == '-') && b[n-3] == ':':
		hours, ok1 := twoDigits(b[n-5 : n-3])
		minutes, ok2 := twoDigits(b[n-2:])
		if !ok1 || !ok2 || hours > 23 || minutes > 59 {
			return nil, false
		}
		seconds := hours*3600 + minutes*60
		if b[n-6] == '-' {
			seconds = -seconds
		}
		if seconds != 0 {
			zone = time.FixedZone("", seconds)
		}
		local = b[:n-6]
	default:
		return nil, false
	}
	var d toml.LocalDateTime
	if d.UnmarshalText(local) != nil {
		return nil, false
	}
	return time.Date(d.Year, time.Month(d.Month), d.Day, d.Hour, d.Minute, d.Second, d.Nanosecond, zone), true
}

// twoDigits is the number two decimal digits write.
func twoDigits(b []byte) (int, bool) {
	if len(b) != 2 || b[0] < '0' || b[0] > '9' || b[1] < '0' || b[1] > '9' {
		return 0, false
	}
	return int(b[0]-'0')*10 + int(b[1]-'0'), true
}

// plainFloat reads a float as go-toml does, which the parser has read
// as one (digits and underscores where TOML allows them): underscores
// dropped, then strconv.ParseFloat, go-toml's reference. Infinity and NaN
// (NaN is unequal to itself, so no test could hold the two to one
// another) and a float out of range (an error of go-toml's) are left to
// go-toml. The local date and time types decode with the functions
// go-toml's decoder calls (their UnmarshalText); an offset date-time is
// left to go-toml, whose parser of it is its own.
func plainFloat(b []byte) (any, bool) {
	d := b
	if len(d) > 0 && (d[0] == '-' || d[0] == '+') {
		d = d[1:]
	}
	if len(d) == 0 || d[0] < '0' || d[0] > '9' {
		return nil, false // inf, nan
	}
	var buf [32]byte
	clean := buf[:0]
	for _, c := range b {
		if c != '_' {
			clean = append(clean, c)
		}
	}
	f, err := strconv.ParseFloat(string(clean), 64)
	if err != nil {
		return nil, false
	}
	return f, true
}

// plainInt reads a decimal integer as go-toml does: 0, or digits from 1
// to 9 first, at most 18 of them, with a sign or not and single
// underscores between digits (30_000); ok is false for any other way of
// writing one (hexadecimal, octal, binary), left to go-toml.
func plainInt(b []byte) (any, bool) {
	d := b
	if len(d) > 0 && (d[0] == '-' || d[0] == '+') {
		d = d[1:]
	}
	if len(d) == 0 || d[0] == '0' && len(d) > 1 {
		return nil, false
	}
	var n int64
	digits := 0
	for i, c := range d {
		switch {
		case c >= '0' && c <= '9':
			n = n*10 + int64(c-'0')
			digits++
		case c == '_' && i > 0 && d[i-1] != '_' && i+1 < len(d) && d[i+1] >= '0' && d[i+1] <= '9':
		default:
			return nil, false
		}
	}
	if digits > 18 {
		return nil, false
	}
	if b[0] == '-' {
		n = -n
	}
	return n, true
}

// valueStart returns where the value after key starts: after it, '=' and
// blanks.
func (w *walker) valueStart(key *unstable.Node) int {
	start := int(key.Raw.Offset + key.Raw.Length)
	for start < len(w.src) && (w.src[start] == ' ' || w.src[start] == '\t' || w.src[start] == '=' || w.src[start] == '"' || w.src[start] == '\'') {
		if w.src[start] == '=' {
			start++
			for start < len(w.src) && (w.src[start] == ' ' || w.src[start] == '\t') {
				start++
			}
			break
		}
		start++
	}
	return start
}

// offset returns where v starts in the source. go-toml gives arrays no
// range: an array starts at the '[' before its first element, or, when it
// is empty, where the caller says (-1 if it cannot tell).
func (w *walker) offset(v *unstable.Node, start int) int {
	if v.Kind != unstable.Array {
		return int(v.Raw.Offset)
	}
	if start >= 0 && start < len(w.src) && w.src[start] == '[' {
		return start
	}
	it := v.Children()
	for it.Next() {
		c := it.Node()
		if c.Kind == unstable.Comment {
			continue
		}
		o := w.offset(c, -1)
		for o--; o >= 0; o-- {
			switch w.src[o] {
			case '[':
				return o
			case ' ', '\t', '\r', '\n':
				continue
			}
			break
		}
		break
	}
	return start
}

// firstElement returns where the first element of the array at off can
// start: after its '[', blanks, line ends and comments; -1 if off is not
// an array's '['. It places an empty array nested in another, which
// go-toml gives no position.
func (w *walker) firstElement(off int) int {
	if off < 0 || off >= len(w.src) || w.src[off] != '[' {
		return -1
	}
	for off++; off < len(w.src); off++ {
		switch w.src[off] {
		case ' ', '\t', '\r', '\n':
		case '#':
			for off < len(w.src) && w.src[off] != '\n' {
				off++
			}
		default:
			return off
		}
	}
	return -1
}

// elementOffset is offset for the n-th element of an array at parent: the
// first element can be placed after the '[', a later empty one falls back
// to the array's own position.
func (w *walker) elementOffset(c *unstable.Node, n, parent int) int {
	hint := -1
	if n == 0 {
		hint = w.firstElement(parent)
	}
	if off := w.offset(c, hint); off >= 0 {
		return off
	}
	return parent
}

// value indexes v, the value of s whose key is at key (an offset plus
// one, 0 for an array's element), and what it holds.
func (w *walker) value(v *unstable.Node, s scope, off int, key int32) {
	if w.failed {
		return
	}
	off = w.offset(v, off)
	if off < 0 {
		off = 0
	}
	w.m.spans[s.path] = span{key: key, value: int32(off) + 1}
	if w.lim != nil && s.depth > w.lim.TOMLNesting {
		w.l.errorf("E014", w.m.pos(off), s.path, "nesting deeper than %d levels", w.lim.TOMLNesting)
		w.failed = true
		return
	}
	if w.inert(s) {
		// providers.<name> itself is indexed, so that a finding about it
		// has a position; what it holds is not.
		w.inertChildren(v, s, off)
		return
	}
	switch v.Kind {
	case unstable.String:
		if w.lim != nil && len(v.Data) > w.lim.StringBytes {
			w.l.errorf("E015", w.m.pos(off), s.path, "string of %d bytes is longer than %d bytes", len(v.Data), w.lim.StringBytes)
			w.failed = true
		}
	case unstable.Array:
		n := 0
		it := v.Children()
		for it.Next() {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			if w.lim != nil && n == w.lim.ArrayEntries {
				w.l.errorf("E016", w.m.pos(off), s.path, "array has more than %d entries", w.lim.ArrayEntries)
				w.failed = true
				return
			}
			cs := scope{path: w.paths.index(s.path, n), depth: s.depth + 1, keys: s.keys, providers: s.providers}
			w.value(c, cs, w.elementOffset(c, n, off), 0)
			n++
		}
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			kv := it.Node()
			if kv.Kind != unstable.KeyValue {
				continue
			}
			w.keyValue(kv, s)
		}
	}
}

// inertValue checks v, which is inside providers.<name>, against the
// reader's limits without indexing it. s.path is built only for a finding.
func (w *walker) inertValue(v *unstable.Node, s scope, start int) {
	if w.failed {
		return
	}
	if s.depth > w.lim.TOMLNesting {
		w.l.errorf("E014", w.m.pos(max(w.offset(v, start), 0)), s.fieldPath(), "nesting deeper than %d levels", w.lim.TOMLNesting)
		w.failed = true
		return
	}
	switch v.Kind {
	case unstable.String:
		if len(v.Data) > w.lim.StringBytes {
			w.l.errorf("E015", w.m.pos(int(v.Raw.Offset)), s.fieldPath(), "string of %d bytes is longer than %d bytes", len(v.Data), w.lim.StringBytes)
			w.failed = true
		}
	case unstable.Array, unstable.InlineTable:
		w.inertChildren(v, s, start)
	}
}

// inertChildren checks the elements of an array or the keys of an inline
// table inside providers.<name>.
func (w *walker) inertChildren(v *unstable.Node, s scope, start int) {
	switch v.Kind {
	case unstable.Array:
		n := 0
		it := v.Children()
		for it.Next() && !w.failed {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			if n == w.lim.ArrayEntries {
				w.l.errorf("E016", w.m.pos(max(w.offset(v, start), 0)), s.fieldPath(), "array has more than %d entries", w.lim.ArrayEntries)
				w.failed = true
				return
			}
			// Only arrays need their start, for a finding about an
			// empty one; finding it for every scalar would cost a scan.
			at := -1
			if c.Kind == unstable.Array {
				if start < 0 || w.src[start] != '[' {
					start = w.offset(v, start)
				}
				at = w.elementOffset(c, n, start)
			}
			w.inertValue(c, scope{depth: s.depth + 1, keys: s.keys, providers: true, up: &s, index: n}, at)
			n++
		}
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() && !w.failed {
			if kv := it.Node(); kv.Kind == unstable.KeyValue {
				w.keyValue(kv, s)
			}
		}
	}
}

// kindOf names the TOML type of a decoded value for messages.
func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "table"
	case time.Time, toml.LocalDate, toml.LocalTime, toml.LocalDateTime:
		return "datetime"
	}
	return fmt.Sprintf("%T", v)
}

// cueData copies decoded TOML into values cue.Context.Encode takes. A
// datetime has no CUE counterpart; it becomes bytes, which no definition
// admits, so that it can never pass for the string it would encode as,
// nor for a table (as a table {datetime: ...} passed for a provider's
// entry, which may hold any table).
func cueData(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = cueData(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = cueData(x)
		}
		return out
	case time.Time, toml.LocalDate, toml.LocalTime, toml.LocalDateTime:
		return []byte(fmt.Sprint(v))
	}
	return v
}

// declaredID returns the plugin.id a manifest declares as a string, read
// with the TOML parser alone, without decoding or checking anything else:
// what a command about one package reads of the others, to know whether
// one of them holds its id. It may name an id that a full check would not
// count (in a manifest invalid in shape); it never misses one that it
// would, since a manifest that decodes declares its plugin.id as
// [plugin] id, a dotted plugin.id or an inline plugin table.
func declaredID(src []byte) string {
	var p unstable.Parser
	p.Reset(src)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = appendKey(table[:0], e.Key())
		case unstable.KeyValue:
			if id := idIn(appendKey(slices.Clone(table), e.Key()), e.Value()); id != "" {
				return id
			}
		}
	}
	return ""
}

// idIn returns the id that key = v declares: v itself for plugin.id, the
// id of an inline plugin table.
func idIn(key []string, v *unstable.Node) string {
	switch {
	case len(key) == 2 && key[0] == "plugin" && key[1] == "id" && v.Kind == unstable.String:
		return string(v.Data)
	case len(key) == 1 && key[0] == "plugin" && v.Kind == unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			kv := it.Node()
			if kv.Kind != unstable.KeyValue {
				continue
			}
			if id := idIn(appendKey(slices.Clone(key), kv.Key()), kv.Value()); id != "" {
				return id
			}
		}
	}
	return ""
}

// appendKey appends the parts of a dotted key to path.
func appendKey(path []string, it unstable.Iterator) []string {
	for it.Next() {
		path = append(path, string(it.Node().Data))
	}
	return path
}
