package engine

import (
	"regexp"
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

// A leafProgram answers acceptLeaf's question, whether a scalar passes a
// field's definition, from the definition's CUE syntax: the definitions of
// a manifest's scalars are conjunctions and disjunctions of a type,
// literals, =~ patterns, bounds and strings.MaxRunes, over names of the
// package (#Name: #Str & =~"^[a-z0-9]+(-[a-z0-9]+)*$" & ...). Unifying
// one value with its field's definition cost CUE some 15 µs, a fifth of a
// cold validation of packages whose names, ids and references differ, as
// they do in any real source; the program reads the same syntax in a
// fraction of it, and the rule stays where it is stated, in cue/.
//
// It declines whatever else it meets (another operator, a builtin other
// than strings.MaxRunes and strings.MinRunes, a default, a name it cannot
// place, a value that is not a string, an integer or a boolean, a value
// of another type than an operator takes), and acceptLeaf asks CUE.
// TestLeafProgramAgrees and FuzzLeafProgram hold it to CUE.
type leafProgram struct {
	root cue.Value

	mu     sync.Mutex
	consts map[string]any        // concrete names of the package, by path
	syntax map[string]*ast.Field // declarations of the package's names (nil: none)
	res    patterns

	// fns holds each definition's compiled check (leafFn) by its syntax,
	// a nil one for a definition the program declines whatever the value.
	fns sync.Map // ast.Expr → leafFn
}

func newLeafProgram(root cue.Value) *leafProgram {
	return &leafProgram{root: root, consts: map[string]any{}, syntax: map[string]*ast.Field{}}
}

// leafUnified counts the scalars acceptLeaf asked CUE about: a test holds
// a generated source to none.
var leafUnified atomic.Int64

// A leafFn is a definition's syntax compiled: whether v passes it, or
// errDecline when the program cannot say for v (an operator of another
// type than v's). Everything that does not depend on v (the names the
// syntax refers to, their constants, literals, patterns) is settled when
// it is compiled: interpreting the syntax anew for every scalar cost more
// than the answer.
type leafFn func(v any) (bool, error)

// accepts reports whether v passes def, the field whose definition's
// syntax is read; ok is false when the program declines.
func (p *leafProgram) accepts(def cue.Value, v any) (accepted, ok bool) {
	return runLeaf(p.of(def), v)
}

// runLeaf runs fn on v: whether v passes, and false when fn is nil or
// declines. Only a string, an integer or a boolean is run.
func runLeaf(fn leafFn, v any) (accepted, ok bool) {
	switch v.(type) {
	case string, int64, bool:
	default:
		return false, false
	}
	if fn == nil {
		return false, false
	}
	a, err := fn(v)
	if err != nil {
		return false, false
	}
	return a, true
}

// of is the compiled check of def, a field's definition or a list's
// elements' (the expression after ...), nil when the program declines
// whatever the value.
func (p *leafProgram) of(def cue.Value) leafFn {
	var x ast.Expr
	switch src := def.Source().(type) {
	case *ast.Field:
		x = src.Value
	case ast.Expr:
		x = src
	}
	if x == nil {
		return nil
	}
	if fn, ok := p.fns.Load(x); ok {
		return fn.(leafFn)
	}
	fn, err := p.compile(x, 0)
	if err != nil {
		fn = oneOf(def)
	}
	p.fns.Store(x, fn)
	return fn
}

// oneOf is the check of a definition CUE evaluates to a disjunction of
// concrete strings, integers or booleans, whatever its syntax (or() of a
// comprehension over #Runtimes): v passes when it is one of them. nil
// when def is anything else.
func oneOf(def cue.Value) leafFn {
	op, args := def.Expr()
	if op != cue.OrOp {
		return nil
	}
	set := make(map[any]bool, len(args))
	for _, a := range args {
		c := concrete(a)
		if a.IncompleteKind() == cue.BoolKind {
			if b, err := a.Bool(); err == nil {
				c = b
			}
		}
		if _, bad := c.(error); bad {
			return nil
		}
		set[c] = true
	}
	return func(v any) (bool, error) { return set[v], nil }
}

// compile compiles the constraint x. depth bounds the names followed. A
// construct it cannot run fails the whole compilation: the interpreter
// it replaces ran every part of a definition (both sides of & and |), so
// such a part declined for every value.
func (p *leafProgram) compile(x ast.Expr, depth int) (leafFn, error) {
	if depth > 16 {
		return nil, errDecline
	}
	switch x := x.(type) {
	case *ast.ParenExpr:
		return p.compile(x.X, depth)
	case *ast.BinaryExpr:
		if x.Op != token.AND && x.Op != token.OR {
			break
		}
		// Both sides are run, so that a side the program cannot run for
		// v declines whatever the other says.
		l, err := p.compile(x.X, depth)
		if err != nil {
			return nil, err
		}
		r, err := p.compile(x.Y, depth)
		if err != nil {
			return nil, err
		}
		and := x.Op == token.AND
		return func(v any) (bool, error) {
			a, err := l(v)
			if err != nil {
				return false, err
			}
			b, err := r(v)
			if err != nil {
				return false, err
			}
			if and {
				return a && b, nil
			}
			return a || b, nil
		}, nil
	case *ast.BasicLit:
		lit, err := basicLit(x)
		if err != nil {
			return nil, err
		}
		return func(v any) (bool, error) {
			if sameType(lit, v) {
				return lit == v, nil
			}
			return false, errDecline
		}, nil
	case *ast.Ident:
		return p.ident(x, depth)
	case *ast.UnaryExpr:
		return p.unary(x)
	case *ast.CallExpr:
		return p.call(x)
	}
	return nil, errDecline
}

// sameType reports whether a and b are both strings, both integers or
// both booleans: the program compares nothing else.
func sameType(a, b any) bool {
	switch a.(type) {
	case string:
		_, ok := b.(string)
		return ok
	case int64:
		_, ok := b.(int64)
		return ok
	case bool:
		_, ok := b.(bool)
		return ok
	}
	return false
}

// ident is a type (string, int, bool) or a definition of the package,
// whose syntax is compiled in turn.
func (p *leafProgram) ident(x *ast.Ident, depth int) (leafFn, error) {
	decl, err := p.declaration(x)
	if err != nil {
		return nil, err
	}
	if decl != nil {
		return p.compile(decl, depth+1)
	}
	switch x.Name {
	case "string":
		return func(v any) (bool, error) {
			_, ok := v.(string)
			return ok, nil
		}, nil
	case "int":
		return func(v any) (bool, error) {
			_, ok := v.(int64)
			return ok, nil
		}, nil
	case "bool":
		return func(v any) (bool, error) {
			_, ok := v.(bool)
			return ok, nil
		}, nil
	}
	return nil, errDecline
}

// declaration returns the syntax of the definition of the package x names,
// nil for a predeclared type that no name of the package hides, or
// errDecline for a name it cannot place: one bound inside a definition, a
// hidden one, or a definition stated in more than one place.
func (p *leafProgram) declaration(x *ast.Ident) (ast.Expr, error) {
	if x.Name == "" || x.Name[0] == '_' {
		return nil, errDecline
	}
	p.mu.Lock()
	f, known := p.syntax[x.Name]
	if !known {
		f = nil
		if v := p.root.LookupPath(cue.MakePath(selector(x.Name))); v.Exists() {
			f, _ = v.Source().(*ast.Field)
			if f == nil || f.Value == nil {
				f = &ast.Field{} // exists, but not as one field: declined
			}
		}
		p.syntax[x.Name] = f
	}
	p.mu.Unlock()
	switch {
	case f == nil && x.Node == nil:
		return nil, nil // predeclared
	case f == nil || f.Value == nil:
		return nil, errDecline
	case x.Node != nil && x.Node != ast.Node(f) && x.Node != ast.Node(f.Value):
		return nil, errDecline // bound elsewhere than the package
	}
	return f.Value, nil
}

// selector is the selector of a name of the package: a definition
// (#Name), a hidden name or a regular field.
func selector(name string) cue.Selector {
	if len(name) > 0 && name[0] == '#' {
		return cue.Def(name)
	}
	return cue.Str(name)
}

func (p *leafProgram) unary(x *ast.UnaryExpr) (leafFn, error) {
	operand, err := p.operand(x.X)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case token.MAT, token.NMAT:
		pat, ok := operand.(string)
		if !ok {
			return nil, errDecline
		}
		re, err := p.res.compile(pat)
		if err != nil {
			return nil, err
		}
		match := x.Op == token.MAT
		return func(v any) (bool, error) {
			s, ok := v.(string)
			if !ok {
				return false, errDecline
			}
			return re.MatchString(s) == match, nil
		}, nil
	case token.GEQ, token.LEQ, token.GTR, token.LSS:
		b, ok := operand.(int64)
		if !ok {
			return nil, errDecline
		}
		op := x.Op
		return func(v any) (bool, error) {
			n, ok := v.(int64)
			if !ok {
				return false, errDecline
			}
			switch op {
			case token.GEQ:
				return n >= b, nil
			case token.LEQ:
				return n <= b, nil
			case token.GTR:
				return n > b, nil
			}
			return n < b, nil
		}, nil
	}
	return nil, errDecline
}

