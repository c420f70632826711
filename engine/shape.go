package engine

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"

	defs "dalo/cue"
	"dalo/internal/suggest"
)

// checkShape unifies the manifest with #Manifest. Most manifests pass in one
// evaluation; only a failing one is walked field by field, so that each
// mistake is reported once, at its own key or value, with a message that
// says what was expected.
//
// What r cannot prove field by field, slow checks: r's workers share it,
// and the walk that finds each mistake asks CUE throughout, so it runs on
// rules of the worker's own, compiled only when a worker first meets a
// manifest the fast path does not prove.
func (r *Rules) checkShape(m *manifest, l *diagList, slow func() *Rules) bool {
	shape := shapeData(m.data)
	if r.acceptFields(r.manifestDef, shape) {
		return true
	}
	return slow().checkShapeSlow(shape, m, l)
}

// checkShapeSlow is checkShape of what the fast path did not prove: the
// walk that says where the shape breaks #Manifest, field by field, and,
// when it finds nothing, #Manifest unified with the whole shape. What
// the walk finds, CUE refuses whole (acceptAgrees holds it so): unifying
// a manifest whole first, only to learn that, was some 0.5 ms a broken
// package, most of checking a source where half the packages had a
// mistake (TestBrokenShapesNotUnifiedWhole).
func (r *Rules) checkShapeSlow(shape map[string]any, m *manifest, l *diagList) bool {
	before := len(l.diags)
	r.walkStruct(r.manifest, defs.Manifest, shape, "", m, l)
	if len(l.diags) > before {
		return false
	}
	shapesUnified.Add(1)
	data := r.ctx.Encode(cueData(shape))
	err := r.manifest.Unify(data).Validate(cue.Concrete(true), cue.Final())
	if err == nil {
		return true
	}
	// The walk found nothing CUE did: report CUE's own findings rather
	// than pass a manifest CUE refused.
	seen := map[string]bool{}
	for _, e := range errors.Errors(err) {
		path := cuePath(e.Path())
		if seen[path] {
			continue
		}
		seen[path] = true
		format, args := e.Msg()
		l.errorf("E023", m.at(path), path, "invalid value: %s", fmt.Sprintf(format, args...))
	}
	return false
}

// shapesUnified counts the manifests checkShapeSlow unified with
// #Manifest whole.
var shapesUnified atomic.Int64

// shapeData returns data with what providers.<name> holds left out: it is
// inert adapter-owned data, whose shape is only that each entry is a table
// (#Manifest). The reader already held it to the limits; encoding a
// megabyte of it for CUE would cost seconds and hundreds of megabytes.
// An entry that is not a table keeps its kind, for the message that
// refuses it.
func shapeData(data map[string]any) map[string]any {
	ps, ok := data["providers"].(map[string]any)
	if !ok {
		return data
	}
	out := make(map[string]any, len(data))
	for k, v := range data {
		out[k] = v
	}
	inert := make(map[string]any, len(ps))
	for k, v := range ps {
		switch v.(type) {
		case map[string]any:
			inert[k] = map[string]any{}
		case []any:
			inert[k] = []any{}
		default:
			inert[k] = v
		}
	}
	out["providers"] = inert
	return out
}

