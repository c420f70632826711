package engine

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
)

// A fmProgram is a front matter definition (#SkillFrontMatter,
// #AgentFrontMatter) read from its CUE syntax and run directly on the
// front matter's values. Unifying the definition costs CUE some 100 µs a
// skill, most of a cold validation of a source of many skills; the
// program answers in a few µs and the rule stays where it is stated, in
// cue/skills.cue.
//
// It runs only the constructs those definitions are written in (lets,
// comprehensions with if and for clauses over fm, tests against _|_,
// unification with string, strings.MaxRunes and {[string]: string},
// =~, len, strings.TrimSpace, interpolation, and names of the package
// such as #Limits). Anything else, in the definition or in the front
// matter (a YAML value that is not a string, a number, a boolean, null, a
// list or a mapping of plain keys; a key held twice; a condition that is
// not a boolean), makes it decline, and the caller unifies as before.
// TestFrontMatterProgramAgrees holds its answers to CUE's.
//
// newFMProgram compiles the syntax once into Go functions (fmExpr), with
// all the definition fixes worked out then: literals unquoted, names
// resolved (a key a for clause binds, fm, dir, a let or field of the
// definition, else a name of the package, whose value CUE is asked
// once), patterns compiled, interpolations' fragments cut. A run does
// only what depends on the front matter. A construct the program does
// not run compiles to a function that declines when the run reaches it,
// as reading the syntax on each run declined only there: a definition is
// refused only where its evaluation would be. Names are resolved where
// they are written, as CUE scopes them: a let or field of the definition
// sees no key a for clause binds.
type fmProgram struct {
	elems  []fmElem // the elements of its violations list
	nslots int      // slots a run holds: the lets and fields it reads, the keys for clauses bind

	res patterns // patterns only a front matter spells
}

// errDecline is a construct the program does not run.
var errDecline = errors.New("front matter program: construct not run")

// fmStruct is a mapping, its fields in order. Its values are held as
// fmVals, not boxed in interfaces, which would allocate for every string
// a front matter holds. A front matter holds a few keys, which a scan of
// its fields finds sooner than a map would hash them, and one allocation
// holds them all where a map cost its own; index, filled once the mapping
// holds more than fmIndexed keys, keeps a long one (CUE's decoder reads
// any YAML) from costing a scan a key. A released mapping keeps its index,
// emptied, for the next long one (a metadata map of many keys).
type fmStruct struct {
	fields []fmEntry
	index  map[string]int // the field of each key, when there are more than fmIndexed
	lines  []int          // a released mapping's line table, for plainFrontMatter to reuse
}

type fmEntry struct {
	key string
	val fmVal
}

const fmIndexed = 16

// get returns the value of key k and whether s holds it.
func (s *fmStruct) get(k string) (fmVal, bool) {
	if i := s.field(k); i >= 0 {
		return s.fields[i].val, true
	}
	return fmVal{}, false
}

// field returns the index in s.fields of key k, -1 when s does not hold it.
func (s *fmStruct) field(k string) int {
	if len(s.fields) > fmIndexed {
		if i, ok := s.index[k]; ok {
			return i
		}
		return -1
	}
	for i := range s.fields {
		if s.fields[i].key == k {
			return i
		}
	}
	return -1
}

// add adds the key k holding v; it returns false, adding nothing, when s
// holds k already.
func (s *fmStruct) add(k string, v fmVal) bool {
	if s.field(k) >= 0 {
		return false
	}
	s.fields = append(s.fields, fmEntry{k, v})
	switch n := len(s.fields); {
	case n == fmIndexed+1:
		if s.index == nil {
			s.index = make(map[string]int, 4*n)
		}
		for i, f := range s.fields {
			s.index[f.key] = i
		}
	case n > fmIndexed+1:
		s.index[k] = n - 1
	}
	return true
}