// call compiles strings.MaxRunes(n) and strings.MinRunes(n), run on a
// string.
func (p *leafProgram) call(x *ast.CallExpr) (leafFn, error) {
	fun, ok := x.Fun.(*ast.SelectorExpr)
	if !ok || len(x.Args) != 1 {
		return nil, errDecline
	}
	pkg, ok := fun.X.(*ast.Ident)
	if !ok || pkg.Name != "strings" {
		return nil, errDecline
	}
	if spec, ok := pkg.Node.(*ast.ImportSpec); !ok || spec.Path == nil || spec.Path.Value != `"strings"` {
		return nil, errDecline
	}
	name, _, err := ast.LabelName(fun.Sel)
	if err != nil {
		return nil, errDecline
	}
	arg, err := p.operand(x.Args[0])
	if err != nil {
		return nil, err
	}
	n, ok := arg.(int64)
	if !ok || name != "MaxRunes" && name != "MinRunes" {
		return nil, errDecline
	}
	most := name == "MaxRunes"
	return func(v any) (bool, error) {
		s, ok := v.(string)
		if !ok {
			return false, errDecline
		}
		if most {
			return runesAtMost(s, n), nil
		}
		return !runesAtMost(s, n-1), nil
	}, nil
}

// runesAtMost reports whether s holds at most n runes, as
// utf8.RuneCountInString counts them (an invalid byte one), looking no
// further than its (n+1)th: a description pasted as one line of 20 KB,
// held to 1,024 characters, cost a count of every one of its runes.
func runesAtMost(s string, n int64) bool {
	if int64(len(s)) <= n {
		return true // no more runes than bytes
	}
	if n < 0 {
		return false
	}
	count := int64(0)
	for i := 0; i < len(s); count++ {
		if count == n {
			return false // a rune more at i
		}
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return true
}

// operand is the concrete value of an operator's or a builtin's argument:
// a literal, an interpolation of such values, or a concrete name of the
// package (#nonBlank, #Limits.id_chars).
func (p *leafProgram) operand(x ast.Expr) (any, error) {
	switch x := x.(type) {
	case *ast.ParenExpr:
		return p.operand(x.X)
	case *ast.BasicLit:
		return basicLit(x)
	case *ast.Interpolation:
		return p.interpolation(x)
	case *ast.Ident, *ast.SelectorExpr:
		path, root := namePath(x)
		if path == "" {
			return nil, errDecline
		}
		if _, err := p.declaration(root); err != nil {
			return nil, err
		}
		return p.constant(path)
	}
	return nil, errDecline
}

// namePath is the dotted path a chain of selectors from a name spells, and
// the name; "" when it is not one.
func namePath(x ast.Expr) (string, *ast.Ident) {
	switch x := x.(type) {
	case *ast.Ident:
		return x.Name, x
	case *ast.SelectorExpr:
		base, root := namePath(x.X)
		name, _, err := ast.LabelName(x.Sel)
		if base == "" || err != nil || !ast.IsValidIdent(name) {
			return "", nil
		}
		return base + "." + name, root
	}
	return "", nil
}

// constant is the concrete string or integer at path in the package,
// asked of CUE once.
func (p *leafProgram) constant(path string) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.consts[path]; ok {
		if err, bad := v.(error); bad {
			return nil, err
		}
		return v, nil
	}
	out := concrete(p.root.LookupPath(cue.ParsePath(path)))
	p.consts[path] = out
	if err, bad := out.(error); bad {
		return nil, err
	}
	return out, nil
}

