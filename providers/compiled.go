package providers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/format"
	"io/fs"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cuelang.org/go/cue"

	defs "dalo/cue"
)

// Refresh compiled_tables.go after changing a table or the rules; the
// test TestCompiledIsCurrent fails until it is refreshed. The generator
// is built without it (tag dalo_nocompiled), so that a stale file that no
// longer compiles cannot keep it from being written anew.
//
//go:generate go run -tags dalo_nocompiled ./gen

// compiledTables, declared in compiled_tables.go, is what Compile wrote:
// Load takes it instead of evaluating CUE, which costs tens of
// milliseconds per process. It is Go, not data to decode: decoding the
// same from JSON was 7 ms of every dalo command. In the generator's build
// (dalo_nocompiled) it is nil.

// RefreshCommand is the command that rewrites compiled_tables.go.
const RefreshCommand = "go generate ./providers"

// CompiledFile is the file Compile's output goes to.
const CompiledFile = "compiled_tables.go"

// compiled is the tables compiled ahead of time.
type compiled struct {
	Note string `json:"note"`
	// Domain orders the answers of each (subject, phase, effect).
	Domain domain          `json:"domain"`
	Tables []compiledTable `json:"tables"`

	byKey map[string]*compiledTable // by name@version, once loaded
}

// domain is what a hook may say besides its (subject, phase, effect), in
// the order that indexes a compiled answer list: the answer to a question
// is at ((policy*len(visibilities) + visibility)*len(requirements) +
// requirement)*2 + has_fallback.
type domain struct {
	FailurePolicies []string `json:"failure_policies"`
	Visibilities    []string `json:"error_visibilities"`
	Requirements    []string `json:"requirements"`
}

// A compiledTable is one table as LoadFS decoded it, with #Capability's
// answer to every question of the admitted domain: Capabilities maps
// subject, phase and effect to indices into Answers, the distinct answers.
type compiledTable struct {
	File         string                                 `json:"file"`
	SHA256       string                                 `json:"sha256"` // of the CUE file
	Table        *Table                                 `json:"table"`
	Answers      []Capability                           `json:"answers"`
	Capabilities map[string]map[string]map[string][]int `json:"capabilities"`
	// Members maps every #MemberInstall question (its key) to an index
	// into MemberAnswers, the distinct answers.
	MemberAnswers []MemberAnswer `json:"member_answers"`
	Members       map[string]int `json:"members"`
}

// Compile compiles the embedded tables and rules from CUE and returns the
// contents of compiled_tables.go: each table decoded, and #Capability's
// answer for every hook row of #Combinations, every effect admitted there,
// every #FailurePolicy, every #Visibility, every requirement #Capability
// takes, with and without a fallback, as a Go value. The output is
// deterministic.
func Compile() ([]byte, error) {
	c, err := compileFS(embedded)
	if err != nil {
		return nil, err
	}
	return goSource(c)
}

func compileFS(fsys fs.FS) (*compiled, error) {
	ts, root, err := compileTables(fsys, true)
	if err != nil {
		return nil, err
	}
	var combos map[string]map[string]struct {
		Effects map[string]bool `json:"effects"`
	}
	if err := root.LookupPath(cue.ParsePath(defs.Combinations)).Decode(&combos); err != nil {
		return nil, fmt.Errorf("provider tables: #Combinations: %w", err)
	}
	var d domain
	for _, e := range []struct {
		path string
		to   *[]string
	}{
		{defs.FailurePolicy, &d.FailurePolicies},
		{defs.Visibility, &d.Visibilities},
		{defs.Capability + ".requirement", &d.Requirements},
	} {
		if *e.to, err = enum(root.LookupPath(cue.ParsePath(e.path))); err != nil {
			return nil, fmt.Errorf("provider tables: %s: %w", e.path, err)
		}
	}
	out := compiled{
		Note:   "Written by " + RefreshCommand + " from the provider tables and the rules; do not edit.",
		Domain: d,
	}
	for _, t := range ts.all {
		src, err := fs.ReadFile(fsys, t.File)
		if err != nil {
			return nil, fmt.Errorf("provider table %s: %w", t.File, err)
		}
		ct := compiledTable{File: t.File, SHA256: digest(src), Table: t, Capabilities: map[string]map[string]map[string][]int{}}
		seen := map[Capability]int{}
		for _, s := range slices.Sorted(maps.Keys(combos)) {
			ct.Capabilities[s] = map[string]map[string][]int{}
			for _, p := range slices.Sorted(maps.Keys(combos[s])) {
				ct.Capabilities[s][p] = map[string][]int{}
				for _, e := range slices.Sorted(maps.Keys(combos[s][p].Effects)) {
					var idx []int
					for _, fp := range d.FailurePolicies {
						for _, vis := range d.Visibilities {
							for _, req := range d.Requirements {
								for _, fb := range []bool{false, true} {
									for _, ub := range []bool{false, true} {
										for _, mn := range []bool{false, true} {
											c, err := ts.Capability(t, Question{s, p, e, fp, vis, req, fb, mn, ub})
											if err != nil {
												return nil, err
											}
											i, ok := seen[c]
											if !ok {
												i = len(ct.Answers)
												seen[c] = i
												ct.Answers = append(ct.Answers, c)
											}
											idx = append(idx, i)
										}
									}
								}
							}
						}
					}
					ct.Capabilities[s][p][e] = idx
				}
			}
		}
		if err := compileMembers(ts, root, t, &ct); err != nil {
			return nil, err
		}
		out.Tables = append(out.Tables, ct)
	}
	return &out, nil
}