// newFMProgram compiles def's syntax, or returns nil when it holds
// anything but lets, fields and a violations list the program runs.
func newFMProgram(root, def cue.Value) *fmProgram {
	f, ok := def.Source().(*ast.Field)
	if !ok {
		return nil
	}
	body, ok := f.Value.(*ast.StructLit)
	if !ok {
		return nil
	}
	decls := map[string]ast.Expr{} // the definition's lets and fields but dir, fm and violations
	var elems []ast.Expr           // the elements of its violations list
	for _, d := range body.Elts {
		switch d := d.(type) {
		case *ast.LetClause:
			decls[d.Ident.Name] = d.Expr
		case *ast.Field:
			name, _, err := ast.LabelName(d.Label)
			if err != nil {
				return nil
			}
			switch name {
			case "dir", "fm":
			case "violations":
				elems = violationElems(d.Value)
				if elems == nil {
					return nil
				}
			default:
				decls[name] = d.Value
			}
		case *ast.CommentGroup:
		default:
			return nil
		}
	}
	if elems == nil {
		return nil
	}
	p := &fmProgram{}
	c := &fmCompiler{p: p, root: root, decls: decls, lets: map[string]fmCode{}, consts: map[string]fmCode{}}
	for _, x := range elems {
		p.elems = append(p.elems, c.elem(x))
	}
	p.nslots = c.nslots
	return p
}

// violationElems finds the list literal of `violations: [...#Violation] &
// [...]`: its elements are the violations.
func violationElems(x ast.Expr) []ast.Expr {
	switch x := x.(type) {
	case *ast.ListLit:
		for _, e := range x.Elts {
			if _, ok := e.(*ast.Ellipsis); ok {
				return nil
			}
		}
		if x.Elts == nil {
			return []ast.Expr{}
		}
		return x.Elts
	case *ast.BinaryExpr:
		if x.Op != token.AND {
			return nil
		}
		if e := violationElems(x.Y); e != nil {
			return e
		}
		return violationElems(x.X)
	}
	return nil
}

// violations runs the program on the front matter file found under the
// name dir. ok is false when it declines.
func (p *fmProgram) violations(dir string, file *ast.File) (vs []violation, ok bool) {
	fm, err := fmMapping(file.Decls)
	if err != nil {
		return nil, false
	}
	return p.violationsOf(dir, fm)
}

// violationsOf runs the program on the front matter fm found under the
// name dir. ok is false when it declines. No string of vs is fm's text
// (see emit): what a report holds of a file is its findings.
func (p *fmProgram) violationsOf(dir string, fm *fmStruct) (vs []violation, ok bool) {
	frontMatterRuns.Add(1)
	if !utf8.ValidString(dir) {
		// CUE holds a directory name's invalid bytes as U+FFFD, which
		// its messages then quote: CUE says it as CUE does.
		return nil, false
	}
	// The compiled closures take the run by pointer, so that it would
	// escape to the heap on every file: runs are reused instead.
	r := fmRuns.Get().(*fmRun) // zero: put back so
	r.dir, r.fm = dir, fm
	if p.nslots <= len(r.inline) {
		r.slots = r.inline[:p.nslots]
	} else {
		r.slots = make([]fmSlot, p.nslots)
	}
	ok = true
	for _, el := range p.elems {
		if !el(r) {
			ok = false
			break
		}
	}
	if ok && len(r.vs) > 0 {
		vs = slices.Clone(r.vs) // one allocation, not one a doubling
	}
	// The run keeps neither the front matter nor the violations alive,
	// but the room for them, unless a front matter of very many findings
	// made it large.
	found := r.vs
	clear(found)
	if cap(found) > maxPooledViolations {
		found = nil
	}
	*r = fmRun{vs: found[:0]}
	fmRuns.Put(r)
	if !ok {
		return nil, false
	}
	return vs, true
}

// maxPooledViolations bounds the room for violations a run keeps.
const maxPooledViolations = 256

// frontMatterRuns counts violationsOf's runs: a test holds a front
// matter with findings to one.
var frontMatterRuns atomic.Int64

var fmRuns = sync.Pool{New: func() any { return new(fmRun) }}

// fmMapping is the mapping of a front matter's declarations, each a field
// of a plain key held once.
func fmMapping(decls []ast.Decl) (*fmStruct, error) {
	s := &fmStruct{}
	for _, d := range decls {
		f, ok := d.(*ast.Field)
		if !ok || f.Constraint != token.ILLEGAL {
			return nil, errDecline
		}
		name, ident, err := ast.LabelName(f.Label)
		if err != nil || ident && (strings.HasPrefix(name, "_") || strings.HasPrefix(name, "#")) {
			return nil, errDecline
		}
		v, err := fmValue(f.Value)
		if err != nil {
			return nil, err
		}
		if !s.add(name, v) {
			return nil, errDecline // a key held twice
		}
	}
	return s, nil
}

