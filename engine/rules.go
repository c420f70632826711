package engine

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	defs "dalo/cue"
	"dalo/internal/suggest"
	"dalo/plan"
)

// Limits are the reference limits (#Limits), compiled into package plan
// with the other static tables of the rules (plan.DraftLimits).
type Limits = plan.Limits

// Rules is the compiled CUE definitions in one cue.Context. A cue.Context is
// not shared between goroutines here: each worker compiles its own Rules,
// which costs a few milliseconds, and the answers of the finite rule tables
// are shared through ruleMemo.
type Rules struct {
	ctx      *cue.Context
	root     cue.Value
	manifest cue.Value
	hookDef  cue.Value
	bindDef  cue.Value
	refDef   cue.Value
	skillFM  fmRule // #SkillFrontMatter
	agentFM  fmRule // #AgentFrontMatter
	leaf     *leafProgram
	Limits   Limits
	// Layout is #SourceLayout: where references point in a source.
	Layout       Layout
	sourceIDDef  cue.Value
	sourceIDRule string
	// argvWhole is #ArgvInterpolation's (plan.ArgvWhole): an argument
	// holding plan.ArgvSubstitution must match it whole, group 1 naming
	// the input.
	argvWhole *regexp.Regexp
	// fallbacks is, per member kind that takes an inline fallback, the
	// kinds of reference it may name (#RefPositions.members.*.fallback).
	fallbacks map[string]map[string]bool
	// refKinds and eventFields are the reference kinds #RefPositions
	// names and the fields #FieldTypes types: what #RefRules and
	// #BindingRules look a question's kind and field up in (free).
	refKinds, eventFields map[string]bool
	// cueMu serializes every use of ctx and of the values compiled in
	// it: the workers of a validation share one Rules (checkPackages), and
	// CUE's evaluator is not safe for concurrent use. What the fast path
	// runs unlocked is Go: remembered answers, field programs, and what
	// shape checks ask of the schema, looked up once per definition name
	// under cueMu and read after without a lock (fields, elems), with what
	// the checks read of each definition (its kind, whether it exists).
	// Locking each lookup made the two workers of a run wait on each
	// other some 80 times more.
	cueMu       sync.Mutex
	manifestDef fieldDef // #Manifest, for acceptFields
	fields      sync.Map // struct definition path → structFields
	elems       sync.Map // definition path → its elements' constraint (fieldDef)
	lists       sync.Map // list definition path → its listRule
	// scalarFindings holds walkValue's finding for each scalarKey
	// (scalarFinding), the first maxScalarFindings of them.
	scalarFindings sync.Map
	scalarsKept    atomic.Int64
	enums          sync.Map // definition name → its *enumSet, nil when it is none
	words          sync.Map // definition name → its *defWords
	memo           *ruleMemo
}

type fieldDef struct {
	v        cue.Value
	name     string // the definition's name and the field's: #Tool.id
	required bool
	leaf     leafFn   // v's program, for a scalar (leafprog.go); nil: none runs
	kind     cue.Kind // v.IncompleteKind(), read under cueMu
	exists   bool     // v.Exists(), read under cueMu
}

// ruleMemo remembers the violations the rule definitions returned for each
// distinct question, and the verdicts of the shape walk. The questions are
// of the rules alone, so a process asks each once, and with a cache
// (loadFrom, saveTo) each is asked once for as long as dalo's build and
// the cache last: checking one edited package in a new process asks CUE
// only what is new in it.
type ruleMemo struct {
	mu       sync.Mutex
	m        map[string][]violation
	verdicts map[string]bool // acceptStruct's questions
	learned  int             // answers asked for since the last load or save
}

// questionsAsked counts the questions asked of CUE: a test holds a check
// of an edited package to those no earlier run asked.
var questionsAsked atomic.Int64

// verdict returns the answer remembered under key, or asks for it.
func (m *ruleMemo) verdict(key string, ask func() bool) bool {
	m.mu.Lock()
	ok, known := m.verdicts[key]
	m.mu.Unlock()
	if known {
		return ok
	}
	questionsAsked.Add(1)
	ok = ask()
	m.mu.Lock()
	m.verdicts[key] = ok
	m.learned++
	m.mu.Unlock()
	return ok
}

// verdictOf is verdict for a key in bytes, which it copies only to
// remember a new answer: a remembered one is found without allocating.
func (m *ruleMemo) verdictOf(key []byte, ask func() bool) bool {
	m.mu.Lock()
	ok, known := m.verdicts[string(key)]
	m.mu.Unlock()
	if known {
		return ok
	}
	return m.verdict(string(key), ask)
}

// The answers are kept in a cache under one key; its file is of one dalo
// build, whose rules they are.
const memoKey = "dalo rule answers 1"

