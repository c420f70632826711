package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"dalo/plan"
	"dalo/providers"
)

// What an update does with a grant ([GrantChange.State]).
const (
	GrantUnchanged = "unchanged" // the package asks what the grant binds: carried over
	GrantChanged   = "changed"   // its bytes or contract changed: approved again, or nothing
	GrantNew       = "new"       // a tool or hook the package did not have: asked like approve
	GrantGone      = "gone"      // the package no longer has it: revoked
)

// A GrantChange is what an update does with one grant of the package on
// the provider.
type GrantChange struct {
	Kind  string `json:"kind"` // tool, hook, skill, agent
	Item  string `json:"item"`
	State string `json:"state"`
	// Why says what changed (bytes, contract, the tool a hook runs), or
	// why a grant is proposed though not asked for.
	Why string      `json:"why,omitempty"`
	Old *plan.Grant `json:"-"` // the ledger's, if it has one
	New *plan.Grant `json:"-"` // what approving writes (changed, new)
}

// An Update is what 'dalo plugin update' would do to a package installed
// on the selected provider: the grants it asks approval for, carries over
// and revokes, and how the package differs from what is installed.
type Update struct {
	Sel       *Selection
	Installed *InstalledPackage
	// From and To are the commits of a git source: what is installed,
	// and what the source is pinned to now ("" for a directory source).
	From, To    string
	Grants      []GrantChange
	Differences []Difference
	// Skipped are hooks of the package the provider does not support:
	// neither asked for nor revoked.
	Skipped []string
	// Compared says the install record holds what was installed; one
	// written before dalo recorded it compares grants only.
	Compared bool
}

// Asks are the grants the update needs approved: changed and new.
func (u *Update) Asks() []*plan.Grant {
	var out []*plan.Grant
	for _, g := range u.Grants {
		if g.New != nil {
			out = append(out, g.New)
		}
	}
	return out
}

// Current says there is nothing to update: every grant carried over and
// nothing else differs.
func (u *Update) Current() bool {
	for _, g := range u.Grants {
		if g.State != GrantUnchanged {
			return false
		}
	}
	return len(u.Differences) == 0 && u.From == u.To
}

// PlanUpdate computes the update of the selected package, installed on
// the selected provider, to what its source holds now: for each tool and
// hook the provider supports, whether its grant is carried over (the
// package asks exactly what it binds), asked for again (its bytes or
// contract changed, or the tool a hook runs did), or asked for like an
// approval (a tool or hook the installed package did not have, or a
// required one without a grant); and each grant of a tool or hook the
// package no longer has, to revoke. It writes nothing.
func (s *Store) PlanUpdate(sel *Selection) (*Update, error) {
	in, err := s.Installed(sel.Table.Name)
	if err != nil {
		return nil, err
	}
	gs, err := s.Grants()
	if err != nil {
		return nil, err
	}
	return s.planUpdate(sel, in, gs)
}