func fmValue(x ast.Expr) (fmVal, error) {
	switch x := x.(type) {
	case *ast.BasicLit:
		switch x.Kind {
		case token.STRING:
			// A string, or one CUE writes raw (#"""...#) since it
			// holds three quotes; a bytes literal starts with '.
			if !strings.HasPrefix(strings.TrimLeft(x.Value, "#"), `"`) {
				return fmVal{}, errDecline // bytes
			}
			s, err := literal.Unquote(x.Value)
			if err != nil {
				return fmVal{}, errDecline
			}
			return fmVal{kind: fmString, s: s}, nil
		case token.INT, token.FLOAT:
			// CUE's decoder writes an integer past 64 bits as text no
			// number is (number & 2000...), which CUE then refuses:
			// it is left to CUE to say so.
			var n literal.NumInfo
			if literal.ParseNum(x.Value, &n) != nil {
				return fmVal{}, errDecline
			}
			return fmVal{kind: fmOpaque}, nil
		case token.TRUE, token.FALSE, token.NULL:
			return fmVal{kind: fmOpaque}, nil
		}
	case *ast.UnaryExpr:
		// A negative number (max_turns: -1), which CUE's decoder writes
		// as a minus before the literal; its infinity (-.inf) CUE does
		// not evaluate, and is left to it to say so.
		if l, ok := x.X.(*ast.BasicLit); ok && x.Op == token.SUB && (l.Kind == token.INT || l.Kind == token.FLOAT && l.Value != "Inf") {
			return fmValue(l)
		}
	case *ast.ListLit:
		// The rules read no list's items, but an integer past 64 bits
		// among them CUE refuses, as it does one outside a list.
		if !numbersParse(x) {
			return fmVal{}, errDecline
		}
		return fmVal{kind: fmOpaque}, nil
	case *ast.StructLit:
		m, err := fmMapping(x.Elts)
		return fmVal{kind: fmMap, m: m}, err
	}
	return fmVal{}, errDecline
}

// numbersParse reports whether every number literal in x, through its
// lists and structs, is one CUE parses (see fmValue).
func numbersParse(x ast.Expr) bool {
	ok := true
	ast.Walk(x, func(n ast.Node) bool {
		if l, isLit := n.(*ast.BasicLit); isLit && (l.Kind == token.INT || l.Kind == token.FLOAT) {
			var info literal.NumInfo
			ok = ok && literal.ParseNum(l.Value, &info) == nil
		}
		return ok
	}, nil)
	return ok
}

// fmKind is the kind of a value a run computes.
type fmKind uint8

const (
	fmBottom fmKind = iota // CUE's _|_: a field that is absent or a unification that fails
	fmString
	fmInt
	fmBool
	fmOpaque // a number, a boolean, null or a list of the front matter
	fmMap    // a mapping
)

// fmVal is a value a run computes, held as it is rather than boxed in an
// interface, which would allocate for every string and number.
type fmVal struct {
	kind fmKind
	b    bool
	n    int64
	s    string
	m    *fmStruct
}

func fmBoolVal(b bool) fmVal { return fmVal{kind: fmBool, b: b} }

// litVal is a literal basicLit read as a fmVal.
func litVal(v any) fmVal {
	switch v := v.(type) {
	case string:
		return fmVal{kind: fmString, s: v}
	case bool:
		return fmBoolVal(v)
	case int64:
		return fmVal{kind: fmInt, n: v}
	}
	panic("unreachable: basicLit returns a string, a bool or an int64")
}

// fmRun is one run of a program.
type fmRun struct {
	dir   string
	fm    *fmStruct
	vs    []violation // found so far
	slots []fmSlot
	// inline holds the slots of a definition that has few, so that a
	// run allocates only itself.
	inline [8]fmSlot
}

// A fmSlot holds the value of a let or field of the definition, computed
// the first time the run needs it, or the key a for clause binds.
type fmSlot struct {
	v     fmVal
	state uint8
}

const (
	slotUnset uint8 = iota
	slotBusy        // being computed: reaching it again is a cycle
	slotSet
)

// An fmExpr computes an expression of the definition in a run; ok is
// false when the run declines.
type fmExpr func(r *fmRun) (v fmVal, ok bool)

// An fmElem appends the violations of one element of the violations list
// to r.vs; it returns false when the run declines.
type fmElem func(r *fmRun) bool