// goSource returns the Go file whose compiledTables returns c. A function,
// not a variable: the literal's maps and pointers are built when it runs,
// and as a variable every run of dalo built them at init, 0.7 MB of them,
// whether or not the command asked a table anything.
func goSource(c *compiled) ([]byte, error) {
	value, err := goLiteral(nil, reflect.ValueOf(c))
	if err != nil {
		return nil, err
	}
	b := []byte("// Code generated by " + RefreshCommand + " from the provider tables and the rules; DO NOT EDIT.\n\n" +
		"//go:build !dalo_nocompiled\n\npackage providers\n\n")
	if bytes.Contains(value, []byte("json.")) {
		b = append(b, "import \"encoding/json\"\n\n"...)
	}
	b = append(b, "func compiledTables() *compiled {\n\treturn "...)
	b = append(append(b, value...), "\n}\n"...)
	return format.Source(b)
}

// goLiteral appends to b the Go expression of v as package providers
// writes it: exported struct fields that are not zero, map entries in the
// order of their keys, nil and empty slices and maps told apart.
func goLiteral(b []byte, v reflect.Value) ([]byte, error) {
	t := v.Type()
	name := strings.ReplaceAll(t.String(), "providers.", "")
	var err error
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, "nil"...), nil
		}
		return goLiteral(append(b, '&'), v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			return append(b, "nil"...), nil
		}
		if e := v.Elem(); e.Kind() == reflect.Float64 {
			return strconv.AppendFloat(append(b, "float64("...), e.Float(), 'g', -1, 64), nil
		} else if e.Kind() == reflect.Int64 {
			return append(strconv.AppendInt(append(b, "int64("...), e.Int(), 10), ')'), nil
		} else if e.Kind() == reflect.String || e.Kind() == reflect.Bool || e.Kind() == reflect.Map || e.Kind() == reflect.Slice {
			return goLiteral(b, e)
		}
		return nil, fmt.Errorf("compiled tables: a value of type %s", v.Elem().Type())
	case reflect.Struct:
		b = append(append(b, name...), "{\n"...)
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && !v.Field(i).IsZero() {
				b = append(append(b, f.Name...), ": "...)
				if b, err = goLiteral(b, v.Field(i)); err != nil {
					return nil, err
				}
				b = append(b, ",\n"...)
			}
		}
		return append(b, '}'), nil
	case reflect.Map:
		if v.IsNil() {
			return append(b, "nil"...), nil
		}
		b = append(append(b, name...), "{\n"...)
		keys := v.MapKeys()
		slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
		for _, k := range keys {
			if b, err = goLiteral(b, k); err != nil {
				return nil, err
			}
			b = append(b, ": "...)
			if b, err = goLiteral(b, v.MapIndex(k)); err != nil {
				return nil, err
			}
			b = append(b, ",\n"...)
		}
		return append(b, '}'), nil
	case reflect.Slice:
		if v.IsNil() {
			return append(b, "nil"...), nil
		}
		if t.Elem().Kind() == reflect.Uint8 { // json.RawMessage: its text
			return append(strconv.AppendQuote(append(b, name+"("...), string(v.Bytes())), ')'), nil
		}
		b = append(append(b, name...), "{\n"...)
		for i := range v.Len() {
			if b, err = goLiteral(b, v.Index(i)); err != nil {
				return nil, err
			}
			b = append(b, ",\n"...)
		}
		return append(b, '}'), nil
	case reflect.String:
		if name != "string" {
			return strconv.AppendQuote(append(b, name+"("...), v.String()), nil
		}
		return strconv.AppendQuote(b, v.String()), nil
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	}
	return nil, fmt.Errorf("compiled tables: a value of kind %s", v.Kind())
}

