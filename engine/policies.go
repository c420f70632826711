package engine

import (
	"fmt"

	"cuelang.org/go/cue"
)

// FailurePolicies returns the failure policies #FailurePolicies admits for
// effect, in the order the rules list them, and what a failing fail_closed
// hook of that effect does (#FailClosed: "deny" or "continue"; "" when the
// effect does not admit fail_closed). Scaffolding writes them into the
// comments of a new manifest, so that the comment says what validation
// will accept.
func (r *Rules) FailurePolicies(effect string) (policies []string, failClosed string, err error) {
	v := r.root.LookupPath(cue.MakePath(cue.Def("FailurePolicies"), cue.Str(effect)))
	if !v.Exists() {
		return nil, "", fmt.Errorf("rules: no failure policies for effect %q", effect)
	}
	it, err := v.Fields()
	if err != nil {
		return nil, "", fmt.Errorf("rules: #FailurePolicies.%s: %w", effect, err)
	}
	for it.Next() {
		policies = append(policies, it.Selector().Unquoted())
	}
	fc := r.root.LookupPath(cue.MakePath(cue.Def("FailClosed"), cue.Str(effect)))
	if fc.Exists() {
		if failClosed, err = fc.String(); err != nil {
			return nil, "", fmt.Errorf("rules: #FailClosed.%s: %w", effect, err)
		}
	}
	return policies, failClosed, nil
}