// planUpdate is PlanUpdate with what is installed on the provider and the
// whole ledger read.
func (s *Store) planUpdate(sel *Selection, in *Installed, gs []*plan.Grant) (*Update, error) {
	if err := sel.Valid(); err != nil {
		return nil, err
	}
	t := sel.Table
	pkg := sel.Identity.String()
	ip := in.Find(pkg)
	if ip == nil {
		return nil, fmt.Errorf("%s is not installed on %s: 'dalo plugin install %s --provider %s' installs it", pkg, t.Name, pkg, t.Name)
	}
	u := &Update{Sel: sel, Installed: ip, From: ip.Commit, Compared: ip.Manifest != nil}
	if sel.Source.Git != nil {
		u.To = sel.Source.Git.Commit
	}
	ledger := packageGrants(gs, t.Name, pkg)
	had := hadItems(ip, ledger)
	now := time.Now().UTC().Format(time.RFC3339)
	m := sel.Pkg.Manifest
	changes := map[string]*GrantChange{}
	var order []string
	propose := func(kind, item, why string, binds any) (*GrantChange, error) {
		key := kind + " " + item
		if c, ok := changes[key]; ok {
			return c, nil
		}
		g, err := plan.NewGrant(kind, t.Name, sel.Identity, item, binds, now)
		if err != nil {
			return nil, err
		}
		c := &GrantChange{Kind: kind, Item: item, Old: ledger[key]}
		switch {
		case c.Old != nil && c.Old.Digest == g.Digest:
			c.State = GrantUnchanged
		case c.Old != nil:
			c.State, c.Why, c.New = GrantChanged, why, g
		case !had[key] || why != "":
			c.State, c.Why, c.New = GrantNew, why, g
		default:
			return nil, nil // never approved, and not asked for now
		}
		changes[key] = c
		order = append(order, key)
		return c, nil
	}
	toolBinds, toolDigest, err := allToolBinds(sel)
	if err != nil {
		return nil, err
	}
	for i := range m.Tools {
		x := &m.Tools[i]
		if _, err := propose(plan.GrantTool, x.ID, toolWhy(ledger["tool "+x.ID], toolBinds[x.ID]), toolBinds[x.ID]); err != nil {
			return nil, err
		}
	}
	for i := range m.Hooks {
		h := &m.Hooks[i]
		if c := sel.Caps[h.ID]; c.Status != providers.Supported {
			u.Skipped = append(u.Skipped, fmt.Sprintf("hook %s is %s on %s: %s", h.ID, orUnknown(c.Status), t.Key(), c.Reason))
			continue
		}
		hb, err := sel.HookBinds(h, toolDigest[h.Tool])
		if err != nil {
			return nil, err
		}
		why := hookWhy(ledger["hook "+h.ID], hb)
		if why == "" && h.Requirement == plan.RequirementRequired && ledger["hook "+h.ID] == nil {
			why = plan.RequirementRequired
		}
		c, err := propose(plan.GrantHook, h.ID, why, hb)
		if err != nil {
			return nil, err
		}
		// A hook asked for or carried over needs its tool's grant: asked
		// for too when the tool has none.
		if c != nil && changes["tool "+h.Tool] == nil {
			if _, err := propose(plan.GrantTool, h.Tool, "hook "+h.ID+" runs it", toolBinds[h.Tool]); err != nil {
				return nil, err
			}
		}
	}
	// Members install writes: each asked for alone when its bytes
	// changed, or when it has no grant (install writes none without one).
	acts, err := s.MemberActions(sel, t, os.Getenv)
	if err != nil {
		return nil, err
	}
	members := map[string]bool{} // "kind name" of every member with a grant subject
	for i := range acts {
		a := &acts[i]
		if !a.grantable() {
			continue
		}
		mb, err := sel.MemberBinds(a)
		if err != nil {
			return nil, err
		}
		key := mb.Kind + " " + mb.Member
		members[key] = true
		why := memberWhy(ledger[key], mb)
		if ledger[key] == nil && slices.ContainsFunc(ip.owned(), func(o OwnedTree) bool { return o.Ref == a.Ref }) {
			why = "installed before skills and agents had grants; install writes it only with one"
		}
		if _, err := propose(mb.Kind, mb.Member, why, mb); err != nil {
			return nil, err
		}
	}
	for _, g := range goneGrants(sel, ledger, members) {
		key := g.Kind + " " + g.Item
		changes[key] = &GrantChange{Kind: g.Kind, Item: g.Item, State: GrantGone, Old: g}
		order = append(order, key)
	}
	for _, key := range order {
		u.Grants = append(u.Grants, *changes[key])
	}
	if ip.Manifest != nil {
		u.Differences = diffVersions(s.installedVersion(ip, ledger), s.currentVersion(sel, ip))
	}
	return u, nil
}

// hadItems is what the installed package ip had: its manifest's tools
// and hooks, or, in a record without it, what has a grant or is
// installed.
func hadItems(ip *InstalledPackage, ledger map[string]*plan.Grant) map[string]bool {
	had := map[string]bool{}
	if ip.Manifest != nil {
		for _, x := range ip.Manifest.Tools {
			had["tool "+x.ID] = true
		}
		for _, x := range ip.Manifest.Hooks {
			had["hook "+x.ID] = true
		}
	} else {
		for _, g := range ledger {
			had[g.Kind+" "+g.Item] = true
		}
		for _, h := range ip.Hooks {
			had["hook "+h.Hook.Hook] = true
		}
	}
	return had
}