// cuePath writes CUE's path selectors as a field path: hook[0].effect.
func cuePath(sels []string) string {
	var b strings.Builder
	for _, s := range sels {
		if s != "" && s[0] >= '0' && s[0] <= '9' {
			fmt.Fprintf(&b, "[%s]", s)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// structFields lists the fields of a struct definition, cached by name.
func (r *Rules) structFields(def cue.Value, name string) map[string]fieldDef {
	fs, _ := r.structShape(def, name)
	return fs
}

// structShape is structFields and how many of the fields are required,
// looked up once per definition name.
func (r *Rules) structShape(def cue.Value, name string) (map[string]fieldDef, int) {
	if sf, ok := r.fields.Load(name); ok {
		sf := sf.(structFields)
		return sf.fields, sf.required
	}
	r.cueMu.Lock()
	defer r.cueMu.Unlock()
	if sf, ok := r.fields.Load(name); ok {
		sf := sf.(structFields)
		return sf.fields, sf.required
	}
	fs := make(map[string]fieldDef)
	required := 0
	it, err := def.Fields(cue.Optional(true))
	if err == nil {
		for it.Next() {
			sel := it.Selector()
			k := sel.Unquoted()
			v := it.Value()
			fd := r.defOfLocked(v, name+"."+k)
			fd.required = sel.ConstraintType() == cue.RequiredConstraint
			fs[k] = fd
			if fd.required {
				required++
			}
		}
	}
	r.fields.Store(name, structFields{fs, required})
	return fs, required
}

// structFields are the fields of a struct definition, by name, and how
// many of them are required.
type structFields struct {
	fields   map[string]fieldDef
	required int
}

func (r *Rules) walkStruct(def cue.Value, name string, data map[string]any, path string, m *manifest, l *diagList) {
	fields := r.structFields(def, name)
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var missing []string
	for k, fd := range fields {
		if _, ok := data[k]; !ok && fd.required {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	// A misspelt required field is one mistake: E020 at the key, naming
	// the field it resembles, and no E021 for that field besides.
	meant := map[string]bool{}
	for _, k := range keys {
		fp := joinPath(path, k)
		fd, ok := fields[k]
		if !ok {
			if def.Allows(cue.Str(k)) {
				// A pattern's field (an entry of providers): check it
				// against the pattern's constraint.
				if elem := def.LookupPath(cue.MakePath(cue.AnyString)); elem.Exists() {
					r.walkValue(elem, name+".*", data[k], fp, m, l)
				}
				continue
			}
			if near := nearestField(k, fields, data); near != "" {
				meant[near] = true
				l.errorf("E020", m.keyAt(fp), fp, "unknown field %s; did you mean %s?", quoteKey(k), near)
				continue
			}
			l.errorf("E020", m.keyAt(fp), fp, "unknown field %s; %s takes %s", quoteKey(k), l.container(path), knownFields(fields))
			continue
		}
		if r.acceptValue(fd, data[k]) {
			// What the fast path proves, CUE accepts: nothing to say of
			// it, and no question to ask CUE on the way (a manifest with
			// one unknown key in each table asked one of each scalar).
			continue
		}
		r.walkValue(fd.v, name+"."+k, data[k], fp, m, l)
	}
	for _, k := range missing {
		if meant[k] {
			continue
		}
		l.errorf("E021", m.at(path), joinPath(path, k), "missing required field %s in %s", k, l.container(path))
	}
}

// nearestField is the field of fields that the unknown key k was most
// likely meant to be, among those data does not already hold, or "".
func nearestField(k string, fields map[string]fieldDef, data map[string]any) string {
	names := make([]string, 0, len(fields))
	for f := range fields {
		if _, ok := data[f]; !ok {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	return suggest.Closest(k, names)
}

// valuesWalked counts the values walkValue looks at: a test holds the
// walk of a manifest whose every mistake is an unknown key to the tables
// that hold those keys and the lists they are in.
var valuesWalked atomic.Int64

func (r *Rules) walkValue(def cue.Value, name string, v any, path string, m *manifest, l *diagList) {
	valuesWalked.Add(1)
	switch v := v.(type) {
	case map[string]any:
		if def.IncompleteKind()&cue.StructKind != 0 {
			r.walkStruct(def, name, v, path, m, l)
			return
		}
	case []any:
		if def.IncompleteKind()&cue.ListKind != 0 {
			elem := r.element(def, name+"[]", cue.AnyIndex).v // looked up once a definition
			before := len(l.diags)
			for i, x := range v {
				r.walkValue(elem, name+"[]", x, indexPath(path, i), m, l)
			}
			if len(l.diags) == before {
				// Elements are fine; the list itself may break a constraint
				// such as its number of entries.
				if err := def.Unify(r.ctx.Encode(cueData(v))).Validate(cue.Concrete(true)); err != nil {
					// An entry twice is said at the second.
					if x, i, j, ok := repeated(def, v); ok {
						at := indexPath(path, j)
						l.errorf("E023", m.at(at), at, "%s is listed twice (entries %d and %d): list each once", listed(x), i, j)
						return
					}
					l.errorf("E023", m.at(path), path, "%s", listMessage(def, lastKey(path), len(v), err))
				}
			}
			return
		}
	}
	var f scalarFinding
	key := scalarKey{name, lastKey(path), v}
	cacheable := false
	switch v.(type) {
	case string, bool, int64, float64:
		cacheable = true
	}
	var x any
	ok := false
	if cacheable { // a table or an array is no map key
		x, ok = r.scalarFindings.Load(key)
	}
	if ok {
		f = x.(scalarFinding)
	} else {
		f = r.scalarFinding(def, name, key.key, v)
		if cacheable && r.scalarsKept.Add(1) <= maxScalarFindings {
			r.scalarFindings.Store(key, f)
		}
	}
	if f.code != "" {
		l.errorf(f.code, m.at(path), path, "%s", f.msg)
	}
}

// A scalarKey is what walkValue's finding about a value that is not a
// table or an array depends on: the definition's name, the field's key
// and the value. A generator's mistake is made in every hook it writes
// (subject = "tool" in each of 1,000): asking CUE for each, and listing
// and measuring the definition's values for the message, was some 60 us
// a finding (TestRepeatedMistakesAskedOnce).
type scalarKey struct {
	name, key string
	v         any
}

// A scalarFinding is walkValue's finding about a scalar: none when code
// is "".
type scalarFinding struct{ code, msg string }

// maxScalarFindings bounds Rules.scalarFindings: values are a source's
// own, and a million different ones need not be held.
const maxScalarFindings = 4096

// scalarsAsked counts the findings scalarFinding made: a test holds a
// mistake repeated in every hook to one; scalarsUnified those it asked
// CUE about.
var scalarsAsked, scalarsUnified atomic.Int64

// An enumSet is a definition that is a set of strings (#Effect), read
// once: a string is in it or not, and said so without asking CUE. A
// generator's mistakes, each its own (add_contxt17), asked CUE and listed
// the set twice for each, some 40 us a value, 49x the floor's CPU on
// packages of such hooks (TestEnumMistakesNotUnified).
type enumSet struct {
	members  map[string]bool
	literals []string // literals(def), which nearValue measures against
	expect   string   // expectation(def)
	code     string   // fieldCode(def, "E023")
}

// enumOf returns def, the definition name, as an enumSet, or nil when it
// is not a disjunction of strings (or one string) and nothing more.
func (r *Rules) enumOf(def cue.Value, name string) *enumSet {
	if e, ok := r.enums.Load(name); ok {
		return e.(*enumSet)
	}
	var e *enumSet
	if def.IncompleteKind() == cue.StringKind {
		if members, ok := stringSet(def); ok {
			e = &enumSet{members: members, literals: literals(def), expect: expectation(def), code: fieldCode(def, "E023")}
		}
	}
	r.enums.Store(name, e)
	return e
}

// stringSet returns the strings def is a disjunction of (or the string it
// is), as literals finds them, and false when def is anything else.
func stringSet(def cue.Value) (map[string]bool, bool) {
	op, args := def.Expr()
	if op == cue.SelectorOp {
		if root, p := def.ReferencePath(); root.Exists() && len(p.Selectors()) > 0 {
			return stringSet(root.LookupPath(p))
		}
	}
	if op != cue.OrOp {
		s, err := def.String()
		return map[string]bool{s: true}, err == nil && def.IsConcrete()
	}
	set := make(map[string]bool, len(args))
	for _, a := range args {
		s, err := a.String()
		if err != nil || !a.IsConcrete() {
			return nil, false
		}
		set[s] = true
	}
	return set, true
}

// scalarFinding is walkValue's finding about v, neither a table nor an
// array def, the definition name, takes, at a field whose key is key.
func (r *Rules) scalarFinding(def cue.Value, name, key string, v any) scalarFinding {
	scalarsAsked.Add(1)
	if s, ok := v.(string); ok {
		if e := r.enumOf(def, name); e != nil {
			if e.members[s] {
				return scalarFinding{}
			}
			near := ""
			if n := suggest.Closest(s, e.literals); n != "" {
				near = "; did you mean " + n + "?"
			}
			return scalarFinding{e.code, sprintf("invalid %s %s: expected %s%s", key, shortValue(v), e.expect, near)}
		}
	}
	var got cue.Value // v encoded, made only when CUE is asked
	encode := func() cue.Value {
		if !got.Exists() {
			got = r.ctx.Encode(cueData(v))
		}
		return got
	}
	kind, ok := scalarKind(v)
	if !ok {
		kind = encode().Kind()
	}
	w := r.wordsOf(def, name)
	if def.IncompleteKind()&kind == 0 {
		if w.code != "" {
			// A field with a code of its own (a schema_version) says the
			// same thing whatever the value is: one code, one wording.
			return scalarFinding{w.code, sprintf("invalid %s %s: expected %s", key, describeValue(v), w.expect)}
		}
		return scalarFinding{"E022", sprintf("%s must be %s, not %s %s", key, w.expect, article(kindOf(v)), kindOf(v))}
	}
	// The definition's syntax says, where it can, whether v passes
	// (leafProgram, held to CUE): a pattern's mistakes, each package its
	// own (env = ["$HOME"]), were each unified with the definition, under
	// the lock every worker's CUE takes.
	accepted, ok := runLeaf(r.leaf.of(def), v)
	if !ok {
		scalarsUnified.Add(1)
		accepted = def.Unify(encode()).Validate(cue.Concrete(true)) == nil
	}
	if !accepted {
		return scalarFinding{cmp.Or(w.code, "E023"), sprintf("invalid %s %s: expected %s%s", key, shortValue(v), w.expect, nearValue(w.literals, v))}
	}
	return scalarFinding{}
}

// scalarKind is the CUE kind of a string, an integer, a float or a
// boolean decoded from TOML, which Encode gives too: encoding each
// mistake only to read its kind was a third of a validation of 162,000.
func scalarKind(v any) (cue.Kind, bool) {
	switch v.(type) {
	case string:
		return cue.StringKind, true
	case int64:
		return cue.IntKind, true
	case float64:
		return cue.FloatKind, true
	case bool:
		return cue.BoolKind, true
	}
	return 0, false
}

// defWords is what a finding about a value says of the definition the
// value breaks, the same whatever the value: what it expects, the values
// it admits, for a "did you mean", and its code. Worked out for each
// finding, from the definition's syntax, they were most of a validation
// whose packages each wrote their own mistakes (env = ["$HOME", ...]).
type defWords struct {
	expect   string
	literals []string
	code     string // fieldCode(def, ""): the definition's own, or ""
}

// defsWorded counts the definitions wordsOf worked out: a test holds a
// validation to one a definition.
var defsWorded atomic.Int64

// wordsOf returns the words of def, the definition name, worked out once.
func (r *Rules) wordsOf(def cue.Value, name string) *defWords {
	if w, ok := r.words.Load(name); ok {
		return w.(*defWords)
	}
	defsWorded.Add(1)
	w, _ := r.words.LoadOrStore(name, &defWords{expect: expectation(def), literals: literals(def), code: fieldCode(def, "")})
	return w.(*defWords)
}

// nearValue suggests, for a string a definition of these values does not
// admit, the value that the string resembles (effect = "add_contxt": did
// you mean add_context?), or "".
func nearValue(values []string, v any) string {
	str, ok := v.(string)
	if !ok {
		return ""
	}
	if near := suggest.Closest(str, values); near != "" {
		return "; did you mean " + near + "?"
	}
	return ""
}

func fieldCode(def cue.Value, code string) string {
	if a := def.Attribute("code"); a.Err() == nil && a.Contents() != "" {
		return a.Contents()
	}
	return code
}

// expectation says in words what def admits: its @expect attribute, the
// list of values of a disjunction, or its kind.
func expectation(def cue.Value) string {
	if s, ok := expectAttr(def); ok {
		return s
	}
	if vals := literals(def); len(vals) > 0 {
		if len(vals) == 1 {
			return vals[0]
		}
		return "one of " + strings.Join(vals, ", ")
	}
	k := def.IncompleteKind()
	switch {
	case k == cue.StringKind:
		if re := pattern(def); re != "" {
			return "a string matching " + re
		}
		return "a string"
	case k == cue.IntKind:
		return "an integer"
	case k == cue.BoolKind:
		return "a boolean"
	case k == cue.ListKind:
		return "an array"
	case k == cue.StructKind:
		return "a table"
	}
	return k.String()
}

// expectAttr is the @expect attribute of def, expanded: the field's own,
// or else, for a value that only names a definition (an array's element,
// [...#ProviderName]), that definition's.
func expectAttr(def cue.Value) (string, bool) {
	a := def.Attribute("expect")
	if a.Err() != nil || a.Contents() == "" {
		root, p := def.ReferencePath()
		if len(p.Selectors()) == 0 {
			return "", false
		}
		if a = root.LookupPath(p).Attribute("expect"); a.Err() != nil || a.Contents() == "" {
			return "", false
		}
	}
	// The attribute holds a quoted string: say what it means, not how it
	// is written.
	if s, err := a.String(0); err == nil {
		return expandExpect(s), true
	}
	return expandExpect(a.Contents()), true
}

// pattern returns the regular expression a string constraint requires, or
// "" if it has none: a string refused without an @expect says what it must
// match rather than only "a string".
func pattern(def cue.Value) string {
	op, args := def.Expr()
	switch op {
	case cue.RegexMatchOp:
		if len(args) == 1 {
			if s, err := args[0].String(); err == nil {
				return s
			}
		}
	case cue.AndOp:
		for _, a := range args {
			if re := pattern(a); re != "" {
				return re
			}
		}
	}
	return ""
}

// literals returns the concrete alternatives of a disjunction of literals.
func literals(def cue.Value) []string {
	op, args := def.Expr()
	if op == cue.SelectorOp {
		// A named set such as #Subject: list the set it names.
		if root, p := def.ReferencePath(); root.Exists() && len(p.Selectors()) > 0 {
			return literals(root.LookupPath(p))
		}
	}
	if op != cue.OrOp {
		if def.IsConcrete() && def.Kind()&(cue.StringKind|cue.IntKind|cue.BoolKind) != 0 {
			return []string{fmt.Sprint(def)}
		}
		return nil
	}
	var out []string
	for _, a := range args {
		if !a.IsConcrete() {
			return nil
		}
		s, err := a.String()
		if err != nil {
			out = append(out, fmt.Sprint(a))
			continue
		}
		out = append(out, s)
	}
	return out
}

// listCall returns the arguments of the list.NAME(...) validator that def,
// the definition of a list, is unified with, read from the value rather
// than from the text of CUE's error: false when def has none.
func listCall(def cue.Value, name string) ([]cue.Value, bool) {
	op, args := def.Expr()
	if op != cue.AndOp {
		args = []cue.Value{def}
	}
	for _, a := range args {
		op, call := a.Expr()
		if op != cue.CallOp || len(call) == 0 {
			continue
		}
		// call[0] is the function, a selector of its package.
		if op, fn := call[0].Expr(); op != cue.SelectorOp || len(fn) != 2 {
			continue
		} else if n, err := fn[1].String(); err != nil || n != name {
			continue
		}
		return call[1:], true
	}
	return nil, false
}

// maxItems returns N of the list.MaxItems(N) that def is unified with.
func maxItems(def cue.Value) (int64, bool) {
	args, ok := listCall(def, "MaxItems")
	if !ok || len(args) != 1 {
		return 0, false
	}
	n, err := args[0].Int64()
	return n, err == nil
}

// repeated returns the first entry of v equal to an earlier one, and
// where both are, when def is unified with list.UniqueItems(): the
// entry twice is said at the second.
func repeated(def cue.Value, v []any) (x any, first, second int, ok bool) {
	if _, ok := listCall(def, "UniqueItems"); !ok {
		return nil, 0, 0, false
	}
	return firstRepeat(v)
}

// firstRepeat returns the first scalar entry of v equal to an earlier
// one, and where both are; tables and arrays are not compared.
func firstRepeat(v []any) (x any, first, second int, ok bool) {
	seen := make(map[any]int, len(v))
	for j, x := range v {
		switch x.(type) {
		case string, int64, float64, bool:
		default:
			continue
		}
		if i, dup := seen[x]; dup {
			return x, i, j, true
		}
		seen[x] = j
	}
	return nil, 0, 0, false
}

// listed is an entry of a list as CUE writes it in its messages.
func listed(x any) string {
	if s, ok := x.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(x)
}

// listMessage explains why a list whose elements are fine was refused,
// without repeating the whole list back.
func listMessage(def cue.Value, name string, n int, err error) string {
	if max, ok := maxItems(def); ok && int64(n) > max {
		return fmt.Sprintf("array has %d entries, more than the %d allowed", n, max)
	}
	if expect, ok := expectAttr(def); ok {
		return fmt.Sprintf("invalid %s (%d entries): expected %s", name, n, expect)
	}
	format, args := errors.Errors(err)[0].Msg()
	msg := fmt.Sprintf(format, args...)
	if i := strings.Index(msg, "(does not satisfy"); i >= 0 {
		msg = strings.Trim(msg[i:], "()")
	}
	return fmt.Sprintf("array of %d entries refused: %s", n, msg)
}

func lastKey(path string) string {
	for strings.HasSuffix(path, "]") {
		path = path[:strings.LastIndexByte(path, '[')]
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// container names the table at path for a message: its field path, or
// for the document itself what the document is (the manifest).
func (l *diagList) container(path string) string {
	switch {
	case path != "":
		return path
	case l.doc != "":
		return l.doc
	}
	return "the manifest"
}

func knownFields(fields map[string]fieldDef) string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func quoteKey(k string) string {
	if isBareKey(k) {
		return k
	}
	return string(appendQuote(nil, k))
}

func article(kind string) string {
	switch kind[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an"
	}
	return "a"
}

// describeValue is shortValue followed by the value's kind, or the kind
// alone for a table or an array: `"1" (a string)`, `(a table)`.
func describeValue(v any) string {
	k := kindOf(v)
	switch v.(type) {
	case map[string]any, []any:
		return "(" + article(k) + " " + k + ")"
	case float64:
		if f := v.(float64); f == math.Trunc(f) && math.Abs(f) < 1e15 {
			return fmt.Sprintf("%.1f (a float)", f) // 1.0, not 1
		}
	}
	return shortValue(v) + " (" + article(k) + " " + k + ")"
}

func shortValue(v any) string {
	switch v := v.(type) {
	case string:
		if len(v) > 60 {
			v = v[:57] + "..."
		}
		return string(appendQuote(nil, v))
	}
	return fmt.Sprint(v)
}

// acceptStruct reports whether data passes def, the struct definition
// name, proved field by field: no field def does not take, every required
// one there, and each value passing its field's definition, asked of CUE
// one scalar at a time (acceptLeaf) and one list length at a time
// (acceptLen). Most of a manifest's scalars recur (a runtime, an effect, a
// requirement, a timeout), and CUE is asked about each distinct one once
// per process: unifying whole manifests with #Manifest was two thirds of
// validating a large source. It never refuses: false only means not
// proved, and checkShape then unifies the whole manifest, which gives the
// diagnostics. What CUE would refuse it must not accept; a test and
// FuzzManifest hold it to that.
func (r *Rules) acceptStruct(def cue.Value, name string, data map[string]any) bool {
	return r.acceptFields(r.defOf(def, name), data)
}

// defOf is def, named name, with what the fast path reads of it.
func (r *Rules) defOf(def cue.Value, name string) fieldDef {
	r.cueMu.Lock()
	defer r.cueMu.Unlock()
	return r.defOfLocked(def, name)
}

func (r *Rules) defOfLocked(def cue.Value, name string) fieldDef {
	return fieldDef{v: def, name: name, leaf: r.leaf.of(def), kind: def.IncompleteKind(), exists: def.Exists()}
}

// acceptFields is acceptStruct of the definition def.
func (r *Rules) acceptFields(def fieldDef, data map[string]any) bool {
	if def.kind != cue.StructKind {
		return false // a struct and something else: not walked here
	}
	fields, required := r.structShape(def.v, def.name)
	present := 0 // required fields data holds
	for k, v := range data {
		fd, ok := fields[k]
		if !ok {
			r.cueMu.Lock()
			allowed := def.v.Allows(cue.Str(k))
			r.cueMu.Unlock()
			if !allowed {
				return false
			}
			elem := r.element(def.v, def.name+".*", cue.AnyString)
			if !elem.exists || !r.acceptValue(elem, v) {
				return false
			}
			continue
		}
		if fd.required {
			present++
		}
		if !r.acceptValue(fd, v) {
			return false
		}
	}
	// Every required field is there when as many are there as def has:
	// counted, not looked up one by one in data, which was an eighth of
	// the walk.
	return present == required
}

func (r *Rules) acceptValue(fd fieldDef, v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return r.acceptFields(fd, v)
	case []any:
		if fd.kind != cue.ListKind {
			return false
		}
		elem := r.element(fd.v, fd.name+"[]", cue.AnyIndex)
		if !elem.exists {
			return false
		}
		for _, x := range v {
			if !r.acceptValue(elem, x) {
				return false
			}
		}
		return r.acceptLen(fd.v, fd.name, len(v)) && r.acceptList(fd.v, fd.name, v)
	case string, int64, float64, bool:
		return r.acceptLeaf(fd, v)
	}
	return false // a datetime, or what TOML cannot hold
}

// element returns the constraint def puts on any field or element (sel is
// cue.AnyString or cue.AnyIndex), named name, looked up once per
// definition name: looking it up evaluates, and a manifest has a list in
// every tool.
func (r *Rules) element(def cue.Value, name string, sel cue.Selector) fieldDef {
	if e, ok := r.elems.Load(name); ok {
		return e.(fieldDef)
	}
	r.cueMu.Lock()
	defer r.cueMu.Unlock()
	if e, ok := r.elems.Load(name); ok {
		return e.(fieldDef)
	}
	e := r.defOfLocked(def.LookupPath(cue.MakePath(sel)), name)
	r.elems.Store(name, e)
	return e
}

// acceptLeaf reports whether the scalar v passes fd: its compiled program
// answers (leafprog.go), else CUE is asked, its answer remembered. The
// program's answers are not: it answers in less time than remembering
// takes, and most of a source's scalars (names, ids, descriptions) are
// each met once.
func (r *Rules) acceptLeaf(fd fieldDef, v any) bool {
	if accepted, ok := runLeaf(fd.leaf, v); ok {
		return accepted
	}
	ask := func() bool {
		leafUnified.Add(1)
		r.cueMu.Lock()
		defer r.cueMu.Unlock()
		return fd.v.Unify(r.ctx.Encode(v)).Validate(cue.Concrete(true)) == nil
	}
	var buf [128]byte
	key := leafKey(buf[:0], fd.name, v)
	if len(key) > 256 {
		// A long text is seldom asked about twice: not remembered.
		return ask()
	}
	return r.memo.verdictOf(key, ask)
}

// leafKey appends to b the key acceptLeaf remembers its answer under,
// as fmt's "leaf|%s|%T|%v" writes it (a cache keeps the answers under
// those keys), without fmt for the scalars manifests hold most: building
// each key with fmt was a third of the shape walk of a package.
func leafKey(b []byte, name string, v any) []byte {
	b = append(b, "leaf|"...)
	b = append(b, name...)
	switch v := v.(type) {
	case string:
		return append(append(b, "|string|"...), v...)
	case int64:
		return strconv.AppendInt(append(b, "|int64|"...), v, 10)
	case bool:
		return strconv.AppendBool(append(b, "|bool|"...), v)
	}
	return fmt.Appendf(b[:0], "leaf|%s|%T|%v", name, v, v)
}

// acceptList asks CUE whether def, the list definition name, admits the
// list v whole, when its length (acceptLen) and its entries do not prove
// it: a list of scalars with an entry twice, which list.UniqueItems
// refuses. The rules constrain a list only by its length and by unique
// entries; asking CUE about every list whole made validating a large
// source six times slower. A list whose definition asks for no unique
// entries (listRule) is not asked about at all: one with a flag given
// twice (argv = ["--include", "a", "--include", "b"]) went to CUE,
// whose answer, yes, is never remembered. FuzzManifest holds the fast
// path to CUE.
func (r *Rules) acceptList(def cue.Value, name string, v []any) bool {
	if _, _, _, twice := firstRepeat(v); !twice {
		return true
	}
	if lr := r.listRule(def, name); lr.known && !lr.unique {
		return true
	}
	listsUnified.Add(1)
	r.cueMu.Lock()
	defer r.cueMu.Unlock()
	return def.Unify(r.ctx.Encode(cueData(v))).Validate(cue.Concrete(true)) == nil
}

// listsUnified counts the lists acceptList and acceptLen asked CUE about:
// a test holds lists whose rules are read from their syntax to none.
var listsUnified atomic.Int64

// acceptLen asks CUE whether def, the list definition name, admits n
// elements (list.MaxItems), with elements it does not look at, unless
// listRule read the bounds from def's syntax. Asking compiled a list of n
// elements for each length met: a source whose tools list a few hundred
// files each spent a sixth of its validation here.
func (r *Rules) acceptLen(def cue.Value, name string, n int) bool {
	if lr := r.listRule(def, name); lr.known {
		return n >= lr.min && (lr.max < 0 || n <= lr.max)
	}
	var buf [128]byte
	key := strconv.AppendInt(append(append(append(buf[:0], "len|"...), name...), '|'), int64(n), 10)
	return r.memo.verdictOf(key, func() bool {
		listsUnified.Add(1)
		r.cueMu.Lock()
		defer r.cueMu.Unlock()
		list := r.ctx.CompileString("[" + strings.Repeat("_, ", n) + "]")
		return def.Unify(list).Validate() == nil
	})
}

// A listRule is what a list definition asks of a list beyond its
// elements, read from its syntax: at least min elements and at most max
// (-1: no bound), and whether each must be unique. known is false when
// the syntax is other than a conjunction of one open list literal
// ([...#X], [#X, ...#X]) and calls of list.MinItems and list.MaxItems
// (of an integer, or of a name of the package such as
// #Limits.array_entries) and list.UniqueItems(); CUE is asked then.
// TestListRulesAgree holds what it reads to CUE's answers.
type listRule struct {
	min, max int
	unique   bool
	known    bool
}

// listRule returns def's listRule, read once per definition name.
func (r *Rules) listRule(def cue.Value, name string) listRule {
	if lr, ok := r.lists.Load(name); ok {
		return lr.(listRule)
	}
	r.cueMu.Lock()
	lr := r.readListRule(def)
	r.cueMu.Unlock()
	r.lists.Store(name, lr)
	return lr
}

func (r *Rules) readListRule(def cue.Value) listRule {
	f, ok := def.Source().(*ast.Field)
	if !ok || f.Value == nil {
		return listRule{}
	}
	lr := listRule{max: -1, known: true}
	lists := 0
	var read func(x ast.Expr) bool
	read = func(x ast.Expr) bool {
		switch x := x.(type) {
		case *ast.BinaryExpr:
			return x.Op == token.AND && read(x.X) && read(x.Y)
		case *ast.ParenExpr:
			return read(x.X)
		case *ast.ListLit:
			lists++
			n := len(x.Elts)
			if n == 0 {
				return false
			}
			if _, open := x.Elts[n-1].(*ast.Ellipsis); !open {
				return false // a list of fixed length: left to CUE
			}
			lr.min = max(lr.min, n-1)
			return true
		case *ast.CallExpr:
			sel, ok := x.Fun.(*ast.SelectorExpr)
			if !ok {
				return false
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || pkg.Name != "list" {
				return false
			}
			if spec, imported := pkg.Node.(*ast.ImportSpec); !imported || spec.Path == nil || spec.Path.Value != `"list"` {
				return false // not CUE's package list
			}
			fn, _, _ := ast.LabelName(sel.Sel)
			switch {
			case fn == "UniqueItems" && len(x.Args) == 0:
				lr.unique = true
				return true
			case (fn == "MaxItems" || fn == "MinItems") && len(x.Args) == 1:
				n, ok := r.intOf(x.Args[0])
				if !ok || n < 0 {
					return false
				}
				if fn == "MinItems" {
					lr.min = max(lr.min, n)
				} else if lr.max < 0 || n < lr.max {
					lr.max = n
				}
				return true
			}
		}
		return false
	}
	if !read(f.Value) || lists != 1 {
		return listRule{}
	}
	return lr
}

// intOf is the integer x, a literal or a name of the package's (such as
// #Limits.array_entries) that CUE evaluates to one.
func (r *Rules) intOf(x ast.Expr) (int, bool) {
	var path []string
	for {
		switch e := x.(type) {
		case *ast.BasicLit:
			if len(path) > 0 || e.Kind != token.INT {
				return 0, false
			}
			n, err := strconv.Atoi(e.Value)
			return n, err == nil
		case *ast.SelectorExpr:
			name, _, err := ast.LabelName(e.Sel)
			if err != nil {
				return 0, false
			}
			path = append([]string{name}, path...)
			x = e.X
			continue
		case *ast.Ident:
			if len(e.Name) < 2 || e.Name[0] != '#' {
				return 0, false // not a definition of the package's
			}
			sels := []cue.Selector{cue.Def(e.Name)}
			for _, p := range path {
				sels = append(sels, cue.Str(p))
			}
			n, err := r.root.LookupPath(cue.MakePath(sels...)).Int64()
			return int(n), err == nil
		}
		return 0, false
	}
}
