package providers

import (
	"fmt"
	"strings"

	"cuelang.org/go/cue"
)

// A Question is what #Capability needs to know about a hook.
type Question struct {
	Subject         string `json:"subject"`
	Phase           string `json:"phase"`
	Effect          string `json:"effect"`
	FailurePolicy   string `json:"failure_policy"`
	ErrorVisibility string `json:"error_visibility"`
	Requirement     string `json:"requirement"`
	HasFallback     bool   `json:"has_fallback"`
	// MatchesNothing: the hook's matcher lists tool names the harness
	// knows none of (Table.MatchesNothing).
	MatchesNothing bool `json:"matches_nothing"`
	// Unbound: the hook binds fields the row's native event does not
	// carry (Table.UnboundFields); the answer's reason says <fields> where
	// they go (Capability.Naming).
	Unbound bool `json:"unbound"`
}

// A Capability is #Capability's answer: what one harness version does with
// one hook.
type Capability struct {
	Status           string `json:"status"` // supported, unsupported, omitted
	NativeEvent      string `json:"native_event"`
	Reason           string `json:"reason"`
	BlocksActivation bool   `json:"blocks_activation"`
}

// Capability asks #Capability (cue/provider.cue) about q on t; Go never
// restates the rule. The domain is finite (a few hundred questions per
// table), so each answer is computed once and remembered. Tables from Load
// start with every answer of the admitted domain, computed by Compile; a
// question outside it (a hook whose combination draft 0.1 does not admit)
// compiles the tables from CUE once and asks them.
func (ts *Tables) Capability(t *Table, q Question) (Capability, error) {
	if t.local && ts.local != nil && ts.local != ts {
		return ts.local.Capability(t, q)
	}
	if ts.compiled != nil {
		if c, ok := ts.compiled.answer(t, q); ok {
			return c, nil
		}
	}
	key := t.Key() + "|" + q.key()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if c, ok := ts.memo[key]; ok {
		return c, nil
	}
	var c Capability
	if ts.fromCUE != nil {
		cts, err := ts.fromCUE()
		if err != nil {
			return Capability{}, err
		}
		ct, ok := cts.Lookup(t.Name, t.Version)
		if !ok {
			return Capability{}, fmt.Errorf("capability of %s: no such table in the CUE tables", t.Key())
		}
		if c, err = cts.Capability(ct, q); err != nil {
			return Capability{}, err
		}
	} else {
		v := ts.capDef.FillPath(cue.MakePath(cue.Str("table")), t.value)
		for k, x := range map[string]any{
			"subject": q.Subject, "phase": q.Phase, "effect": q.Effect,
			"failure_policy": q.FailurePolicy, "error_visibility": q.ErrorVisibility,
			"requirement": q.Requirement, "has_fallback": q.HasFallback, "matches_nothing": q.MatchesNothing,
			"unbound": q.Unbound,
		} {
			v = v.FillPath(cue.MakePath(cue.Str(k)), x)
		}
		if err := v.Decode(&c); err != nil {
			return Capability{}, fmt.Errorf("capability of %s on %s/%s/%s: %w", t.Key(), q.Subject, q.Phase, q.Effect, err)
		}
	}
	ts.memo[key] = c
	return c, nil
}

// key is how a question is written in the memo.
func (q Question) key() string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%s|%t|%t|%t", q.Subject, q.Phase, q.Effect, q.FailurePolicy, q.ErrorVisibility, q.Requirement, q.HasFallback, q.MatchesNothing, q.Unbound)
}

// Naming returns c with the unbound fields named in its reason, where
// #Capability says <fields>.
func (c Capability) Naming(unbound []string) Capability {
	c.Reason = strings.ReplaceAll(c.Reason, "<fields>", strings.Join(unbound, ", "))
	return c
}