// allToolBinds is what each tool of sel's package binds now, and its
// digest.
func allToolBinds(sel *Selection) (toolBinds map[string]*plan.ToolBinds, toolDigest map[string]string, err error) {
	m := sel.Pkg.Manifest
	toolBinds, toolDigest = map[string]*plan.ToolBinds{}, map[string]string{}
	for i := range m.Tools {
		tb, err := sel.ToolBinds(&m.Tools[i])
		if err != nil {
			return nil, nil, err
		}
		toolBinds[m.Tools[i].ID] = tb
		toolDigest[m.Tools[i].ID], _ = plan.Digest(tb)
	}
	return toolBinds, toolDigest, nil
}

// goneGrants lists the grants of the ledger ("kind item" → grant) whose
// item sel's package no longer has, by key: a tool, a hook, or a member
// with a grant subject (members).
func goneGrants(sel *Selection, ledger map[string]*plan.Grant, members map[string]bool) []*plan.Grant {
	var gone []*plan.Grant
	for _, key := range slices.Sorted(maps.Keys(ledger)) {
		g := ledger[key]
		if (g.Kind == plan.GrantTool && sel.Tool(g.Item) == nil) || (g.Kind == plan.GrantHook && sel.Hook(g.Item) == nil) || (plan.IsMemberKind(g.Kind) && !members[key]) {
			gone = append(gone, g)
		}
	}
	return gone
}

// toolWhy says what of a tool changed since its grant old: its files, its
// contract, or both; "" when there is no grant or nothing changed.
func toolWhy(old *plan.Grant, now *plan.ToolBinds) string {
	if old == nil {
		return ""
	}
	var was plan.ToolBinds
	if json.Unmarshal(old.Binds, &was) != nil {
		return "its grant cannot be read"
	}
	var why []string
	if files := changedFiles(was.Files, now.Files); len(files) > 0 {
		why = append(why, "files changed: "+strings.Join(files, ", "))
	}
	if c := changedBinds(was, now); len(c) > 0 && c[0] != "binds" {
		why = append(why, strings.Join(c, ", ")+" changed")
	}
	return strings.Join(why, "; ")
}

// hookWhy says what of a hook changed since its grant old: its contract,
// or the tool it runs; "" when there is no grant or nothing changed.
func hookWhy(old *plan.Grant, now *plan.HookBinds) string {
	if old == nil {
		return ""
	}
	var was plan.HookBinds
	if json.Unmarshal(old.Binds, &was) != nil {
		return "its grant cannot be read"
	}
	var why []string
	if c := changedBinds(was, now); len(c) > 0 && c[0] != "binds" {
		c = slices.DeleteFunc(c, func(k string) bool { return k == "tool_digest" })
		if len(c) > 0 {
			why = append(why, strings.Join(c, ", ")+" changed")
		}
	}
	if was.ToolDigest != now.ToolDigest {
		why = append(why, "the tool it runs changed")
	}
	return strings.Join(why, "; ")
}

// packageGrants are the grants of pkg on provider in gs, by "kind item".
func packageGrants(gs []*plan.Grant, provider, pkg string) map[string]*plan.Grant {
	out := map[string]*plan.Grant{}
	for _, g := range gs {
		if g.Provider == provider && g.Package == pkg {
			out[g.Kind+" "+g.Item] = g
		}
	}
	return out
}

// installedVersion is the version of ip as installed: its manifest, each
// tool's files as its grant binds them (or as the plan stages them), and
// the members dalo wrote.
func (s *Store) installedVersion(ip *InstalledPackage, ledger map[string]*plan.Grant) *version {
	v := &version{valid: true, m: ip.Manifest, tools: map[string]map[string]plan.FileDigest{}, members: map[string]map[string]string{}}
	for _, h := range ip.Hooks {
		v.tools[h.Hook.Tool.ID] = toDigests(h.Hook.Tool.Files)
	}
	for key, g := range ledger {
		var b plan.ToolBinds
		if g.Kind == plan.GrantTool && json.Unmarshal(g.Binds, &b) == nil {
			v.tools[strings.TrimPrefix(key, "tool ")] = b.Files
		}
	}
	for _, o := range ip.owned() {
		v.members[o.Ref] = o.Files
	}
	return v
}

