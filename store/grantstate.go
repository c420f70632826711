package store

import (
	"errors"
	"fmt"
	"io/fs"

	"dalo/plan"
)

// The states of a grant against the item it approves as it is now
// ([GrantState.State]); GrantChanged (a grant with another digest: the
// item changed since) is the state update names the same way.
const (
	GrantApproved    = "approved"     // the ledger's grant has the item's digest
	GrantNotApproved = "not_approved" // no grant
	GrantUnknown     = "unknown"      // the ledger's grant could not be read (Err)
)

// A GrantState is the ledger's state for one tool or hook of the selected
// package on its provider, against the item as it is now. Review shows it,
// approve renews it and install acts on it: one answer for the three.
type GrantState struct {
	ID     string
	State  string
	Digest string      // the item's digest now
	Grant  *plan.Grant // the ledger's (or a pending) grant; nil when there is none
	Err    error       // GrantUnknown: why

	// The item's binds now: Tool for a tool, Hook for a hook (naming its
	// tool's digest now), Member for a skill or an agent.
	Tool   *plan.ToolBinds
	Hook   *plan.HookBinds
	Member *plan.MemberBinds
}

// GrantStates is the state of the grant of every tool and every hook of
// the selected package on sel.Table. pending holds grants approved in the
// same command and not written yet; they count as the ledger's. An item
// whose binds or digest cannot be computed is an error: no state can be
// told for it.
func (s *Store) GrantStates(sel *Selection, pending map[string]*plan.Grant) (tools, hooks map[string]GrantState, err error) {
	if sel.Table == nil {
		return nil, nil, errors.New("grant states: no provider selected")
	}
	m := sel.Pkg.Manifest
	tools = make(map[string]GrantState, len(m.Tools))
	for i := range m.Tools {
		t := &m.Tools[i]
		st := s.grantState(plan.GrantID(sel.Table.Name, sel.Identity, "tool", t.ID), pending)
		if st.Tool, err = sel.ToolBinds(t); err != nil {
			return nil, nil, err
		}
		if st.Digest, err = plan.Digest(st.Tool); err != nil {
			return nil, nil, fmt.Errorf("tool %s: %w", t.ID, err)
		}
		tools[t.ID] = st.decide()
	}
	hooks = make(map[string]GrantState, len(m.Hooks))
	for i := range m.Hooks {
		h := &m.Hooks[i]
		st := s.grantState(plan.GrantID(sel.Table.Name, sel.Identity, "hook", h.ID), pending)
		if st.Hook, err = sel.HookBinds(h, tools[h.Tool].Digest); err != nil {
			return nil, nil, err
		}
		if st.Digest, err = plan.Digest(st.Hook); err != nil {
			return nil, nil, fmt.Errorf("hook %s: %w", h.ID, err)
		}
		hooks[h.ID] = st.decide()
	}
	return tools, hooks, nil
}

// grantState is the grant id as the ledger (or pending) holds it.
func (s *Store) grantState(id string, pending map[string]*plan.Grant) GrantState {
	if g, ok := pending[id]; ok {
		return GrantState{ID: id, Grant: g}
	}
	g, err := s.Grant(id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return GrantState{ID: id, State: GrantNotApproved}
	case err != nil:
		return GrantState{ID: id, State: GrantUnknown, Err: err}
	}
	return GrantState{ID: id, Grant: g}
}

// decide compares the grant found with the item's digest now.
func (st GrantState) decide() GrantState {
	switch {
	case st.State != "":
	case st.Grant.Digest == st.Digest:
		st.State = GrantApproved
	default:
		st.State = GrantChanged
	}
	return st
}