// loadFrom adds the answers c keeps to m's.
func (m *ruleMemo) loadFrom(c Cache) {
	data := c.Get([]byte(memoKey))
	if data == nil {
		return
	}
	d := newDecoder(data)
	verdicts := make(map[string]bool)
	for range d.count(d.int()) {
		k := d.str()
		verdicts[k] = d.int() == 1
	}
	asked := make(map[string][]violation)
	for range d.count(d.int()) {
		k := d.str()
		vs := []violation{}
		for range d.count(d.int()) {
			vs = append(vs, violation{Code: d.str(), Field: d.str(), Message: d.str()})
		}
		asked[k] = vs
	}
	if d.bad || len(d.b) != 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range verdicts {
		m.verdicts[k] = v
	}
	for k, vs := range asked {
		m.m[k] = vs
	}
}

// saveTo puts m's answers in c, when some were asked for since the last
// load or save.
func (m *ruleMemo) saveTo(c Cache) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.learned == 0 {
		return
	}
	m.learned = 0
	var e encoder
	e.int(len(m.verdicts))
	for _, k := range slices.Sorted(maps.Keys(m.verdicts)) {
		e.str(k)
		e.int(boolInt(m.verdicts[k]))
	}
	e.int(len(m.m))
	for _, k := range slices.Sorted(maps.Keys(m.m)) {
		e.str(k)
		e.int(len(m.m[k]))
		for _, v := range m.m[k] {
			e.str(v.Code)
			e.str(v.Field)
			e.str(v.Message)
		}
	}
	c.Put([]byte(memoKey), e.b)
}

type violation struct {
	Code    string `json:"code"`
	Field   string `json:"field"`
	Message string `json:"message"`
	Near    *struct {
		Value string   `json:"value"`
		Among []string `json:"among"`
	} `json:"near"`
}

var sharedMemo = &ruleMemo{m: make(map[string][]violation), verdicts: make(map[string]bool)}

// rulesCompiled counts LoadRules calls: a test holds a check of one
// package to one.
var rulesCompiled atomic.Int64

// LoadRules compiles the embedded definitions.
func LoadRules() (*Rules, error) {
	rulesCompiled.Add(1)
	ctx := cuecontext.New()
	root, err := defs.LoadPackageRules(ctx)
	if err != nil {
		return nil, err
	}
	r := &Rules{
		ctx:      ctx,
		root:     root,
		manifest: root.LookupPath(cue.ParsePath(defs.Manifest)),
		hookDef:  root.LookupPath(cue.ParsePath(defs.HookRules)),
		bindDef:  root.LookupPath(cue.ParsePath(defs.BindingRules)),
		refDef:   root.LookupPath(cue.ParsePath(defs.RefRules)),
		skillFM:  newFMRule(root, defs.SkillFrontMatter),
		agentFM:  newFMRule(root, defs.AgentFrontMatter),
		leaf:     newLeafProgram(root),
		memo:     sharedMemo,
		Limits:   plan.DraftLimits,
	}
	r.manifestDef = r.defOf(r.manifest, defs.Manifest)
	if err := root.LookupPath(cue.ParsePath(defs.SourceLayout)).Decode(&r.Layout); err != nil {
		return nil, fmt.Errorf("rules: #SourceLayout: %w", err)
	}
	r.sourceIDDef = root.LookupPath(cue.ParsePath(defs.SourceID))
	if err := root.LookupPath(cue.ParsePath(defs.SourceIDRule)).Decode(&r.sourceIDRule); err != nil {
		return nil, fmt.Errorf("rules: #SourceIDRule: %w", err)
	}
	if r.argvWhole, err = regexp.Compile(plan.ArgvWhole); err != nil {
		return nil, fmt.Errorf("rules: #ArgvInterpolation.whole: %w", err)
	}
	var members map[string]struct {
		Fallback map[string]bool `json:"fallback"`
	}
	if err := root.LookupPath(cue.ParsePath(defs.RefPositions + ".members")).Decode(&members); err != nil {
		return nil, fmt.Errorf("rules: #RefPositions: %w", err)
	}
	r.fallbacks = map[string]map[string]bool{}
	for kind, m := range members {
		if m.Fallback != nil {
			r.fallbacks[kind] = m.Fallback
		}
	}
	var positions map[string]map[string]any
	if err := root.LookupPath(cue.ParsePath(defs.RefPositions)).Decode(&positions); err != nil {
		return nil, fmt.Errorf("rules: #RefPositions: %w", err)
	}
	r.refKinds = map[string]bool{}
	for _, kinds := range positions {
		for k := range kinds {
			r.refKinds[k] = true
		}
	}
	var fields map[string]string
	if err := root.LookupPath(cue.ParsePath(defs.FieldTypes)).Decode(&fields); err != nil {
		return nil, fmt.Errorf("rules: #FieldTypes: %w", err)
	}
	r.eventFields = map[string]bool{}
	for f := range fields {
		r.eventFields[f] = true
	}
	return r, nil
}

