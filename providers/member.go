package providers

import (
	"fmt"

	"cuelang.org/go/cue"
)

// A MemberQuestion is what #MemberInstall (cue/provider.cue) needs to know
// about one member of a plugin.
type MemberQuestion struct {
	Kind        string `json:"kind"` // skill, agent, instruction, or other
	Requirement string `json:"requirement"`
	Validation  string `json:"validation"` // kept, omitted, unresolved, unreachable
	HasFallback bool   `json:"has_fallback"`
}

// The values of [MemberQuestion.Validation].
const (
	MemberKept        = "kept"        // validation kept it and it resolves
	MemberOmitted     = "omitted"     // validation omitted it
	MemberUnresolved  = "unresolved"  // it does not resolve
	MemberUnreachable = "unreachable" // install cannot reach what it resolves to
)

// A MemberAnswer is #MemberInstall's answer: what install does with the
// member on one harness version, and the sentence review and install show
// for it, its <placeholders> for the caller to fill in.
type MemberAnswer struct {
	Action string `json:"action"`
	Text   string `json:"text"`
}

// MemberKind is the kind #MemberInstall takes for a reference kind.
func MemberKind(refKind string) string {
	switch refKind {
	case "skill", "agent", "instruction":
		return refKind
	}
	return "other"
}

func (q MemberQuestion) key() string {
	return fmt.Sprintf("%s|%s|%s|%t", q.Kind, q.Requirement, q.Validation, q.HasFallback)
}

// MemberInstall asks #MemberInstall about q on t; Go never restates the
// rule. Tables from Load hold every answer, computed by Compile (the
// domain is a few dozen questions); tables from LoadFS evaluate CUE, and
// local tables taken from a Cache the same files compiled again.
func (ts *Tables) MemberInstall(t *Table, q MemberQuestion) (MemberAnswer, error) {
	if t.local && ts.local != nil && ts.local != ts {
		return ts.local.MemberInstall(t, q)
	}
	if ts.compiled != nil {
		if ct, ok := ts.compiled.byKey[t.Key()]; ok {
			if i, ok := ct.Members[q.key()]; ok && i >= 0 && i < len(ct.MemberAnswers) {
				return ct.MemberAnswers[i], nil
			}
		}
	}
	if ts.fromCUE != nil {
		cts, err := ts.fromCUE()
		if err != nil {
			return MemberAnswer{}, err
		}
		ct, ok := cts.Lookup(t.Name, t.Version)
		if !ok {
			return MemberAnswer{}, fmt.Errorf("member install on %s: no such table in the CUE tables", t.Key())
		}
		return cts.MemberInstall(ct, q)
	}
	v := ts.memberDef.FillPath(cue.MakePath(cue.Str("table")), t.value)
	for k, x := range map[string]any{
		"kind": q.Kind, "requirement": q.Requirement, "validation": q.Validation, "has_fallback": q.HasFallback,
	} {
		v = v.FillPath(cue.MakePath(cue.Str(k)), x)
	}
	var a MemberAnswer
	for k, to := range map[string]*string{"action": &a.Action, "text": &a.Text} {
		s, err := v.LookupPath(cue.MakePath(cue.Str(k))).String()
		if err != nil {
			return MemberAnswer{}, fmt.Errorf("member install on %s for %+v: %s: %w", t.Key(), q, k, err)
		}
		*to = s
	}
	return a, nil
}
