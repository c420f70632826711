package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"dalo/internal/termtext"
	"dalo/plan"
	"dalo/providers"
)

// A Proposal is a grant approve would write, with what the user reads
// before confirming it.
type Proposal struct {
	Grant  *plan.Grant
	Why    string // "" or why it is proposed though not asked for
	Exists bool   // the ledger already holds this exact grant
	// Stops are the installed hooks whose plans name the grant this one
	// replaces: once it is approved they no longer run (dispatch fails them
	// under their failure policy) until the package is installed again.
	Stops []GrantUse
}

// Propose computes the grants that approving tools, hooks and members
// (KIND:NAME, such as skill:notes), or all of them, of a valid package on
// the selected provider would write. A hook needs its tool's grant too, so
// the tool is proposed with it. A hook the provider does not support
// cannot be approved for it, nor a member install does not write there;
// with all they are skipped and listed in skipped.
func (s *Store) Propose(sel *Selection, tools, hooks, members []string, all bool) (props []Proposal, skipped []string, err error) {
	if err := sel.Valid(); err != nil {
		return nil, nil, err
	}
	acts, err := s.MemberActions(sel, sel.Table, os.Getenv)
	if err != nil {
		return nil, nil, err
	}
	if all {
		tools, hooks, members, skipped = approvable(sel, acts)
	}
	if len(tools)+len(hooks)+len(members) == 0 && !all {
		return nil, nil, fmt.Errorf("%s: nothing to approve: name --tool ID, --hook ID or --member KIND:NAME, or --all", sel.Identity)
	}
	// What the ledger holds for each item now: the state review shows and
	// install acts on.
	toolStates, hookStates, err := s.GrantStates(sel, nil)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now().UTC().Format(time.RFC3339)
	toolGrants := map[string]*plan.Grant{}
	added := map[string]bool{}
	toolGrant := func(id, why string) (*plan.Grant, error) {
		if g, ok := toolGrants[id]; ok {
			return g, nil
		}
		if sel.Tool(id) == nil {
			return nil, fmt.Errorf("%s has no tool %s; its tools: %s", sel.Identity, id, toolList(sel))
		}
		g, err := plan.NewGrant("tool", sel.Table.Name, sel.Identity, id, toolStates[id].Tool, now)
		if err != nil {
			return nil, err
		}
		toolGrants[id] = g
		return g, nil
	}
	add := func(g *plan.Grant, st GrantState, why string) error {
		if added[g.ID] {
			return nil
		}
		added[g.ID] = true
		if st.State == GrantUnknown {
			return st.Err
		}
		p := Proposal{Grant: g, Why: why, Exists: st.State == GrantApproved}
		if st.State == GrantChanged {
			uses, err := s.GrantUses(g.ID)
			if err != nil {
				return err
			}
			for _, u := range uses {
				if u.Digest == st.Grant.Digest {
					p.Stops = append(p.Stops, u)
				}
			}
		}
		props = append(props, p)
		return nil
	}
	for _, id := range tools {
		g, err := toolGrant(id, "")
		if err != nil {
			return nil, nil, err
		}
		if err := add(g, toolStates[id], ""); err != nil {
			return nil, nil, err
		}
	}
	for _, id := range hooks {
		h := sel.Hook(id)
		if h == nil {
			return nil, nil, fmt.Errorf("%s has no hook %s; its hooks: %s", sel.Identity, id, hookList(sel))
		}
		c := sel.Caps[id]
		if c.Status != providers.Supported {
			why := fmt.Sprintf("hook %s is %s on %s: %s", id, orUnknown(c.Status), sel.Table.Key(), c.Reason)
			if all {
				skipped = append(skipped, why)
				continue
			}
			return nil, nil, errors.New(why)
		}
		tg, err := toolGrant(h.Tool, "")
		if err != nil {
			return nil, nil, err
		}
		if err := add(tg, toolStates[h.Tool], "hook "+id+" runs it"); err != nil {
			return nil, nil, err
		}
		g, err := plan.NewGrant("hook", sel.Table.Name, sel.Identity, id, hookStates[id].Hook, now)
		if err != nil {
			return nil, nil, err
		}
		if err := add(g, hookStates[id], ""); err != nil {
			return nil, nil, err
		}
	}
	memberStates, err := s.MemberStates(sel, acts, nil)
	if err != nil {
		return nil, nil, err
	}
	for _, key := range members {
		st, ok := memberStates[key]
		if !ok {
			return nil, nil, fmt.Errorf("%s", memberMissing(sel, acts, key))
		}
		g, err := plan.NewGrant(st.Member.Kind, sel.Table.Name, sel.Identity, st.Member.Member, st.Member, now)
		if err != nil {
			return nil, nil, err
		}
		if err := add(g, st, ""); err != nil {
			return nil, nil, err
		}
	}
	sortProposals(props)
	return props, skipped, nil
}

