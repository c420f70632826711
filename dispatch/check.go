package dispatch

import (
	"fmt"
	"slices"
	"strings"

	"dalo/plan"
)

// A HookCheck is what Check found of one hook of an event.
type HookCheck struct {
	Package string `json:"package"`
	Hook    string `json:"hook"`
	// Problem says why a dispatch would not run the hook's handler; empty
	// when it would.
	Problem string `json:"problem,omitempty"`
}

// Check does for every hook of event what a dispatch does before it runs
// the hook's handler, and runs none: it loads the plan as a dispatch does
// (every tool bucket of the event), and re-checks each hook's grants, what
// they bind and its staged tree (checkTrust). dalo doctor runs a harness
// entry's own dispatcher with --check, so that what it reports is what
// that dispatcher, reading that store, would do. An error means no plan
// could be loaded: nothing would run.
func Check(home, project, provider, event string) ([]HookCheck, error) {
	events, ok := plan.Known[provider]
	switch {
	case !ok:
		return nil, fmt.Errorf("unknown provider %q: dalo has provider tables for %s", provider, strings.Join(KnownProviders(), ", "))
	case !slices.Contains(events, event):
		return nil, fmt.Errorf("unknown native event %q of %s: its events are %s", event, provider, strings.Join(events, ", "))
	}
	defer plan.HoldDispatch(home)()
	ef, err := plan.Load(plan.PlansDir(home, project), provider, event, func(*plan.Native) (string, bool) { return "", true })
	if err != nil {
		return nil, err
	}
	var out []HookCheck
	if ef == nil {
		return out, nil
	}
	for i := range ef.Hooks {
		h := &ef.Hooks[i]
		c := HookCheck{Package: h.Package, Hook: h.Hook}
		if _, err := checkTrust(home, provider, event, h); err != nil {
			c.Problem = err.Error()
		} else if h.TimeoutMS <= 0 {
			c.Problem = fmt.Sprintf("the plan gives timeout_ms %d; run 'dalo plugin install' again", h.TimeoutMS)
		}
		out = append(out, c)
	}
	return out, nil
}