func (p *leafProgram) interpolation(x *ast.Interpolation) (any, error) {
	var b []byte
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
			b = append(b, s...)
			continue
		}
		v, err := p.operand(el)
		if err != nil {
			return nil, err
		}
		switch v := v.(type) {
		case string:
			b = append(b, v...)
		case int64:
			b = strconv.AppendInt(b, v, 10)
		default:
			return nil, errDecline
		}
	}
	return string(b), nil
}

// interpolationFragment is the text of one literal part of a
// single-line "..." interpolation, without its delimiters.
func interpolationFragment(frag string, first, last bool) (string, bool) {
	var ok bool
	if first {
		frag, ok = strings.CutPrefix(frag, `"`)
	} else {
		frag, ok = strings.CutPrefix(frag, ")")
	}
	if !ok {
		return "", false
	}
	if last {
		frag, ok = strings.CutSuffix(frag, `"`)
	} else {
		frag, ok = strings.CutSuffix(frag, `\(`)
	}
	if !ok || strings.HasPrefix(frag, `""`) {
		return "", false
	}
	return frag, true
}

// patterns compiles each regular expression once, for the programs that
// meet the same pattern again (leafProgram, fmProgram).
type patterns struct {
	mu  sync.Mutex
	res map[string]*matcher
}

// compile is pattern compiled, or errDecline when it does not compile.
func (c *patterns) compile(pat string) (*matcher, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.res[pat]; ok {
		return p, nil
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, errDecline
	}
	if c.res == nil {
		c.res = map[string]*matcher{}
	}
	p := &matcher{re: re, dfa: newASCIIDFA(pat)}
	c.res[pat] = p
	return p, nil
}
