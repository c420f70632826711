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
)

// ResultKinds asks the rules which result kinds each effect admits
// (#ResultKinds, abstain included), for the plan: the dispatcher then
// checks a handler's answer without evaluating CUE.
var ResultKinds = sync.OnceValues(func() (map[string][]string, error) {
	v, err := defs.Load(cuecontext.New())
	if err != nil {
		return nil, err
	}
	var m map[string]map[string]bool
	if err := v.LookupPath(cue.ParsePath("#ResultKinds")).Decode(&m); err != nil {
		return nil, fmt.Errorf("rules: #ResultKinds: %w", err)
	}
	out := make(map[string][]string, len(m))
	for effect, kinds := range m {
		for k, ok := range kinds {
			if ok {
				out[effect] = append(out[effect], k)
			}
		}
		sort.Strings(out[effect])
	}
	return out, nil
})

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