// currentVersion is the selected package's version now, with the files of
// only the members ip has written, which are the ones to compare.
func (s *Store) currentVersion(sel *Selection, ip *InstalledPackage) *version {
	i := slices.Index(sel.Loaded.Packages, sel.Pkg)
	v := versionOf(sel.Loaded, i, sel.References())
	for ref := range v.members {
		if !slices.ContainsFunc(ip.owned(), func(o OwnedTree) bool { return o.Ref == ref }) {
			delete(v.members, ref)
		}
	}
	return v
}

// NotInForce lists the installed hooks of pkg on provider that are not in
// force, each with why, as doctor judges them: an update with nothing new
// to approve still installs again to put them back (an update killed
// after its plan switched and before its entries were written leaves a
// hook on an event it adds so).
func (s *Store) NotInForce(provider, pkg string) ([]string, error) {
	fs, err := s.Forces()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range fs {
		if f.Provider == provider && f.Package == pkg && !f.InForce {
			out = append(out, fmt.Sprintf("hook %s on %s: %s", f.Hook, f.Event, f.Why))
		}
	}
	in, err := s.Installed(provider)
	if err != nil {
		return nil, err
	}
	if ip := in.Find(pkg); ip != nil {
		for _, o := range ip.owned() {
			if len(o.Earlier) > 0 {
				out = append(out, MemberKey(o.Ref)+": "+incomplete)
			}
		}
	}
	return out, nil
}

// incomplete says what a member whose record still keeps earlier bytes
// (OwnedTree.Earlier) is: one an install or update began to replace and
// was stopped before it completed.
const incomplete = "its install did not complete (dalo was stopped part way): where the harness reads it may still be the earlier bytes"

// An Outdated is an installed package whose source differs now from what
// was approved and installed.
type Outdated struct {
	Package  string `json:"package"`
	Provider string `json:"provider"`
	// State: "outdated" (it differs), "gone" (its source no longer has
	// it), "invalid" (its source has it, and it does not validate).
	State string `json:"state"`
	Why   string `json:"why,omitempty"` // gone, invalid: what
	// From and To are the commits of a git source: installed, and pinned.
	From        string        `json:"installed_commit,omitempty"`
	To          string        `json:"source_commit,omitempty"`
	Grants      []GrantChange `json:"grants"` // each not carried over
	Differences []Difference  `json:"differences"`
	// FileDiffs are the unified diffs of the text files that changed.
	FileDiffs []FileDiff `json:"file_diffs"`
}

