package engine

import (
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	defs "dalo/cue"
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
	skillDef cue.Value
	agentDef cue.Value
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
	// fields and elems cache what shape checks ask of the schema; Load
	// checks packages concurrently, so cacheMu guards them.
	cacheMu sync.Mutex
	fields  map[string]map[string]fieldDef // struct definition path → fields
	elems   map[string]cue.Value           // definition path → its elements' constraint
	memo    *ruleMemo
}

type fieldDef struct {
	v        cue.Value
	required bool
}

// ruleMemo remembers the violations the rule definitions returned for each
// distinct question. The questions take enumerated values only, so it stays
// small.
type ruleMemo struct {
	mu       sync.Mutex
	m        map[string][]violation
	verdicts map[string]bool // acceptStruct's questions
}

// verdict returns the answer remembered under key, or asks for it.
func (m *ruleMemo) verdict(key string, ask func() bool) bool {
	m.mu.Lock()
	ok, known := m.verdicts[key]
	m.mu.Unlock()
	if known {
		return ok
	}
	ok = ask()
	m.mu.Lock()
	m.verdicts[key] = ok
	m.mu.Unlock()
	return ok
}

type violation struct {
	Code    string `json:"code"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

var sharedMemo = &ruleMemo{m: make(map[string][]violation), verdicts: make(map[string]bool)}

// rulesCompiled counts LoadRules calls: a test holds a check of one
// package to one.
var rulesCompiled atomic.Int64

// LoadRules compiles the embedded definitions.
func LoadRules() (*Rules, error) {
	rulesCompiled.Add(1)
	ctx := cuecontext.New()
	root, err := defs.Load(ctx)
	if err != nil {
		return nil, err
	}
	r := &Rules{
		ctx:      ctx,
		root:     root,
		manifest: root.LookupPath(cue.ParsePath("#Manifest")),
		hookDef:  root.LookupPath(cue.ParsePath("#HookRules")),
		bindDef:  root.LookupPath(cue.ParsePath("#BindingRules")),
		refDef:   root.LookupPath(cue.ParsePath("#RefRules")),
		skillDef: root.LookupPath(cue.ParsePath("#SkillFrontMatter")),
		agentDef: root.LookupPath(cue.ParsePath("#AgentFrontMatter")),
		fields:   make(map[string]map[string]fieldDef),
		elems:    make(map[string]cue.Value),
		memo:     sharedMemo,
		Limits:   plan.DraftLimits,
	}
	if err := root.LookupPath(cue.ParsePath("#SourceLayout")).Decode(&r.Layout); err != nil {
		return nil, fmt.Errorf("rules: #SourceLayout: %w", err)
	}
	r.sourceIDDef = root.LookupPath(cue.ParsePath("#SourceID"))
	if err := root.LookupPath(cue.ParsePath("#SourceIDRule")).Decode(&r.sourceIDRule); err != nil {
		return nil, fmt.Errorf("rules: #SourceIDRule: %w", err)
	}
	if r.argvWhole, err = regexp.Compile(plan.ArgvWhole); err != nil {
		return nil, fmt.Errorf("rules: #ArgvInterpolation.whole: %w", err)
	}
	var members map[string]struct {
		Fallback map[string]bool `json:"fallback"`
	}
	if err := root.LookupPath(cue.ParsePath("#RefPositions.members")).Decode(&members); err != nil {
		return nil, fmt.Errorf("rules: #RefPositions: %w", err)
	}
	r.fallbacks = map[string]map[string]bool{}
	for kind, m := range members {
		if m.Fallback != nil {
			r.fallbacks[kind] = m.Fallback
		}
	}
	return r, nil
}

// ask fills def with the question q, reads its violations and remembers
// the answer under key.
func (r *Rules) ask(def cue.Value, key string, q map[string]any) []violation {
	r.memo.mu.Lock()
	vs, ok := r.memo.m[key]
	r.memo.mu.Unlock()
	if ok {
		return vs
	}
	v := def
	for k, x := range q {
		v = v.FillPath(cue.MakePath(cue.Str(k)), x)
	}
	out := v.LookupPath(cue.ParsePath("violations"))
	if err := out.Decode(&vs); err != nil {
		// The questions are built from values #Manifest admitted, so a
		// failure here is a broken rule, not a broken manifest; say so
		// instead of passing the manifest.
		vs = []violation{{Code: "E099", Message: fmt.Sprintf("internal error in rule %s: %v", key, err)}}
	}
	r.memo.mu.Lock()
	r.memo.m[key] = vs
	r.memo.mu.Unlock()
	return vs
}