// free returns v, a value of a question that #RefRules or #BindingRules
// reads only by looking it up in known and by saying it, or, when known
// does not hold it, placeholder i: every value no table knows is then
// one question, whose answer said gives the value back. A source whose packages each misspelt a kind
// or a field their own way asked CUE once for each, some 0.3 ms a
// question (TestFreeValuesAskedOnce).
func free(v string, known map[string]bool, i int) string {
	if v == "" || known[v] {
		return v
	}
	return freePlaceholders[i]
}

// freePlaceholders stand for the values free replaces: no rule's text
// holds their NULs, and they are too far from any name for a "did you
// mean". said replaces them in one pass, so that even a value holding a
// placeholder's text (a TOML string may hold NUL) is said as itself.
var freePlaceholders = [...]string{"\x00a value no table knows\x00", "\x00another value no table knows\x00"}

// said is vs, the answer to a question some of whose values free
// replaced, with each placeholder said as the value it stood for, and the
// "did you mean" of that value: pairs holds, for each value, what the
// question held and the value.
func said(vs []violation, pairs ...string) []violation {
	var subs []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] != pairs[i+1] {
			subs = append(subs, pairs[i], pairs[i+1])
		}
	}
	if len(subs) == 0 {
		return vs
	}
	r := strings.NewReplacer(subs...)
	out := make([]violation, len(vs))
	for i, x := range vs {
		out[i] = x
		out[i].Message = r.Replace(x.Message)
		if x.Near != nil && r.Replace(x.Near.Value) != x.Near.Value {
			near := *x.Near
			near.Value = r.Replace(near.Value)
			out[i].Near = &near
			suggestNear(out[i : i+1])
		}
	}
	return out
}

// ask unifies def with the question question builds, reads its
// violations and remembers the answer under key: the question is built
// only when the answer is not remembered, as most are after a package or
// two. The key is bytes, most often of the caller's stack (questionKey):
// looked up, it is not copied; only an answer learned keeps a copy.
func (r *Rules) ask(def cue.Value, key []byte, question func() map[string]any) []violation {
	r.memo.mu.Lock()
	known, ok := r.memo.m[string(key)]
	r.memo.mu.Unlock()
	if ok {
		return known
	}
	q := question()
	r.cueMu.Lock()
	r.memo.mu.Lock()
	known, ok = r.memo.m[string(key)]
	r.memo.mu.Unlock()
	if ok {
		// The other worker asked it while this one waited.
		r.cueMu.Unlock()
		return known
	}
	questionsAsked.Add(1)
	// One unification with the whole question: filling its fields one
	// at a time evaluated def once a field, some 2.5 ms a question
	// against 0.3 ms, a tenth of a cold validation of 1,000 packages
	// with hooks of their own. TestAskAgrees holds the two to the same
	// answers.
	out := def.FillPath(cue.Path{}, q).LookupPath(cue.ParsePath("violations"))
	var vs []violation // apart from known: decoding into it moves it to the heap
	err := out.Decode(&vs)
	r.cueMu.Unlock()
	if err != nil {
		// The questions are built from values #Manifest admitted, so a
		// failure here is a broken rule, not a broken manifest; say so
		// instead of passing the manifest.
		vs = []violation{{Code: "E099", Message: fmt.Sprintf("internal error in rule %s: %v", string(key), err)}}
	}
	suggestNear(vs)
	r.memo.mu.Lock()
	r.memo.m[string(key)] = vs
	r.memo.learned++
	r.memo.mu.Unlock()
	return vs
}

// suggestNear adds to the message of each violation that names a value
// near others the value it most resembles.
func suggestNear(vs []violation) {
	for i, x := range vs {
		if x.Near == nil {
			continue
		}
		if near := suggest.Closest(x.Near.Value, x.Near.Among); near != "" {
			vs[i].Message += "; did you mean " + near + "?"
		}
	}
}

// questionKey appends to dst the key ask remembers an answer under: the
// parts joined by '|', as fmt's "%s|%s|..." would write them (a cache
// keeps the answers under those keys). A caller passes a buffer of its
// stack: a key made as a string for each hook, binding and reference of
// every package, to look up an answer known after the first few, was
// one allocation in forty of a cold validation of twelve-member
// packages.
func questionKey(dst []byte, parts ...string) []byte {
	for i, p := range parts {
		if i > 0 {
			dst = append(dst, '|')
		}
		dst = append(dst, p...)
	}
	return dst
}

// A keyBuf is room for a question's key on the caller's stack.
type keyBuf [128]byte
