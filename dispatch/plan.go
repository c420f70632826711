package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"dalo/store/plan"
)

// maxPlan bounds the read of one dispatch plan.
const maxPlan = 256 << 20

// LoadHooks returns the installed, approved hooks of provider for a native
// event, from $DALO_HOME/plans/<provider>.json. No plan means nothing is
// installed: no hooks and no error.
func LoadHooks(home, provider, event string) ([]plan.PlannedHook, error) {
	name := filepath.Join(home, "plans", provider+".json")
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading dispatch plan: %w", err)
	}
	if len(data) > maxPlan {
		return nil, fmt.Errorf("reading dispatch plan %s: over %d bytes", name, maxPlan)
	}
	var p struct {
		Schema   int                        `json:"schema"`
		Provider string                     `json:"provider"`
		Events   map[string]json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("reading dispatch plan %s: %v", name, err)
	}
	if p.Schema != plan.Schema {
		return nil, fmt.Errorf("reading dispatch plan %s: schema %d, this dalo reads %d", name, p.Schema, plan.Schema)
	}
	if p.Provider != provider {
		return nil, fmt.Errorf("reading dispatch plan %s: it is for provider %q", name, p.Provider)
	}
	raw, ok := p.Events[event]
	if !ok {
		return nil, nil
	}
	var hooks []plan.PlannedHook
	if err := json.Unmarshal(raw, &hooks); err != nil {
		return nil, fmt.Errorf("reading dispatch plan %s: event %s: %v", name, event, err)
	}
	return hooks, nil
}