// approvable is everything of sel's package approve --all approves: every
// tool, hook and member that can be, and why each other one is skipped.
func approvable(sel *Selection, acts []MemberAction) (tools, hooks, members, skipped []string) {
	m := sel.Pkg.Manifest
	for i := range acts {
		if acts[i].grantable() {
			members = append(members, MemberKey(acts[i].Ref))
		}
	}
	// A tool only hooks the provider does not support run would be
	// approved for nothing: it is skipped with them.
	runs := map[string]int{}      // tool → hooks that run it
	supported := map[string]int{} // tool → supported hooks that run it
	for _, h := range m.Hooks {
		hooks = append(hooks, h.ID)
		runs[h.Tool]++
		if sel.Caps[h.ID].Status == providers.Supported {
			supported[h.Tool]++
		}
	}
	for _, t := range m.Tools {
		if runs[t.ID] > 0 && supported[t.ID] == 0 {
			skipped = append(skipped, fmt.Sprintf("tool %s: no hook that runs it is supported on %s", t.ID, sel.Table.Key()))
			continue
		}
		tools = append(tools, t.ID)
	}
	return tools, hooks, members, skipped
}

// sortProposals puts tools first, then hooks, then members.
func sortProposals(props []Proposal) {
	rank := map[string]int{"tool": 0, "hook": 1}
	sort.SliceStable(props, func(i, j int) bool {
		ri, ok := rank[props[i].Grant.Kind]
		if !ok {
			ri = 2
		}
		rj, ok := rank[props[j].Grant.Kind]
		if !ok {
			rj = 2
		}
		return ri < rj
	})
}

// ReapproveCommand is the one approve command that renews every grant of
// the selected package on its provider that no longer matches it, or ""
// when none needs renewing: each tool whose bytes or contract changed
// since its grant, every hook that runs such a tool, approved or required
// (a hook grant binds its tool's digest; an optional hook never approved
// stays so), and each hook whose own grant no longer matches, with its
// tool. Install names it when it refuses a changed tool or hook; review
// and approve name the same: a command that left out another changed tool
// of the package would still leave every hook it guards failing.
func (s *Store) ReapproveCommand(sel *Selection) string {
	m := sel.Pkg.Manifest
	toolStates, hookStates, err := s.GrantStates(sel, nil)
	if err != nil {
		return "" // no state to tell: review and install say why
	}
	// renew says whether a grant needs renewing: it no longer matches, or
	// cannot be read (approving replaces it).
	renew := func(st GrantState) bool { return st.State == GrantChanged || st.State == GrantUnknown }
	tools := map[string]bool{} // tool id → named in the command
	for i := range m.Tools {
		tools[m.Tools[i].ID] = renew(toolStates[m.Tools[i].ID])
	}
	var hooks []string
	for i := range m.Hooks {
		h := &m.Hooks[i]
		if sel.Caps[h.ID].Status != providers.Supported {
			continue
		}
		st := hookStates[h.ID]
		approved := st.State != GrantNotApproved
		if tools[h.Tool] && (approved || h.Requirement == plan.RequirementRequired) || renew(st) {
			hooks = append(hooks, h.ID)
			tools[h.Tool] = true
		}
	}
	// Members whose bytes changed since their grant: each is asked for
	// alone, as a member grant binds nothing else.
	var members []string
	if acts, err := s.MemberActions(sel, sel.Table, os.Getenv); err == nil {
		if states, err := s.MemberStates(sel, acts, nil); err == nil {
			for key, st := range states {
				if renew(st) {
					members = append(members, key)
				}
			}
		}
	}
	cmd := fmt.Sprintf("dalo plugin approve %s --provider %s", sel.Identity, sel.Table.Name)
	n := 0
	for _, t := range m.Tools {
		if tools[t.ID] {
			cmd += " --tool " + t.ID
			n++
		}
	}
	if n+len(members) == 0 {
		return ""
	}
	for _, h := range hooks {
		cmd += " --hook " + h
	}
	return cmd + memberFlags(members)
}

