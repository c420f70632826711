package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	defs "dalo/cue"
	"dalo/plan"
)

// ResultKinds asks the rules which result kinds each effect admits
// (#ResultKinds, abstain included), for the plan: the dispatcher then
// checks a handler's answer without evaluating CUE.
func ResultKinds() (map[string][]string, error) {
	r, err := planRules()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(r.kinds))
	for k, v := range r.kinds {
		out[k] = slices.Clone(v)
	}
	return out, nil
}

// Limits asks the rules for the limits of a handler's response (#Limits:
// response_bytes, result_text_bytes, rewritten_input_bytes), for the
// plan: the dispatcher enforces them without evaluating CUE.
func Limits() (plan.Limits, error) {
	r, err := planRules()
	if err != nil {
		return plan.Limits{}, err
	}
	return r.limits, nil
}

// Rules asks the rules for the tables dispatch applies to a handler's
// answer and to its failure (#ResultShapes, #FailClosed), for the plan.
func Rules() (plan.Rules, error) {
	r, err := planRules()
	if err != nil {
		return plan.Rules{}, err
	}
	// A copy: the answers are decoded once per process, and a caller that
	// edits its plan must not change what the next caller reads.
	return plan.Rules{Results: maps.Clone(r.rules.Results), FailClosed: maps.Clone(r.rules.FailClosed)}, nil
}

// Runtimes asks the rules how each tool runtime runs, for the plan.
func Runtimes() (map[string]plan.Runtime, error) {
	r, err := planRules()
	if err != nil {
		return nil, err
	}
	out := make(map[string]plan.Runtime, len(r.runtimes))
	for rt, x := range r.runtimes {
		out[rt] = plan.Runtime{Interpreter: x.Interpreter, Args: slices.Clone(x.Args)}
	}
	return out, nil
}

// planRules is what the plan copies from the rules, decoded once per
// process from one load of them: a CUE value is not for concurrent use, so
// nothing else keeps it.
var planRules = sync.OnceValues(func() (*rulesForPlan, error) {
	v, err := defs.Load(cuecontext.New())
	if err != nil {
		return nil, err
	}
	var m map[string]map[string]bool
	if err := v.LookupPath(cue.ParsePath("#ResultKinds")).Decode(&m); err != nil {
		return nil, fmt.Errorf("rules: #ResultKinds: %w", err)
	}
	r := &rulesForPlan{kinds: make(map[string][]string, len(m))}
	for effect, kinds := range m {
		for k, ok := range kinds {
			if ok {
				r.kinds[effect] = append(r.kinds[effect], k)
			}
		}
		sort.Strings(r.kinds[effect])
	}
	if err := v.LookupPath(cue.ParsePath("#Limits")).Decode(&r.limits); err != nil {
		return nil, fmt.Errorf("rules: #Limits: %w", err)
	}
	if err := r.limits.Check(); err != nil {
		return nil, fmt.Errorf("rules: #Limits: %w", err)
	}
	var shapes map[string]map[string]string
	if err := v.LookupPath(cue.ParsePath("#ResultShapes")).Decode(&shapes); err != nil {
		return nil, fmt.Errorf("rules: #ResultShapes: %w", err)
	}
	r.rules.Results = make(map[string]plan.ResultShape, len(shapes))
	for kind, keys := range shapes {
		var s plan.ResultShape
		for k, typ := range keys { // at most one: #Tables checks it
			s = plan.ResultShape{Key: k, Type: typ}
		}
		r.rules.Results[kind] = s
	}
	if err := v.LookupPath(cue.ParsePath("#FailClosed")).Decode(&r.rules.FailClosed); err != nil {
		return nil, fmt.Errorf("rules: #FailClosed: %w", err)
	}
	if err := r.rules.Check(); err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	if err := v.LookupPath(cue.ParsePath("#Runtimes")).Decode(&r.runtimes); err != nil {
		return nil, fmt.Errorf("rules: #Runtimes: %w", err)
	}
	return r, nil
})

type rulesForPlan struct {
	kinds    map[string][]string
	limits   plan.Limits
	rules    plan.Rules
	runtimes map[string]plan.Runtime
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