// fmCode is an expression compiled. static says its value is val whatever
// the front matter, so that what is built from it can be worked out when
// compiling too.
type fmCode struct {
	run    fmExpr
	static bool
	val    fmVal
	// made says the strings run yields are made by the run (an
	// interpolation's), never a front matter's text.
	made bool
}

func fmConst(v fmVal) fmCode {
	return fmCode{run: func(*fmRun) (fmVal, bool) { return v, true }, static: true, val: v}
}

// fmDeclines is a construct the program does not run: a run that reaches
// it declines.
var fmDeclines = fmCode{run: func(*fmRun) (fmVal, bool) { return fmVal{}, false }}

func fmElemDeclines(*fmRun) bool { return false }

// fmCompiler compiles one definition.
type fmCompiler struct {
	p      *fmProgram
	root   cue.Value           // the package, for the names the definition does not declare
	decls  map[string]ast.Expr // the definition's lets and fields but dir, fm and violations
	lets   map[string]fmCode   // and their code
	nslots int                 // slots of decls and for clauses so far
	consts map[string]fmCode   // names of the package, by path
}

// fmScope is the keys the for clauses around an expression bind,
// innermost first.
type fmScope struct {
	name string
	slot int
	up   *fmScope
}

func (s *fmScope) lookup(name string) (slot int, ok bool) {
	for ; s != nil; s = s.up {
		if s.name == name {
			return s.slot, true
		}
	}
	return 0, false
}

// elem compiles one element of the violations list.
func (c *fmCompiler) elem(x ast.Expr) fmElem {
	switch x := x.(type) {
	case *ast.StructLit:
		return c.emit(x, nil)
	case *ast.Comprehension:
		if body, ok := x.Value.(*ast.StructLit); ok {
			return c.clauses(x.Clauses, body, nil)
		}
	}
	return fmElemDeclines
}

func (c *fmCompiler) clauses(cs []ast.Clause, body *ast.StructLit, sc *fmScope) fmElem {
	if len(cs) == 0 {
		return c.emit(body, sc)
	}
	switch cl := cs[0].(type) {
	case *ast.IfClause:
		cond := c.expr(cl.Condition, sc).run
		rest := c.clauses(cs[1:], body, sc)
		return func(r *fmRun) bool {
			v, ok := cond(r)
			if !ok || v.kind != fmBool {
				return false
			}
			return !v.b || rest(r)
		}
	case *ast.ForClause:
		if cl.Key == nil || cl.Value == nil || cl.Value.Name != "_" {
			return fmElemDeclines
		}
		src := c.expr(cl.Source, sc).run
		slot := c.nslots
		c.nslots++
		rest := c.clauses(cs[1:], body, &fmScope{name: cl.Key.Name, slot: slot, up: sc})
		return func(r *fmRun) bool {
			v, ok := src(r)
			if !ok || v.kind != fmMap {
				return false
			}
			for i := range v.m.fields {
				r.slots[slot] = fmSlot{v: fmVal{kind: fmString, s: v.m.fields[i].key}, state: slotSet}
				if !rest(r) {
					return false
				}
			}
			return true
		}
	}
	return fmElemDeclines
}

// emit compiles the violation the struct literal body states.
func (c *fmCompiler) emit(body *ast.StructLit, sc *fmScope) fmElem {
	// A violation outlives the front matter it was found in, whose text
	// the report must not keep alive: a string the run did not make is
	// copied.
	type part struct {
		field string // code, field or message
		run   fmExpr
		own   bool // its strings are never the front matter's
	}
	var parts []part
	for _, d := range body.Elts {
		f, ok := d.(*ast.Field)
		if !ok {
			return fmElemDeclines
		}
		name, _, err := ast.LabelName(f.Label)
		if err != nil {
			return fmElemDeclines
		}
		switch name {
		case "code", "field", "message":
		default:
			return fmElemDeclines
		}
		code := c.expr(f.Value, sc)
		parts = append(parts, part{name, code.run, code.static || code.made})
	}
	return func(r *fmRun) bool {
		var v violation
		for _, pt := range parts {
			x, ok := pt.run(r)
			if !ok || x.kind != fmString {
				return false
			}
			if !pt.own {
				x.s = strings.Clone(x.s)
			}
			switch pt.field {
			case "code":
				v.Code = x.s
			case "field":
				v.Field = x.s
			default:
				v.Message = x.s
			}
		}
		r.vs = append(r.vs, v)
		return true
	}
}