// memberMissing says why key names no member approve can grant on the
// selected provider: the package has no such member, or install does not
// write it there.
func memberMissing(sel *Selection, acts []MemberAction, key string) string {
	var keys []string
	for _, a := range acts {
		if MemberKey(a.Ref) == key {
			return fmt.Sprintf("%s %s is not written on %s, so it has nothing to approve there: %s", sel.Identity, key, sel.Table.Key(), termtext.Escape(a.Text))
		}
		if a.grantable() {
			keys = append(keys, MemberKey(a.Ref))
		}
	}
	if keys == nil {
		keys = []string{"none"}
	}
	return fmt.Sprintf("%s has no member %s to approve on %s; its skills and agents: %s", sel.Identity, termtext.Escape(key), sel.Table.Key(), strings.Join(keys, ", "))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func toolList(sel *Selection) string {
	var ids []string
	for _, t := range sel.Pkg.Manifest.Tools {
		ids = append(ids, t.ID)
	}
	if ids == nil {
		return "none"
	}
	return strings.Join(ids, ", ")
}

func hookList(sel *Selection) string {
	var ids []string
	for _, h := range sel.Pkg.Manifest.Hooks {
		ids = append(ids, h.ID)
	}
	if ids == nil {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// Approve writes the proposed grants to the ledger.
func (s *Store) Approve(props []Proposal) error {
	l, err := s.Lock()
	if err != nil {
		return err
	}
	defer l.Unlock()
	var gs []*plan.Grant
	for _, p := range props {
		if !p.Exists {
			gs = append(gs, p.Grant)
		}
	}
	return s.PutGrants(gs)
}

// Revoke deletes the grants of package ref (SOURCE:NAME): the tools,
// hooks and members (KIND:NAME) named, or all of them. Dispatch stops
// honouring a tool or hook grant at its next run, whatever the harness
// configuration still says; a harness reads a skill or an agent with no
// dispatcher in between, so each installed member of a revoked grant is
// taken away from where the harness reads it, into the store.
func (s *Store) Revoke(ref string, tools, hooks, members []string) ([]*plan.Grant, []Withdrawn, error) {
	if _, _, err := ParsePackageRef(ref); err != nil {
		return nil, nil, err
	}
	l, err := s.Lock()
	if err != nil {
		return nil, nil, err
	}
	defer l.Unlock()
	// Match on the file names, so that a corrupt grant can be revoked too.
	ents, err := os.ReadDir(s.path("grants"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("reading the ledger: %w", err)
	}
	want := map[string]bool{}
	for _, t := range tools {
		want["tool+"+t] = true
	}
	for _, h := range hooks {
		want["hook+"+h] = true
	}
	for _, m := range members {
		kind, name, ok := strings.Cut(m, ":")
		if !ok || !plan.IsMemberKind(kind) || name == "" {
			return nil, nil, fmt.Errorf("member %q: want skill:NAME or agent:NAME", m)
		}
		want[kind+"+"+name] = true
	}
	var out []*plan.Grant
	var ids []string
	matched := map[string]bool{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") || isTemp(e.Name()) {
			continue
		}
		id := s.grantIDOf(e.Name())
		provider, pkg, kind, item, err := plan.ParseGrantID(id)
		if err != nil || pkg.String() != ref {
			continue
		}
		k := kind + "+" + item
		if len(want) > 0 && !want[k] {
			continue
		}
		matched[k] = true
		g, err := s.Grant(id)
		if err != nil {
			g = &plan.Grant{ID: id, Provider: provider, Package: ref, Source: pkg.Source, Kind: kind, Item: item} // corrupt: revoke it all the same
		}
		out = append(out, g)
		ids = append(ids, id)
	}
	for k := range want {
		if !matched[k] {
			return nil, nil, fmt.Errorf("%s has no grant for %s %s", ref, kindOf(k), itemOf(k))
		}
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("%s has no grants", ref)
	}
	// Members first: a run killed in between leaves a grant whose member
	// is gone (revoking again finishes), never a member where the harness
	// reads it with no grant.
	gone, err := s.withdrawMembers(out)
	if err != nil {
		return nil, gone, err
	}
	return out, gone, s.DeleteGrants(ids)
}

func kindOf(k string) string { a, _, _ := strings.Cut(k, "+"); return a }
func itemOf(k string) string { _, b, _ := strings.Cut(k, "+"); return b }