// compileMembers asks #MemberInstall every question it takes on t.
func compileMembers(ts *Tables, root cue.Value, t *Table, ct *compiledTable) error {
	def := root.LookupPath(cue.ParsePath(defs.MemberInstall))
	var enums [3][]string
	for i, f := range []string{"kind", "requirement", "validation"} {
		var err error
		if enums[i], err = enum(def.LookupPath(cue.MakePath(cue.Str(f)))); err != nil {
			return fmt.Errorf("provider tables: #MemberInstall.%s: %w", f, err)
		}
	}
	ct.Members = map[string]int{}
	seen := map[MemberAnswer]int{}
	for _, k := range enums[0] {
		for _, req := range enums[1] {
			for _, v := range enums[2] {
				for _, fb := range []bool{false, true} {
					q := MemberQuestion{k, req, v, fb}
					a, err := ts.MemberInstall(t, q)
					if err != nil {
						return err
					}
					i, ok := seen[a]
					if !ok {
						i = len(ct.MemberAnswers)
						seen[a] = i
						ct.MemberAnswers = append(ct.MemberAnswers, a)
					}
					ct.Members[q.key()] = i
				}
			}
		}
	}
	return nil
}

// answer returns the compiled answer to q on t, or false when q is outside
// the compiled domain.
func (c *compiled) answer(t *Table, q Question) (Capability, bool) {
	ct, ok := c.byKey[t.Key()]
	if !ok {
		return Capability{}, false
	}
	idx := ct.Capabilities[q.Subject][q.Phase][q.Effect]
	fp := slices.Index(c.Domain.FailurePolicies, q.FailurePolicy)
	vis := slices.Index(c.Domain.Visibilities, q.ErrorVisibility)
	req := slices.Index(c.Domain.Requirements, q.Requirement)
	if idx == nil || fp < 0 || vis < 0 || req < 0 {
		return Capability{}, false
	}
	i := ((fp*len(c.Domain.Visibilities)+vis)*len(c.Domain.Requirements) + req) * 8
	if q.HasFallback {
		i += 4
	}
	if q.Unbound {
		i += 2
	}
	if q.MatchesNothing {
		i++
	}
	if i >= len(idx) || idx[i] < 0 || idx[i] >= len(ct.Answers) {
		return Capability{}, false
	}
	return ct.Answers[idx[i]], true
}

// enum returns the strings of a disjunction of string literals.
func enum(v cue.Value) ([]string, error) {
	op, args := v.Expr()
	if op == cue.SelectorOp {
		// A reference to another field's disjunction (#Unmet.requirement).
		if root, p := v.ReferencePath(); root.Exists() && len(p.Selectors()) > 0 {
			return enum(root.LookupPath(p))
		}
	}
	if op != cue.OrOp {
		return nil, fmt.Errorf("not a disjunction of strings: %v", v)
	}
	out := make([]string, 0, len(args))
	for _, a := range args {
		s, err := a.String()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out, nil
}

func digest(src []byte) string {
	sum := sha256.Sum256(src)
	return hex.EncodeToString(sum[:])
}

// loadCompiled takes c, the tables compiled ahead of time, for the tables
// in fsys. When c is nil or does not hold exactly fsys's tables (a table
// was added or edited and nobody ran RefreshCommand), it compiles them
// from CUE instead: slower, never wrong about a table. Questions outside
// the compiled domain go to the tables compiled from CUE, made on first
// need.
func loadCompiled(c *compiled, fsys fs.FS) (*Tables, error) {
	if c == nil || !matches(c, fsys) {
		return loadShipped(fsys)
	}
	ts := &Tables{
		byKey:    make(map[string]*Table, len(c.Tables)),
		memo:     map[string]Capability{},
		compiled: c,
		fromCUE:  sync.OnceValues(func() (*Tables, error) { return loadShipped(fsys) }),
	}
	c.byKey = make(map[string]*compiledTable, len(c.Tables))
	for i := range c.Tables {
		ct := &c.Tables[i]
		t := ct.Table
		t.File = ct.File
		if err := t.compilePatterns(); err != nil {
			return nil, fmt.Errorf("provider tables: %s: %s: %w; run %s", CompiledFile, t.File, err, RefreshCommand)
		}
		ts.add(t)
		c.byKey[t.Key()] = ct
	}
	ts.sort()
	return ts, nil
}

// matches says whether c was compiled from exactly the tables in fsys.
func matches(c *compiled, fsys fs.FS) bool {
	names, err := fs.Glob(fsys, "*/*.cue")
	if err != nil || len(names) != len(c.Tables) {
		return false
	}
	sums := make(map[string]string, len(c.Tables))
	for _, ct := range c.Tables {
		if ct.Table == nil {
			return false
		}
		sums[ct.File] = ct.SHA256
	}
	for _, n := range names {
		src, err := fs.ReadFile(fsys, n)
		if err != nil || sums[n] != digest(src) {
			return false
		}
	}
	return true
}