func (c *fmCompiler) expr(x ast.Expr, sc *fmScope) fmCode {
	switch x := x.(type) {
	case *ast.ParenExpr:
		return c.expr(x.X, sc)
	case *ast.BasicLit:
		v, err := basicLit(x)
		if err != nil {
			return fmDeclines
		}
		return fmConst(litVal(v))
	case *ast.BottomLit:
		return fmConst(fmVal{})
	case *ast.Ident:
		return c.ident(x.Name, sc)
	case *ast.SelectorExpr:
		return c.selector(x, sc)
	case *ast.IndexExpr:
		return c.index(x, sc)
	case *ast.Interpolation:
		return c.interpolation(x, sc)
	case *ast.UnaryExpr:
		if x.Op != token.NOT {
			return fmDeclines
		}
		return fold(c.expr(x.X, sc), func(v fmVal) (fmVal, bool) {
			if v.kind != fmBool {
				return fmVal{}, false
			}
			return fmBoolVal(!v.b), true
		})
	case *ast.BinaryExpr:
		return c.binary(x, sc)
	case *ast.CallExpr:
		return c.call(x, sc)
	case *ast.StructLit:
		return c.structLit(x, sc)
	}
	return fmDeclines
}

// fold is the code of f applied to the value of x, worked out now when x
// is static.
func fold(x fmCode, f func(fmVal) (fmVal, bool)) fmCode {
	if x.static {
		if v, ok := f(x.val); ok {
			return fmConst(v)
		}
		return fmDeclines
	}
	run := x.run
	return fmCode{run: func(r *fmRun) (fmVal, bool) {
		v, ok := run(r)
		if !ok {
			return fmVal{}, false
		}
		return f(v)
	}}
}

// ident compiles a name: a key a for clause binds, fm, dir, a let or
// field of the definition, else a name of the package.
func (c *fmCompiler) ident(name string, sc *fmScope) fmCode {
	if slot, ok := sc.lookup(name); ok {
		return fmCode{run: func(r *fmRun) (fmVal, bool) { return r.slots[slot].v, true }}
	}
	switch name {
	case "fm":
		return fmCode{run: func(r *fmRun) (fmVal, bool) { return fmVal{kind: fmMap, m: r.fm}, true }}
	case "dir":
		return fmCode{run: func(r *fmRun) (fmVal, bool) { return fmVal{kind: fmString, s: r.dir}, true }}
	}
	if _, ok := c.decls[name]; ok {
		return c.let(name)
	}
	return c.constant(name)
}

// let compiles a let or field of the definition: a slot of the run,
// computed when first read, or its value when that is static.
func (c *fmCompiler) let(name string) fmCode {
	if code, ok := c.lets[name]; ok {
		return code
	}
	slot := c.nslots
	c.nslots++
	var def fmExpr
	code := fmCode{run: func(r *fmRun) (fmVal, bool) {
		s := &r.slots[slot]
		switch s.state {
		case slotSet:
			return s.v, true
		case slotBusy:
			return fmVal{}, false // a cycle, which CUE refuses too
		}
		s.state = slotBusy
		v, ok := def(r)
		if !ok {
			s.state = slotUnset
			return fmVal{}, false
		}
		s.v, s.state = v, slotSet
		return v, true
	}}
	// The definition's own expression reads the slot, should it name
	// itself.
	c.lets[name] = code
	x := c.expr(c.decls[name], nil)
	def = x.run
	if x.static {
		code = x
		c.lets[name] = x
	}
	return code
}

// constant compiles the concrete value of the path of the package, asked
// of CUE once: a limit (#Limits.skill_name_chars).
func (c *fmCompiler) constant(path string) fmCode {
	if code, ok := c.consts[path]; ok {
		return code
	}
	code := fmDeclines
	switch v := concrete(c.root.LookupPath(cue.ParsePath(path))).(type) {
	case int64:
		code = fmConst(fmVal{kind: fmInt, n: v})
	case string:
		code = fmConst(fmVal{kind: fmString, s: v})
	}
	c.consts[path] = code
	return code
}

