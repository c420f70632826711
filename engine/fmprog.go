package engine

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
)

// A fmProgram is a front matter definition (#SkillFrontMatter,
// #AgentFrontMatter) read from its CUE syntax and run directly on the
// syntax tree yaml.Extract makes of a front matter. Unifying the
// definition costs CUE some 100 µs a skill, most of a cold validation of a
// source of many skills; the program answers in a few µs and the rule
// stays where it is stated, in cue/skills.cue.
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
type fmProgram struct {
	decls map[string]ast.Expr // the definition's lets and fields but dir, fm and violations
	elems []ast.Expr          // the elements of its violations list
	root  cue.Value           // the package, for the names the definition does not declare

	mu     sync.Mutex
	consts map[string]any // names of the package, by path
	res    map[string]*regexp.Regexp
}

// errDecline is a construct the program does not run.
var errDecline = errors.New("front matter program: construct not run")

// bottom is CUE's _|_: a field that is absent or a unification that fails.
type bottom struct{}

// opaque is a concrete front matter value that is neither a string nor a
// mapping: a number, a boolean, null or a list.
type opaque struct{}

// fmStruct is a mapping, its keys in order.
type fmStruct struct {
	keys []string
	vals map[string]any
}

// newFMProgram reads def's syntax, or returns nil when it holds anything
// but lets, fields and a violations list the program runs.
func newFMProgram(root, def cue.Value) *fmProgram {
	f, ok := def.Source().(*ast.Field)
	if !ok {
		return nil
	}
	body, ok := f.Value.(*ast.StructLit)
	if !ok {
		return nil
	}
	p := &fmProgram{decls: map[string]ast.Expr{}, root: root, consts: map[string]any{}, res: map[string]*regexp.Regexp{}}
	for _, d := range body.Elts {
		switch d := d.(type) {
		case *ast.LetClause:
			p.decls[d.Ident.Name] = d.Expr
		case *ast.Field:
			name, _, err := ast.LabelName(d.Label)
			if err != nil {
				return nil
			}
			switch name {
			case "dir", "fm":
			case "violations":
				p.elems = violationElems(d.Value)
				if p.elems == nil {
					return nil
				}
			default:
				p.decls[name] = d.Value
			}
		case *ast.CommentGroup:
		default:
			return nil
		}
	}
	if p.elems == nil {
		return nil
	}
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
// name dir. ok is false when it declines.
func (p *fmProgram) violationsOf(dir string, fm *fmStruct) (vs []violation, ok bool) {
	if !utf8.ValidString(dir) {
		// CUE holds a directory name's invalid bytes as U+FFFD, which
		// its messages then quote: CUE says it as CUE does.
		return nil, false
	}
	e := &fmEnv{p: p, dir: dir, fm: fm, lets: map[string]any{}}
	for _, x := range p.elems {
		if err := e.elem(x, &vs); err != nil {
			return nil, false
		}
	}
	return vs, true
}

// fmMapping is the mapping of a front matter's declarations, each a field
// of a plain key held once.
func fmMapping(decls []ast.Decl) (*fmStruct, error) {
	s := &fmStruct{vals: make(map[string]any, len(decls))}
	for _, d := range decls {
		f, ok := d.(*ast.Field)
		if !ok || f.Constraint != token.ILLEGAL {
			return nil, errDecline
		}
		name, ident, err := ast.LabelName(f.Label)
		if err != nil || ident && (strings.HasPrefix(name, "_") || strings.HasPrefix(name, "#")) {
			return nil, errDecline
		}
		if _, dup := s.vals[name]; dup {
			return nil, errDecline
		}
		v, err := fmValue(f.Value)
		if err != nil {
			return nil, err
		}
		s.keys = append(s.keys, name)
		s.vals[name] = v
	}
	return s, nil
}

func fmValue(x ast.Expr) (any, error) {
	switch x := x.(type) {
	case *ast.BasicLit:
		switch x.Kind {
		case token.STRING:
			if !strings.HasPrefix(x.Value, `"`) {
				return nil, errDecline // bytes
			}
			s, err := literal.Unquote(x.Value)
			if err != nil {
				return nil, errDecline
			}
			return s, nil
		case token.INT, token.FLOAT, token.TRUE, token.FALSE, token.NULL:
			return opaque{}, nil
		}
	case *ast.ListLit:
		return opaque{}, nil
	case *ast.StructLit:
		return fmMapping(x.Elts)
	}
	return nil, errDecline
}

// fmEnv is one run of a program.
type fmEnv struct {
	p    *fmProgram
	dir  string
	fm   *fmStruct
	lets map[string]any
	vars map[string]string // the keys a for clause binds
}

// elem appends the violations of one element of the list to vs.
func (e *fmEnv) elem(x ast.Expr, vs *[]violation) error {
	switch x := x.(type) {
	case *ast.StructLit:
		return e.emit(x, vs)
	case *ast.Comprehension:
		body, ok := x.Value.(*ast.StructLit)
		if !ok {
			return errDecline
		}
		return e.clauses(x.Clauses, body, vs)
	}
	return errDecline
}

func (e *fmEnv) clauses(cs []ast.Clause, body *ast.StructLit, vs *[]violation) error {
	if len(cs) == 0 {
		return e.emit(body, vs)
	}
	switch c := cs[0].(type) {
	case *ast.IfClause:
		v, err := e.eval(c.Condition)
		if err != nil {
			return err
		}
		b, ok := v.(bool)
		if !ok {
			return errDecline
		}
		if !b {
			return nil
		}
		return e.clauses(cs[1:], body, vs)
	case *ast.ForClause:
		src, err := e.eval(c.Source)
		if err != nil {
			return err
		}
		s, ok := src.(*fmStruct)
		if !ok || c.Key == nil || c.Value == nil || c.Value.Name != "_" {
			return errDecline
		}
		for _, k := range s.keys {
			old, had := e.vars[c.Key.Name]
			if e.vars == nil {
				e.vars = map[string]string{}
			}
			e.vars[c.Key.Name] = k
			err := e.clauses(cs[1:], body, vs)
			if had {
				e.vars[c.Key.Name] = old
			} else {
				delete(e.vars, c.Key.Name)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return errDecline
}

// emit appends the violation the struct literal body states.
func (e *fmEnv) emit(body *ast.StructLit, vs *[]violation) error {
	var v violation
	for _, d := range body.Elts {
		f, ok := d.(*ast.Field)
		if !ok {
			return errDecline
		}
		name, _, err := ast.LabelName(f.Label)
		if err != nil {
			return errDecline
		}
		x, err := e.eval(f.Value)
		if err != nil {
			return err
		}
		s, ok := x.(string)
		if !ok {
			return errDecline
		}
		switch name {
		case "code":
			v.Code = s
		case "field":
			v.Field = s
		case "message":
			v.Message = s
		default:
			return errDecline
		}
	}
	*vs = append(*vs, v)
	return nil
}

func (e *fmEnv) eval(x ast.Expr) (any, error) {
	switch x := x.(type) {
	case *ast.ParenExpr:
		return e.eval(x.X)
	case *ast.BasicLit:
		return basicLit(x)
	case *ast.BottomLit:
		return bottom{}, nil
	case *ast.Ident:
		return e.ident(x.Name)
	case *ast.SelectorExpr:
		return e.selector(x)
	case *ast.IndexExpr:
		return e.index(x)
	case *ast.Interpolation:
		return e.interpolation(x)
	case *ast.UnaryExpr:
		v, err := e.eval(x.X)
		if err != nil {
			return nil, err
		}
		if b, ok := v.(bool); ok && x.Op == token.NOT {
			return !b, nil
		}
	case *ast.BinaryExpr:
		return e.binary(x)
	case *ast.CallExpr:
		return e.call(x)
	case *ast.StructLit:
		s := &fmStruct{vals: map[string]any{}}
		for _, d := range x.Elts {
			f, ok := d.(*ast.Field)
			if !ok {
				return nil, errDecline
			}
			name, _, err := ast.LabelName(f.Label)
			if err != nil {
				return nil, errDecline
			}
			v, err := e.eval(f.Value)
			if err != nil {
				return nil, err
			}
			s.keys = append(s.keys, name)
			s.vals[name] = v
		}
		return s, nil
	}
	return nil, errDecline
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

// ident is the value of a name: a key a for clause binds, fm, dir, a let
// or field of the definition, else a name of the package.
func (e *fmEnv) ident(name string) (any, error) {
	if k, ok := e.vars[name]; ok {
		return k, nil
	}
	switch name {
	case "fm":
		return e.fm, nil
	case "dir":
		return e.dir, nil
	}
	if v, ok := e.lets[name]; ok {
		return v, nil
	}
	if x, ok := e.p.decls[name]; ok {
		v, err := e.eval(x)
		if err != nil {
			return nil, err
		}
		e.lets[name] = v
		return v, nil
	}
	return e.p.constant(name)
}

// constant is the concrete value of the path of the package, asked of CUE
// once: a limit (#Limits.skill_name_chars).
func (p *fmProgram) constant(path string) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.consts[path]; ok {
		return v, nil
	}
	out := concrete(p.root.LookupPath(cue.ParsePath(path)))
	p.consts[path] = out
	if err, ok := out.(error); ok {
		return nil, err
	}
	return out, nil
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

// path is the dotted path a chain of selectors from a name spells, or ""
// when the chain starts from a name the run binds.
func (e *fmEnv) path(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.Ident:
		if _, ok := e.vars[x.Name]; ok || x.Name == "fm" || x.Name == "dir" || e.p.decls[x.Name] != nil {
			return ""
		}
		return x.Name
	case *ast.SelectorExpr:
		base := e.path(x.X)
		name, _, err := ast.LabelName(x.Sel)
		if base == "" || err != nil || !ast.IsValidIdent(name) {
			return ""
		}
		return base + "." + name
	}
	return ""
}

func (e *fmEnv) selector(x *ast.SelectorExpr) (any, error) {
	if p := e.path(x); p != "" {
		return e.p.constant(p)
	}
	base, err := e.eval(x.X)
	if err != nil {
		return nil, err
	}
	name, _, err := ast.LabelName(x.Sel)
	if err != nil {
		return nil, errDecline
	}
	return field(base, name)
}

// field is the field name of v: _|_ unless v is a mapping holding it.
func field(v any, name string) (any, error) {
	switch v := v.(type) {
	case *fmStruct:
		if f, ok := v.vals[name]; ok {
			return f, nil
		}
		return bottom{}, nil
	case bottom, string, opaque:
		return bottom{}, nil
	}
	return nil, errDecline
}

func (e *fmEnv) index(x *ast.IndexExpr) (any, error) {
	base, err := e.eval(x.X)
	if err != nil {
		return nil, err
	}
	i, err := e.eval(x.Index)
	if err != nil {
		return nil, err
	}
	k, ok := i.(string)
	if !ok {
		return nil, errDecline
	}
	return field(base, k)
}

func (e *fmEnv) interpolation(x *ast.Interpolation) (any, error) {
	var b strings.Builder
	for i, el := range x.Elts {
		if i%2 == 0 {
			lit, ok := el.(*ast.BasicLit)
			if !ok {
				return nil, errDecline
			}
			frag, ok := interpolationFragment(lit.Value, i == 0, i == len(x.Elts)-1)
			if !ok {
				return nil, errDecline
			}
			s, err := literal.Unquote(`"` + frag + `"`)
			if err != nil {
				return nil, errDecline
			}
			b.WriteString(s)
			continue
		}
		v, err := e.eval(el)
		if err != nil {
			return nil, err
		}
		switch v := v.(type) {
		case string:
			b.WriteString(v)
		case int64:
			b.WriteString(strconv.FormatInt(v, 10))
		default:
			return nil, errDecline
		}
	}
	return b.String(), nil
}

func (e *fmEnv) binary(x *ast.BinaryExpr) (any, error) {
	if x.Op == token.AND {
		return e.unify(x)
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
			v, err := e.eval(other)
			if err != nil {
				return nil, err
			}
			_, isBottom := v.(bottom)
			return isBottom == (x.Op == token.EQL), nil
		}
	}
	l, err := e.eval(x.X)
	if err != nil {
		return nil, err
	}
	r, err := e.eval(x.Y)
	if err != nil {
		return nil, err
	}
	switch l := l.(type) {
	case bool:
		if r, ok := r.(bool); ok {
			switch x.Op {
			case token.LOR:
				return l || r, nil
			case token.LAND:
				return l && r, nil
			case token.EQL:
				return l == r, nil
			case token.NEQ:
				return l != r, nil
			}
		}
	case string:
		if r, ok := r.(string); ok {
			switch x.Op {
			case token.EQL:
				return l == r, nil
			case token.NEQ:
				return l != r, nil
			case token.MAT, token.NMAT:
				re, err := e.p.regexp(r)
				if err != nil {
					return nil, err
				}
				return re.MatchString(l) == (x.Op == token.MAT), nil
			}
		}
	case int64:
		if r, ok := r.(int64); ok {
			switch x.Op {
			case token.EQL:
				return l == r, nil
			case token.NEQ:
				return l != r, nil
			case token.LSS:
				return l < r, nil
			case token.LEQ:
				return l <= r, nil
			case token.GTR:
				return l > r, nil
			case token.GEQ:
				return l >= r, nil
			}
		}
	}
	return nil, errDecline
}

func (p *fmProgram) regexp(pattern string) (*regexp.Regexp, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if re, ok := p.res[pattern]; ok {
		return re, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, errDecline
	}
	p.res[pattern] = re
	return re, nil
}

// unify is x.X & x.Y for the constraints the definitions unify front
// matter values with: string, strings.MaxRunes(n) and {[string]: string}.
func (e *fmEnv) unify(x *ast.BinaryExpr) (any, error) {
	v, err := e.eval(x.X)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(bottom); ok {
		return v, nil
	}
	switch c := x.Y.(type) {
	case *ast.Ident:
		if c.Name == "string" && e.path(c) == "string" {
			if _, ok := v.(string); ok {
				return v, nil
			}
			return bottom{}, nil
		}
	case *ast.CallExpr:
		if name, ok := e.builtin(c.Fun); ok && name == "strings.MaxRunes" && len(c.Args) == 1 {
			n, err := e.eval(c.Args[0])
			if err != nil {
				return nil, err
			}
			max, ok := n.(int64)
			if !ok {
				return nil, errDecline
			}
			if s, ok := v.(string); ok && int64(utf8.RuneCountInString(s)) <= max {
				return v, nil
			}
			return bottom{}, nil
		}
	case *ast.StructLit:
		if !stringMap(c) {
			break
		}
		s, ok := v.(*fmStruct)
		if !ok {
			return bottom{}, nil
		}
		for _, k := range s.keys {
			if _, ok := s.vals[k].(string); !ok {
				return bottom{}, nil
			}
		}
		return v, nil
	}
	return nil, errDecline
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

// builtin names the function fun calls, len or PACKAGE.NAME of an import,
// when no name the run binds hides it.
func (e *fmEnv) builtin(fun ast.Expr) (string, bool) {
	p := e.path(fun)
	return p, p != ""
}

func (e *fmEnv) call(x *ast.CallExpr) (any, error) {
	name, ok := e.builtin(x.Fun)
	if !ok || len(x.Args) != 1 {
		return nil, errDecline
	}
	arg, err := e.eval(x.Args[0])
	if err != nil {
		return nil, err
	}
	s, ok := arg.(string)
	if !ok {
		return nil, errDecline
	}
	switch name {
	case "len":
		return int64(len(s)), nil
	case "strings.TrimSpace":
		return strings.TrimSpace(s), nil
	}
	return nil, errDecline
}