// Outdated lists every installed package, on every provider, whose source
// now differs from its grants and install: the source as pinned, or a
// directory as it is now. It fetches nothing and writes nothing.
func (s *Store) Outdated() ([]Outdated, error) {
	names, err := s.InstalledProviders()
	if err != nil {
		return nil, err
	}
	ts, err := s.Tables()
	if err != nil {
		return nil, err
	}
	gs, err := s.Grants()
	if err != nil {
		return nil, err
	}
	var out []Outdated
	for _, name := range names {
		in, err := s.Installed(name)
		if err != nil {
			return nil, err
		}
		t, err := ts.Resolve(name + "@" + in.Version)
		if err != nil {
			continue // no table for what is installed: doctor says so
		}
		loaded := map[string]*Selection{}  // source id → validated once for t
		installed := map[string][]string{} // source id → its packages installed
		for _, ip := range in.Packages {
			_, pkgName, _ := ParsePackageRef(ip.Package)
			installed[ip.Source] = append(installed[ip.Source], pkgName)
		}
		for i := range in.Packages {
			ip := &in.Packages[i]
			o := Outdated{Package: ip.Package, Provider: name, From: ip.Commit, Grants: []GrantChange{}, Differences: []Difference{}, FileDiffs: []FileDiff{}}
			base := loaded[ip.Source]
			if base == nil {
				// Those of its packages installed here, and what they
				// require: not the whole source.
				if base, err = s.load(ip.Source, t.Key(), installed[ip.Source]); err != nil {
					return nil, err
				}
				loaded[ip.Source] = base
			}
			if base.Source.Git != nil {
				o.To = base.Source.Git.Commit
			}
			_, pkgName, _ := ParsePackageRef(ip.Package)
			sel, err := base.pick(pkgName)
			switch {
			case errors.Is(err, ErrNoPackage):
				o.State, o.Why = "gone", err.Error()
			case err != nil:
				return nil, err
			default:
				if verr := sel.Valid(); verr != nil {
					o.State, o.Why = "invalid", verr.Error()
					break
				}
				u, err := s.planUpdate(sel, in, gs)
				if err != nil {
					return nil, err
				}
				if u.Current() {
					continue
				}
				o.State, o.Differences, o.FileDiffs = "outdated", u.Differences, s.FileDiffs(u)
				for _, g := range u.Grants {
					if g.State != GrantUnchanged {
						o.Grants = append(o.Grants, g)
					}
				}
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// The journal of an update, in PendingDir: which package and provider its
// pending grants are for, the grants to revoke once they are the
// ledger's, and whether the install switched.
type journal struct {
	Schema    int      `json:"schema"`
	Provider  string   `json:"provider"`
	Package   string   `json:"package"`
	Pending   []string `json:"pending"`
	Revoke    []string `json:"revoke"`
	Installed bool     `json:"installed"`
}

const journalFile = "update.json"

// Update applies u: under the store's lock, it writes the grants u asks
// for as pending (see plan.PendingDir), installs the package with them
// through the same install as 'dalo plugin install', then makes them the
// ledger's and revokes the grants of tools and hooks the package no
// longer has. Dispatch honours a pending grant only for a plan that names
// it, so at every step either the previous install or the new one is in
// force; a run killed part way is settled by the next writer (see
// settlePending). The ledger must still hold what u was planned from.
func (s *Store) Update(u *Update, d Dispatcher, opt InstallOptions) (*InstallResult, error) {
	if opt.DryRun {
		opt.Grants = grantMap(u.Asks())
		return s.install(u.Sel, d, opt)
	}
	l, err := s.Lock()
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	for _, c := range u.Grants {
		cur, err := s.Grant(plan.GrantID(u.Sel.Table.Name, u.Sel.Identity, c.Kind, c.Item))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if (cur == nil) != (c.Old == nil) || cur != nil && cur.Digest != c.Old.Digest {
			return nil, fmt.Errorf("the grant of %s %s changed since the update was shown; nothing was written: run 'dalo plugin update' again", c.Kind, c.Item)
		}
	}
	asks := u.Asks()
	j := journal{Schema: 1, Provider: u.Sel.Table.Name, Package: u.Sel.Identity.String(), Pending: []string{}, Revoke: []string{}}
	for _, g := range asks {
		j.Pending = append(j.Pending, g.ID)
	}
	for _, c := range u.Grants {
		if c.State == GrantGone {
			j.Revoke = append(j.Revoke, c.Old.ID)
		}
	}
	if err := s.writePending(&j, asks); err != nil {
		s.dropPending()
		return nil, err
	}
	step("update:pending")
	opt.Grants = grantMap(asks)
	res, err := s.install(u.Sel, d, opt)
	if err != nil {
		// Nothing of the update is in force: its grants go.
		s.dropPending()
		return nil, err
	}
	step("update:installed")
	j.Installed = true
	if err := writeJSON(s.path(plan.PendingDir, journalFile), j); err != nil {
		return nil, err
	}
	if err := s.promotePending(&j); err != nil {
		return nil, err
	}
	return res, nil
}

func grantMap(gs []*plan.Grant) map[string]*plan.Grant {
	out := map[string]*plan.Grant{}
	for _, g := range gs {
		out[g.ID] = g
	}
	return out
}

// writePending writes the journal, then the pending grants.
func (s *Store) writePending(j *journal, gs []*plan.Grant) error {
	dir := s.path(plan.PendingDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("writing pending grants: %w", err)
	}
	if err := writeJSON(filepath.Join(dir, journalFile), j); err != nil {
		return err
	}
	for _, g := range gs {
		if err := writeFile(filepath.Join(dir, plan.GrantFile(g.ID)), grantBytes(g), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// promotePending moves the pending grants into the ledger, each replacing
// the ledger's file atomically, then revokes what the journal says, then
// drops the journal.
func (s *Store) promotePending(j *journal) error {
	if err := os.MkdirAll(s.path("grants"), 0o700); err != nil {
		return err
	}
	for i, id := range j.Pending {
		from := s.path(plan.PendingDir, plan.GrantFile(id))
		if _, err := os.Lstat(from); errors.Is(err, fs.ErrNotExist) {
			continue // moved before a kill
		}
		if err := os.Rename(from, s.grantPath(id)); err != nil {
			return fmt.Errorf("approving %s: %w", id, err)
		}
		if i == 0 {
			step("update:first-promoted")
		}
	}
	if err := plan.SyncDir(s.path("grants")); err != nil {
		return err
	}
	step("update:promoted")
	if err := s.DeleteGrants(j.Revoke); err != nil {
		return err
	}
	return s.dropPending()
}

// dropPending removes the pending grants and the journal, the journal
// last: a kill in between leaves a journal with fewer grants, never a
// grant without one.
func (s *Store) dropPending() error {
	dir := s.path(plan.PendingDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Name() != journalFile {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	if err := os.Remove(filepath.Join(dir, journalFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if os.Remove(dir) == nil { // empty: no update is under way
		return plan.SyncDir(s.Dir)
	}
	return plan.SyncDir(dir)
}

// settlePending finishes or undoes an update a kill interrupted, under the
// store's lock: if its install switched (the journal says so, or a plan
// names one of its pending grants, which dispatch then honours) its
// pending grants become the ledger's and the grants it revokes go;
// otherwise its pending grants are dropped, and the previous install,
// still in force, keeps the ledger it had, but for the grants of members
// the install record already names, whose bytes install began to write:
// those become the ledger's, so that the ledger, the record and what the
// harness reads agree (TestCrashDuringMemberUpdate).
func (s *Store) settlePending() {
	var j journal
	err := readJSON(s.path(plan.PendingDir, journalFile), &j)
	if errors.Is(err, fs.ErrNotExist) {
		s.dropPending() // grants without a journal: never an update's whole state
		return
	}
	switched := err == nil && j.Installed
	if err == nil && !switched {
		scopes, nerr := s.allScopes()
		if nerr != nil {
			return // settled by a writer that can read the plans
		}
		named := map[string]bool{}
		// A member's grant is named by no plan but by the install record:
		// once it names a pending grant, install has begun to replace the
		// member's bytes with the approved ones (the record keeps the old
		// ones as Earlier until it completes), so that grant stands even
		// where the plan, not yet switched, keeps the others' old grants.
		recorded := map[string]bool{}
		for _, sc := range scopes {
			n, nerr := plan.GrantsNamed(sc.scopePath("plans"))
			if nerr != nil {
				return
			}
			maps.Copy(named, n)
			in, rerr := sc.Installed(j.Provider)
			if rerr != nil {
				return // settled by a writer that can read the record
			}
			if ip := in.Find(j.Package); ip != nil {
				for _, o := range ip.owned() {
					if o.Grant != nil {
						recorded[o.Grant.ID+" "+o.Grant.Digest] = true
					}
				}
			}
		}
		var members []string
		for _, id := range j.Pending {
			var g plan.Grant
			if readJSON(s.path(plan.PendingDir, plan.GrantFile(id)), &g) != nil {
				continue
			}
			switch {
			case named[g.ID+" "+g.Digest]:
				switched = true
			case recorded[g.ID+" "+g.Digest]:
				members = append(members, id)
			}
		}
		if !switched && len(members) > 0 {
			// Those member grants become the ledger's, the rest go.
			s.promotePending(&journal{Schema: 1, Provider: j.Provider, Package: j.Package, Pending: members})
			return
		}
	}
	if switched {
		s.promotePending(&j)
		return
	}
	s.dropPending()
}

// pendingGrants reads the pending grants, by id, for doctor: what
// dispatch holds a hook to where the ledger's is not the one its plan
// names.
func (s *Store) pendingGrants() map[string]*plan.Grant {
	out := map[string]*plan.Grant{}
	ents, err := os.ReadDir(s.path(plan.PendingDir))
	if err != nil {
		return out
	}
	for _, e := range ents {
		if e.Name() == journalFile || isTemp(e.Name()) || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		if g, err := s.readGrant(s.path(plan.PendingDir, e.Name())); err == nil {
			out[g.ID] = g
		}
	}
	return out
}