// path is the dotted path a chain of selectors from a name spells, or ""
// when the chain starts from a name the run binds.
func (c *fmCompiler) path(x ast.Expr, sc *fmScope) string {
	switch x := x.(type) {
	case *ast.Ident:
		if _, ok := sc.lookup(x.Name); ok || x.Name == "fm" || x.Name == "dir" || c.decls[x.Name] != nil {
			return ""
		}
		return x.Name
	case *ast.SelectorExpr:
		base := c.path(x.X, sc)
		name, _, err := ast.LabelName(x.Sel)
		if base == "" || err != nil || !ast.IsValidIdent(name) {
			return ""
		}
		return base + "." + name
	}
	return ""
}

func (c *fmCompiler) selector(x *ast.SelectorExpr, sc *fmScope) fmCode {
	if p := c.path(x, sc); p != "" {
		return c.constant(p)
	}
	name, _, err := ast.LabelName(x.Sel)
	if err != nil {
		return fmDeclines
	}
	if id, ok := x.X.(*ast.Ident); ok && id.Name == "fm" {
		if _, bound := sc.lookup("fm"); !bound {
			// fm.name, most of what a definition reads: the field
			// looked up at once, not through fm's value and fmField.
			return fmCode{run: func(r *fmRun) (fmVal, bool) {
				v, _ := r.fm.get(name) // _|_ when fm does not hold it
				return v, true
			}}
		}
	}
	return fold(c.expr(x.X, sc), func(v fmVal) (fmVal, bool) { return fmField(v, name) })
}

// fmField is the field name of v: _|_ unless v is a mapping holding it.
func fmField(v fmVal, name string) (fmVal, bool) {
	switch v.kind {
	case fmMap:
		if f, ok := v.m.get(name); ok {
			return f, true
		}
		return fmVal{}, true
	case fmBottom, fmString, fmOpaque:
		return fmVal{}, true
	}
	return fmVal{}, false
}

func (c *fmCompiler) index(x *ast.IndexExpr, sc *fmScope) fmCode {
	base, index := c.expr(x.X, sc).run, c.expr(x.Index, sc).run
	return fmCode{run: func(r *fmRun) (fmVal, bool) {
		v, ok := base(r)
		if !ok {
			return fmVal{}, false
		}
		k, ok := index(r)
		if !ok || k.kind != fmString {
			return fmVal{}, false
		}
		return fmField(v, k.s)
	}}
}

// interpolation compiles a string interpolation, its fragments unquoted
// now; one whose values are all static is a string now.
func (c *fmCompiler) interpolation(x *ast.Interpolation, sc *fmScope) fmCode {
	type part struct {
		lit string
		run fmExpr // nil for a fragment
	}
	var parts []part
	static := true
	for i, el := range x.Elts {
		if i%2 == 0 {
			lit, ok := el.(*ast.BasicLit)
			if !ok {
				return fmDeclines
			}
			frag, ok := interpolationFragment(lit.Value, i == 0, i == len(x.Elts)-1)
			if !ok {
				return fmDeclines
			}
			s, err := literal.Unquote(`"` + frag + `"`)
			if err != nil {
				return fmDeclines
			}
			parts = append(parts, part{lit: s})
			continue
		}
		v := c.expr(el, sc)
		static = static && v.static
		parts = append(parts, part{run: v.run})
	}
	// The string is written once at its size: grown a doubling at a
	// time, a finding's message of 150 bytes was five allocations.
	run := func(r *fmRun) (fmVal, bool) {
		var inline [8]string
		strs := inline[:0]
		if len(parts) > len(inline) {
			strs = make([]string, 0, len(parts))
		}
		size := 0
		for _, pt := range parts {
			s := pt.lit
			if pt.run != nil {
				v, ok := pt.run(r)
				if !ok {
					return fmVal{}, false
				}
				switch v.kind {
				case fmString:
					s = v.s
				case fmInt:
					s = strconv.FormatInt(v.n, 10)
				default:
					return fmVal{}, false
				}
			}
			strs = append(strs, s)
			size += len(s)
		}
		var b strings.Builder
		b.Grow(size)
		for _, s := range strs {
			b.WriteString(s)
		}
		return fmVal{kind: fmString, s: b.String()}, true
	}
	if static {
		if v, ok := run(nil); ok {
			return fmConst(v)
		}
		return fmDeclines
	}
	return fmCode{run: run, made: true}
}

