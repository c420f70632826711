package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	defs "dalo/cue"
	"dalo/store/plan"
)

// ResultKinds asks the rules which result kinds each effect admits
// (#ResultKinds, abstain included), for the plan: the dispatcher then
// checks a handler's answer without evaluating CUE.
func ResultKinds() (map[string][]string, error) {
	r, err := planRules()
	if err != nil {
		return nil, err
	}
	return r.kinds, nil
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
	return r, nil
})

type rulesForPlan struct {
	kinds  map[string][]string
	limits plan.Limits
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