func (c *fmCompiler) binary(x *ast.BinaryExpr, sc *fmScope) fmCode {
	if x.Op == token.AND {
		return c.unify(x, sc)
	}
	if x.Op == token.EQL || x.Op == token.NEQ {
		// x == _|_ asks whether x is _|_.
		other := ast.Expr(nil)
		if _, ok := x.Y.(*ast.BottomLit); ok {
			other = x.X
		} else if _, ok := x.X.(*ast.BottomLit); ok {
			other = x.Y
		}
		if other != nil {
			eq := x.Op == token.EQL
			o := c.expr(other, sc)
			if o.static {
				return fmConst(fmBoolVal((o.val.kind == fmBottom) == eq))
			}
			// The commonest test of a definition, run without fold's
			// call of a function for its answer.
			run := o.run
			return fmCode{run: func(r *fmRun) (fmVal, bool) {
				v, ok := run(r)
				if !ok {
					return fmVal{}, false
				}
				return fmBoolVal((v.kind == fmBottom) == eq), true
			}}
		}
	}
	l, rc := c.expr(x.X, sc), c.expr(x.Y, sc)
	op := x.Op
	var re *matcher // a pattern the definition spells, compiled now
	if (op == token.MAT || op == token.NMAT) && rc.static && rc.val.kind == fmString {
		var err error
		if re, err = c.p.res.compile(rc.val.s); err != nil {
			return fmDeclines
		}
	}
	left, right, p := l.run, rc.run, c.p
	run := func(r *fmRun) (fmVal, bool) {
		lv, ok := left(r)
		if !ok {
			return fmVal{}, false
		}
		rv, ok := right(r)
		if !ok {
			return fmVal{}, false
		}
		return p.compare(op, lv, rv, re)
	}
	if l.static && rc.static {
		if v, ok := run(nil); ok {
			return fmConst(v)
		}
		return fmDeclines
	}
	return fmCode{run: run}
}

// compare is l op r for two values of a kind, re the pattern r spells
// when it was compiled with the program.
func (p *fmProgram) compare(op token.Token, l, r fmVal, re *matcher) (fmVal, bool) {
	if l.kind != r.kind {
		return fmVal{}, false
	}
	switch l.kind {
	case fmBool:
		switch op {
		case token.LOR:
			return fmBoolVal(l.b || r.b), true
		case token.LAND:
			return fmBoolVal(l.b && r.b), true
		case token.EQL:
			return fmBoolVal(l.b == r.b), true
		case token.NEQ:
			return fmBoolVal(l.b != r.b), true
		}
	case fmString:
		switch op {
		case token.EQL:
			return fmBoolVal(l.s == r.s), true
		case token.NEQ:
			return fmBoolVal(l.s != r.s), true
		case token.MAT, token.NMAT:
			if re == nil {
				var err error
				if re, err = p.res.compile(r.s); err != nil {
					return fmVal{}, false
				}
			}
			return fmBoolVal(re.MatchString(l.s) == (op == token.MAT)), true
		}
	case fmInt:
		switch op {
		case token.EQL:
			return fmBoolVal(l.n == r.n), true
		case token.NEQ:
			return fmBoolVal(l.n != r.n), true
		case token.LSS:
			return fmBoolVal(l.n < r.n), true
		case token.LEQ:
			return fmBoolVal(l.n <= r.n), true
		case token.GTR:
			return fmBoolVal(l.n > r.n), true
		case token.GEQ:
			return fmBoolVal(l.n >= r.n), true
		}
	}
	return fmVal{}, false
}

// unify compiles x.X & x.Y for the constraints the definitions unify
// front matter values with: string, strings.MaxRunes(n) and
// {[string]: string}. x.Y is not evaluated when x.X is _|_.
func (c *fmCompiler) unify(x *ast.BinaryExpr, sc *fmScope) fmCode {
	left := c.expr(x.X, sc).run
	check := func(*fmRun, fmVal) (fmVal, bool) { return fmVal{}, false }
	switch y := x.Y.(type) {
	case *ast.Ident:
		if y.Name == "string" && c.path(y, sc) == "string" {
			check = func(_ *fmRun, v fmVal) (fmVal, bool) {
				if v.kind == fmString {
					return v, true
				}
				return fmVal{}, true
			}
		}
	case *ast.CallExpr:
		if c.path(y.Fun, sc) == "strings.MaxRunes" && len(y.Args) == 1 {
			arg := c.expr(y.Args[0], sc).run
			check = func(r *fmRun, v fmVal) (fmVal, bool) {
				n, ok := arg(r)
				if !ok || n.kind != fmInt {
					return fmVal{}, false
				}
				if v.kind == fmString && runesAtMost(v.s, n.n) {
					return v, true
				}
				return fmVal{}, true
			}
		}
	case *ast.StructLit:
		if stringMap(y) {
			check = func(_ *fmRun, v fmVal) (fmVal, bool) {
				if v.kind != fmMap {
					return fmVal{}, true
				}
				for i := range v.m.fields {
					if v.m.fields[i].val.kind != fmString {
						return fmVal{}, true
					}
				}
				return v, true
			}
		}
	}
	return fmCode{run: func(r *fmRun) (fmVal, bool) {
		v, ok := left(r)
		if !ok || v.kind == fmBottom {
			return v, ok
		}
		return check(r, v)
	}}
}

// call compiles a call of len or strings.TrimSpace, when no name the run
// binds hides it.
func (c *fmCompiler) call(x *ast.CallExpr, sc *fmScope) fmCode {
	name := c.path(x.Fun, sc)
	if name == "" || len(x.Args) != 1 {
		return fmDeclines
	}
	var f func(string) fmVal
	switch name {
	case "len":
		f = func(s string) fmVal { return fmVal{kind: fmInt, n: int64(len(s))} }
	case "strings.TrimSpace":
		f = func(s string) fmVal { return fmVal{kind: fmString, s: strings.TrimSpace(s)} }
	default:
		return fmDeclines
	}
	return fold(c.expr(x.Args[0], sc), func(v fmVal) (fmVal, bool) {
		if v.kind != fmString {
			return fmVal{}, false
		}
		return f(v.s), true
	})
}

// structLit compiles a struct literal of plain fields: one whose values
// are static (the definition's _known) is built now. A label written
// twice, which CUE unifies, is not run.
func (c *fmCompiler) structLit(x *ast.StructLit, sc *fmScope) fmCode {
	var names []string
	var vals []fmExpr
	static := true
	for _, d := range x.Elts {
		f, ok := d.(*ast.Field)
		if !ok {
			return fmDeclines
		}
		name, _, err := ast.LabelName(f.Label)
		if err != nil {
			return fmDeclines
		}
		if slices.Contains(names, name) {
			return fmDeclines
		}
		v := c.expr(f.Value, sc)
		static = static && v.static
		names = append(names, name)
		vals = append(vals, v.run)
	}
	run := func(r *fmRun) (fmVal, bool) {
		s := &fmStruct{fields: make([]fmEntry, 0, len(names))}
		for i, name := range names {
			v, ok := vals[i](r)
			if !ok {
				return fmVal{}, false
			}
			s.add(name, v)
		}
		return fmVal{kind: fmMap, m: s}, true
	}
	if static {
		if v, ok := run(nil); ok {
			return fmConst(v)
		}
		return fmDeclines
	}
	return fmCode{run: run}
}

func basicLit(x *ast.BasicLit) (any, error) {
	switch x.Kind {
	case token.STRING:
		if strings.HasPrefix(x.Value, `"`) {
			if s, err := literal.Unquote(x.Value); err == nil {
				return s, nil
			}
		}
	case token.INT:
		if n, err := strconv.ParseInt(x.Value, 10, 64); err == nil {
			return n, nil
		}
	case token.TRUE:
		return true, nil
	case token.FALSE:
		return false, nil
	}
	return nil, errDecline
}

// concrete is v as an int64 or a string, when it is a concrete one, else
// errDecline: what the programs of fmProgram and leafProgram can compare
// a value with.
func concrete(v cue.Value) any {
	switch v.IncompleteKind() {
	case cue.IntKind:
		if n, err := v.Int64(); err == nil {
			return n
		}
	case cue.StringKind:
		if s, err := v.String(); err == nil {
			return s
		}
	}
	return errDecline
}

// stringMap is whether s is {[string]: string}.
func stringMap(s *ast.StructLit) bool {
	if len(s.Elts) != 1 {
		return false
	}
	f, ok := s.Elts[0].(*ast.Field)
	if !ok {
		return false
	}
	l, ok := f.Label.(*ast.ListLit)
	if !ok || len(l.Elts) != 1 {
		return false
	}
	k, ok := l.Elts[0].(*ast.Ident)
	v, ok2 := f.Value.(*ast.Ident)
	return ok && ok2 && k.Name == "string" && v.Name == "string"
}
