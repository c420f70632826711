package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"

	"dalo/engine"
	"dalo/hooksfile"
	"dalo/hooktrust"
	"dalo/instruction"
	"dalo/internal/termtext"
	"dalo/internal/unidiff"
	"dalo/plan"
	"dalo/providers"
)

// An InstallResult says what install did or, for a dry run, would do.
type InstallResult struct {
	Provider  string
	Config    string   // the harness configuration file
	Diff      string   // unified diff of Config; "" when unchanged
	TrustFile string   // the harness's trust file, when install changes it
	TrustDiff string   // unified diff of TrustFile; "" when unchanged
	Moved     []string // trust keys of the user's hooks the change moves
	Hooks     []string // "hook-id on Event"
	Staged    []string // staged tool roots
	Skills    []string // skill directories written
	Agents    []string // agent files written
	Fallbacks []string
	Omitted   []string
	Notes     []string
}

// A BlockedError lists why a package cannot be installed on a target (or,
// with Verb, removed from it).
type BlockedError struct {
	Package, Provider string
	Reasons           []string
	Verb              string // "install" when empty
}

// Error is "cannot install PACKAGE on PROVIDER:" and every reason on its
// own line: the user sees all that blocks it at once.
func (e *BlockedError) Error() string {
	verb := e.Verb
	if verb == "" {
		verb = "install"
	}
	return fmt.Sprintf("cannot %s %s on %s:\n  %s", verb, e.Package, e.Provider, strings.Join(e.Reasons, "\n  "))
}

// member is a skill or agent install would write: the files its grant
// approved, under that grant.
type member struct {
	ref, src, dest string
	dir            bool
	files          map[string]plan.FileDigest
	grant          plan.GrantRef
}

// InstallOptions are how install runs.
type InstallOptions struct {
	// DryRun computes everything and writes nothing.
	DryRun bool
	// Trust records the harness's trust for dalo's own entries, where the
	// harness runs only hooks its user trusted (Codex), as its review
	// would, with the hashes Harness, the harness's executable, reports.
	Trust   bool
	Harness string
	// Chosen says the user named the table (--provider NAME@VERSION)
	// rather than dalo finding the harness of that version: the record
	// keeps it, and doctor and status say so.
	Chosen bool
	// Grants are grants to install with instead of the ledger's, by id:
	// those an update is about to write (see [Store.Update]).
	Grants map[string]*plan.Grant
}

// Install installs the selected package on its provider: it stages the
// exact approved tool bytes, writes the package's skills and agents where
// the harness reads them, copies the dispatcher d into the store,
// rewrites the provider's dispatch plan and the dispatcher entries of the
// harness configuration, which call that copy. It refuses, writing
// nothing, when a required part is missing, blocked, unapproved or
// unsupported, or when tool bytes differ from their grant.
func (s *Store) Install(sel *Selection, d Dispatcher, opt InstallOptions) (*InstallResult, error) {
	if err := sel.Valid(); err != nil {
		return nil, err
	}
	if !opt.DryRun {
		l, err := s.Lock()
		if err != nil {
			return nil, err
		}
		defer l.Unlock()
	}
	return s.install(sel, d, opt)
}

// install is Install, under the store's lock the caller holds unless
// opt.DryRun: it decides everything first (planInstall), then writes
// (apply). A dry run stops after the plan.
func (s *Store) install(sel *Selection, d Dispatcher, opt InstallOptions) (*InstallResult, error) {
	p, err := s.planInstall(sel, d, opt)
	if err != nil {
		return nil, err
	}
	if opt.DryRun {
		return p.res, nil
	}
	if err := s.apply(p); err != nil {
		return nil, err
	}
	return p.res, nil
}

// An installPlan is everything an install decided, and nothing written
// yet: what it reports, the install record it leads to, the tool trees to
// stage, the members to write, and the new text of the harness
// configuration and trust file with what they hold now.
type installPlan struct {
	res     *InstallResult
	sel     *Selection
	pkg     string
	prev    *InstalledPackage // the package's install record before, or nil
	ip      InstalledPackage  // its record after, but for the members written
	next    Installed         // the provider's install record after
	stages  map[string]stagedTool
	members []member
	dc      *dispatcherCopy
	cfg     string       // the harness configuration file
	old     []byte       // its text now (nil: it does not exist)
	newCfg  []byte       // its text after (nil: removed)
	st      HarnessState // what dalo's entries in it are now
	newSt   HarnessState // and after
	te      *trustEdit
}

// A stagedTool is the approved files of a tool install stages.
type stagedTool struct{ files map[string]plan.FileDigest }

// planInstall decides what installing the selected package does, reading
// the store, the package and the harness configuration, and writing
// nothing: the plan apply writes, or refuses with why. Its steps decide
// the hooks, the members, the instructions and the required packages, each
// adding what blocks the install; then, if nothing does, the harness
// configuration and trust the new state needs.
func (s *Store) planInstall(sel *Selection, d Dispatcher, opt InstallOptions) (*installPlan, error) {
	p, err := s.newInstallDraft(sel, opt)
	if err != nil {
		return nil, err
	}
	if err := p.planHooks(); err != nil {
		return nil, err
	}
	if err := p.planMembers(); err != nil {
		return nil, err
	}
	if err := p.planInstructions(); err != nil {
		return nil, err
	}
	p.planRequires()
	p.planDropped()
	t, pkg, blocks, res, ip := p.t, p.pkg, p.blocks, p.res, p.ip
	if len(blocks) > 0 {
		// Each reason is one line, and may quote the package's text.
		for i := range blocks {
			blocks[i] = termtext.Escape(blocks[i])
		}
		return nil, &BlockedError{Package: pkg, Provider: t.Key(), Reasons: blocks}
	}
	res.Omitted = ip.Omitted
	res.Fallbacks = ip.Fallbacks

	return s.planHarness(p, d)
}

// An installDraft is what planInstall's steps decided so far: the install
// record taking shape, what blocks the install, and the grants that need
// renewal.
type installDraft struct {
	s       *Store
	sel     *Selection
	opt     InstallOptions
	t       *providers.Table
	pkg     string
	in      *Installed
	prev    *InstalledPackage
	res     *InstallResult
	ip      InstalledPackage
	blocks  []string              // why the install cannot go ahead
	renew   []string              // why each grant that needs renewal does
	stages  map[string]stagedTool // tool id → its approved files
	acts    []MemberAction
	members []member
}

// newInstallDraft starts the install record of sel's package.
func (s *Store) newInstallDraft(sel *Selection, opt InstallOptions) (*installDraft, error) {
	t := sel.Table
	pkg := sel.Identity.String()
	in, err := s.Installed(t.Name)
	if err != nil {
		return nil, err
	}
	prev := in.Find(pkg)
	ip := InstalledPackage{Package: pkg, Source: sel.Identity.Source, Hooks: []InstalledHook{}, Staged: []string{}, Skills: []OwnedTree{}, Agents: []OwnedTree{}, Omitted: []string{}, Fallbacks: []string{}, Manifest: sel.Pkg.Manifest}
	if sel.Source.Git != nil {
		ip.Commit = sel.Source.Git.Commit
	}
	return &installDraft{s: s, sel: sel, opt: opt, t: t, pkg: pkg, in: in, prev: prev,
		res: &InstallResult{Provider: t.Key()}, ip: ip, stages: map[string]stagedTool{}}, nil
}

// omit records what cannot be installed: what #Unmet says of its
// requirement, blocking the install (a required part) or leaving it out
// (an optional one).
func (p *installDraft) omit(requirement, what string) {
	if plan.UnmetBlocks[requirement] {
		p.blocks = append(p.blocks, what)
	} else {
		p.ip.Omitted = append(p.ip.Omitted, what)
	}
}

// planHooks installs each hook that is supported, approved and unchanged
// since approval; a changed grant needs renewal.
func (p *installDraft) planHooks() error {
	s, sel, opt, t, pkg, res, ip := p.s, p.sel, p.opt, p.t, p.pkg, p.res, &p.ip
	m := sel.Pkg.Manifest
	// The grants' states: the answer review shows, with the grants this
	// command approves counted as the ledger's.
	toolStates, hookStates, err := s.GrantStates(sel, opt.Grants)
	if err != nil {
		return err
	}
	for i := range m.Hooks {
		h := &m.Hooks[i]
		c := sel.Caps[h.ID]
		if c.Status != providers.Supported {
			p.omit(h.Requirement, fmt.Sprintf("hook %s is %s on %s: %s", h.ID, orUnknown(c.Status), t.Key(), c.Reason))
			continue
		}
		tool := sel.Tool(h.Tool)
		if why := NotHere(h.Tool, tool.Platforms); why != "" {
			p.omit(h.Requirement, fmt.Sprintf("hook %s cannot run here: %s", h.ID, why))
			continue
		}
		ts, hs := toolStates[h.Tool], hookStates[h.ID]
		for _, st := range []GrantState{ts, hs} {
			if st.State == GrantUnknown {
				return st.Err
			}
		}
		if ts.State == GrantNotApproved || hs.State == GrantNotApproved {
			what := "hook " + h.ID
			if ts.State == GrantNotApproved {
				what = fmt.Sprintf("hook %s (its tool %s)", h.ID, h.Tool)
			}
			p.omit(h.Requirement, fmt.Sprintf("%s is not approved for %s: run 'dalo plugin review %s --provider %s', then 'dalo plugin approve %s --provider %s --hook %s'", what, t.Name, pkg, t.Name, pkg, t.Name, h.ID))
			continue
		}
		tg, hg, tb, td := ts.Grant, hs.Grant, ts.Tool, ts.Digest
		if ts.State == GrantChanged {
			var approved plan.ToolBinds
			if err := json.Unmarshal(tg.Binds, &approved); err != nil {
				return fmt.Errorf("%s is corrupt: %v", s.grantPath(tg.ID), err)
			}
			changed := changedFiles(approved.Files, tb.Files)
			why := fmt.Sprintf("tool %s changed since it was approved", h.Tool)
			if len(changed) > 0 {
				why += "; files changed:\n    " + strings.Join(changed, "\n    ")
			} else {
				why += " (its " + strings.Join(changedBinds(approved, tb), ", ") + " changed)"
			}
			if !slices.Contains(p.renew, why) {
				p.renew = append(p.renew, why)
			}
			continue
		}
		hb := hs.Hook
		if hs.State == GrantChanged {
			why := "its event binding, effect or failure handling differs"
			var approved plan.HookBinds
			if json.Unmarshal(hg.Binds, &approved) == nil {
				if approved.ToolDigest != td {
					why = fmt.Sprintf("its grant names an earlier grant of its tool %s, approved again since", h.Tool)
				} else if c := changedBinds(approved, hb); len(c) > 0 {
					why = "its " + strings.Join(c, ", ") + " changed"
				}
			}
			p.renew = append(p.renew, fmt.Sprintf("hook %s changed since it was approved (%s)", h.ID, why))
			continue
		}
		p.stages[h.Tool] = stagedTool{tb.Files}
		ip.Hooks = append(ip.Hooks, InstalledHook{Event: c.NativeEvent, Hook: plan.PlannedHook{
			Package: pkg, Hook: h.ID, Subject: h.Subject, Phase: h.Phase, Effect: h.Effect,
			Requirement: h.Requirement, ToolNames: hb.Matcher, TimeoutMS: h.TimeoutMS,
			FailurePolicy: h.FailurePolicy, ErrorVisibility: h.ErrorVisibility, Bindings: hb.Bindings,
			ToolGrant: plan.GrantRef{ID: tg.ID, Digest: tg.Digest}, HookGrant: plan.GrantRef{ID: hg.ID, Digest: hg.Digest},
			Tool: plan.PlannedTool{ID: tool.ID, Runtime: tool.Runtime, Entry: tool.Entry, Argv: tb.Argv, Env: tool.Env, Inputs: tb.Inputs, Files: hexFiles(tb.Files)},
		}})
		events := []string{c.NativeEvent}
		for _, ev := range hb.AlsoEvents {
			// The row's question is asked there too: the same hook,
			// under the same grants, answers it.
			ip.Hooks = append(ip.Hooks, InstalledHook{Event: ev, Hook: ip.Hooks[len(ip.Hooks)-1].Hook})
			events = append(events, ev)
		}
		res.Hooks = append(res.Hooks, h.ID+" on "+strings.Join(events, ", "))
	}
	return nil
}

// planMembers decides what install does with each member, once, for
// review too. A skill or an agent is written only with a grant for exactly
// the bytes it has now: the harness runs what it says. Every grant that
// needs renewal is refused here, hooks' and members' together.
func (p *installDraft) planMembers() error {
	s, sel, opt, t, pkg := p.s, p.sel, p.opt, p.t, p.pkg
	acts, err := s.MemberActions(sel, t, os.Getenv)
	if err != nil {
		return err
	}
	p.acts = acts
	memberStates, err := s.MemberStates(sel, acts, opt.Grants)
	if err != nil {
		return err
	}
	var unapproved, changedMembers []string // by MemberKey
	for _, a := range acts {
		if a.Action != MemberSkill && a.Action != MemberSubagent {
			continue
		}
		key := MemberKey(a.Ref)
		st := memberStates[key]
		switch st.State {
		case GrantUnknown:
			return st.Err
		case GrantNotApproved:
			unapproved = append(unapproved, key)
			p.blocks = append(p.blocks, fmt.Sprintf("%s (%s) is not approved for %s: install writes it where %s reads it only with a grant for its exact bytes", key, a.Requirement, t.Name, t.Harness))
			continue
		case GrantChanged:
			changedMembers = append(changedMembers, key)
			why := memberWhy(st.Grant, st.Member)
			if why == "" {
				why = "its grant binds other bytes"
			}
			p.renew = append(p.renew, termtext.Escape(fmt.Sprintf("%s changed since it was approved; %s", key, why)))
			continue
		}
		p.members = append(p.members, member{ref: a.Ref, src: a.Src, dest: a.Dest, dir: a.Dir, files: st.Member.Files, grant: plan.GrantRef{ID: st.Grant.ID, Digest: st.Grant.Digest}})
	}
	if len(p.renew) > 0 {
		// Every grant that needs renewal, in one refusal and one command:
		// following a command that named only the first would leave the
		// others' actions denied still.
		what := "again, each tool with every hook that runs it"
		if len(p.renew) == len(changedMembers) {
			what = "them again"
		}
		p.renew = append(p.renew, fmt.Sprintf("review with 'dalo plugin review %s --provider %s', then approve %s: '%s'", pkg, t.Name, what, s.ReapproveCommand(sel)))
		return &BlockedError{Package: pkg, Provider: t.Key(), Reasons: p.renew}
	}
	if len(unapproved) > 0 {
		p.blocks = append(p.blocks, fmt.Sprintf("review with 'dalo plugin review %s --provider %s', then approve them: 'dalo plugin approve %s --provider %s%s'", pkg, t.Name, pkg, t.Name, memberFlags(unapproved)))
	}

	return nil
}

// planInstructions records the fallbacks and notes of the members install
// does not write, and the instructions a required member needs in force.
func (p *installDraft) planInstructions() error {
	s, sel, t, pkg, res, ip := p.s, p.sel, p.t, p.pkg, p.res, &p.ip
	var states []InstructionState
	for _, a := range p.acts {
		switch a.Action {
		case MemberSkill, MemberSubagent:
		case MemberFallback:
			ip.Fallbacks = append(ip.Fallbacks, a.Ref+": "+a.Text)
		case MemberInstruction:
			if !plan.UnmetBlocks[a.Requirement] {
				res.Notes = append(res.Notes, fmt.Sprintf("%s (%s): %s", a.Ref, a.Requirement, a.Text))
				break
			}
			// A member that blocks unmet (#Unmet: a required one) blocks
			// activation until it is in force: an instruction enabled in
			// a file the harness reads.
			id := instruction.ID{Source: sel.Identity.Source, Selector: engine.ParseRef(a.Ref).Selector}
			if src := engine.ParseRef(a.Ref).Source; src != "" {
				id.Source = src
			}
			ip.Instructions = append(ip.Instructions, id)
			if states == nil {
				var err error
				if states, err = s.InstructionStates(); err != nil {
					return err
				}
			}
			if ok, projects := instructionEnabled(t, states, id); !ok {
				p.blocks = append(p.blocks, notEnabled(t, pkg, a.Ref, projects))
			}
		case MemberBlocks:
			p.blocks = append(p.blocks, a.Ref+": "+a.Text)
		default:
			ip.Omitted = append(ip.Omitted, a.Ref+": "+a.Text)
		}
	}
	return nil
}

// planRequires records the packages this one requires, which must be
// installed on this provider first.
func (p *installDraft) planRequires() {
	sel, t, res, ip := p.sel, p.t, p.res, &p.ip
	for _, rq := range sel.Pkg.Manifest.Plugin.Requires {
		ref := engine.ParseRef(rq.Ref)
		src := ref.Source
		if src == "" {
			src = sel.Identity.Source
		}
		if rq.Requirement == plan.RequirementRequired {
			ip.Requires = append(ip.Requires, src+":"+ref.Selector)
		}
		if p.in.Find(src+":"+ref.Selector) == nil {
			msg := fmt.Sprintf("%s (%s) is not installed on %s; install %s:%s first", rq.Ref, rq.Requirement, t.Name, src, ref.Selector)
			if plan.UnmetBlocks[rq.Requirement] {
				p.blocks = append(p.blocks, msg)
			} else {
				res.Notes = append(res.Notes, msg)
			}
		}
	}
}

// planDropped refuses to remove a member the package dropped since its
// last install if it was changed where it was written.
func (p *installDraft) planDropped() {
	if p.prev != nil {
		// Members still in the package were checked with the others
		// (MemberActions); these are the ones it dropped since.
		dropped := InstalledPackage{}
		for _, o := range p.prev.owned() {
			if !slices.ContainsFunc(p.acts, func(a MemberAction) bool { return a.Dest == o.Path }) {
				dropped.Skills = append(dropped.Skills, o)
			}
		}
		for _, k := range changedOwned(&dropped) {
			p.blocks = append(p.blocks, k+"; move it away, dalo never overwrites it")
		}
	}
}

// planHarness builds the provider's new install record from the draft,
// and the harness configuration and trust it needs.
func (s *Store) planHarness(p *installDraft, d Dispatcher) (*installPlan, error) {
	sel, opt, t, pkg, in, prev, res, ip, stages, members := p.sel, p.opt, p.t, p.pkg, p.in, p.prev, p.res, p.ip, p.stages, p.members
	// The new state, and the harness configuration it needs.
	next := *in
	next.Packages = append([]InstalledPackage(nil), in.Packages...)
	next.Version, next.Chosen = t.Version, opt.Chosen
	for _, st := range stages {
		ip.Staged = append(ip.Staged, plan.TreeDigest(st.files))
	}
	// Tools with the same bytes share one staged tree.
	sort.Strings(ip.Staged)
	ip.Staged = slices.Compact(ip.Staged)
	for i := range ip.Hooks {
		ip.Hooks[i].Hook.Tool.Root = s.StagedDir(plan.TreeDigest(stages[ip.Hooks[i].Hook.Tool.ID].files))
	}
	if i := next.find(pkg); i >= 0 {
		next.Packages[i] = ip
	} else {
		next.Packages = append(next.Packages, ip)
	}
	cfg, err := configFile(t)
	if err != nil {
		return nil, err
	}
	res.Config = cfg
	old, err := readConfig(cfg)
	if err != nil {
		return nil, err
	}
	st := in.Harness
	if st.File != "" && st.File != cfg {
		return nil, &hooksfile.Error{File: cfg, Msg: fmt.Sprintf("dalo's entries are in %s; run 'dalo plugin remove' there first", st.File)}
	}
	dc, err := s.dispatcherCopy(d)
	if err != nil {
		return nil, err
	}
	o := s.ownerOf(t)
	want, err := s.wantEntries(t, &next, dc)
	if err != nil {
		return nil, err
	}
	newCfg, newSt, err := editConfig(o, cfg, old, st, want)
	if err != nil {
		return nil, err
	}
	if err := hooksfile.CheckInForce(t, cfg, newCfg, want); err != nil {
		return nil, err
	}
	res.Diff = unidiff.Diff(cfg, old, newCfg)
	te, err := s.planTrust(t, st, newSt, cfg, newCfg, opt.Trust, opt.Harness)
	if err != nil {
		return nil, err
	}
	if te != nil {
		newSt.Trust, newSt.TrustFileCreated = te.records, te.created
		if te.changed() {
			res.TrustFile, res.TrustDiff = te.file, unidiff.Diff(te.file, te.old, te.new)
		}
		res.Moved = hooktrust.Moved(o, cfg, old, newCfg)
	}
	for _, mb := range members {
		if mb.dir {
			res.Skills = append(res.Skills, mb.dest)
		} else {
			res.Agents = append(res.Agents, mb.dest)
		}
	}
	for _, d := range ip.Staged {
		res.Staged = append(res.Staged, s.StagedDir(d))
	}
	if t.Config.Trust.Required && len(newSt.Entries) > 0 && !opt.Trust {
		var stale []string
		for _, ev := range slices.Sorted(maps.Keys(newSt.Entries)) {
			if r, ok := newSt.Trust[ev]; !ok || !reflect.DeepEqual(r.Entry, newSt.Entries[ev]) {
				stale = append(stale, ev)
			}
		}
		if len(stale) > 0 {
			how := "trust them in its /hooks review"
			if t.Config.Trust.State != nil {
				how = "run this again with --trust, or trust them in its /hooks review"
			}
			res.Notes = append(res.Notes, fmt.Sprintf("%s runs only hooks you trusted, and has no trust dalo recorded for its entries of %s as they are now: %s; until then they do not run ('dalo doctor' checks)", t.Harness, strings.Join(stale, ", "), how))
		}
	}
	return &installPlan{
		res: res, sel: sel, pkg: pkg, prev: prev, ip: ip, next: next,
		stages: stages, members: members, dc: dc,
		cfg: cfg, old: old, newCfg: newCfg, st: st, newSt: newSt, te: te,
	}, nil
}

// apply writes what p decided, in an order that leaves every state a
// reader or a crash can see whole (see the package documentation).
func (s *Store) apply(p *installPlan) error {
	sel, pkg, prev, ip, next, stages, members, dc := p.sel, p.pkg, p.prev, p.ip, p.next, p.stages, p.members, p.dc
	cfg, old, newCfg, st, newSt, te := p.cfg, p.old, p.newCfg, p.st, p.newSt, p.te
	t := sel.Table
	// Every directory of the user's install writes into must take a new
	// file, or nothing is written: an install that stopped at the harness
	// configuration would leave its plan in place and its entries out.
	dirs := []string{filepath.Dir(cfg)}
	if te.changed() {
		dirs = append(dirs, filepath.Dir(te.file))
	}
	for _, mb := range members {
		dirs = append(dirs, filepath.Dir(mb.dest))
	}
	for _, d := range dirs {
		if err := probeWritable(d); err != nil {
			return err
		}
	}

	// Write: staged trees, the record (it owns what follows before it is
	// written), members, the plan, the harness configuration.
	for _, tool := range slices.Sorted(maps.Keys(stages)) {
		if _, err := s.Stage(sel.PkgDir(), stages[tool].files); err != nil {
			return err
		}
	}
	step("install:staged")
	if len(newSt.Entries) > 0 {
		if err := s.placeDispatcher(dc); err != nil {
			return err
		}
	}
	step("install:dispatcher")
	written, contents := ownMembers(members, prev, &next, &ip)
	next.Packages[next.find(pkg)] = ip
	if old == nil && newSt.CreatedDir == "" {
		newSt.CreatedDir = missingAbove(cfg) // recorded before it is created
	}
	// Members dalo wrote before with the same bytes, every file present
	// and unchanged, stay as they are, so that readers never miss them;
	// the others are replaced, and a file the user deleted is restored.
	same, stale := keptMembers(prev, written)
	// Until the configuration is written, the record keeps the entries
	// dalo wrote before (or will write): a crash in between leaves entries
	// dalo still recognises as its own. Until the plan is switched and the
	// members written, it keeps the previous install's staged trees, which
	// the plan in use runs, and the members it wrote, whose old bytes are
	// still dalo's own (see [OwnedTree.Earlier]).
	next.Harness = mergeState(st, newSt)
	next.Packages[next.find(pkg)] = pending(ip, prev, same)
	if err := s.putInstalled(&next); err != nil {
		return err
	}
	step("install:recorded")
	next.Packages[next.find(pkg)] = ip
	if prev != nil {
		if kept := removeOwnedKept(&stale); len(kept) > 0 {
			return fmt.Errorf("%s: kept files changed since dalo wrote them:\n  %s", pkg, strings.Join(kept, "\n  "))
		}
	}
	for i, mb := range members {
		if same[mb.dest] {
			continue
		}
		if err := writeMember(mb, contents[i]); err != nil {
			return err
		}
	}
	step("install:members")
	if err := s.putPlan(t, &next, "install:plan-generation"); err != nil {
		return err
	}
	step("install:plan")
	if err := writeConfig(cfg, old, newCfg); err != nil {
		return err
	}
	step("install:config")
	if err := te.write(); err != nil {
		return err
	}
	// The entries call a dispatcher of this plan schema now: the plans of
	// others, and their generations, go.
	if err := plan.DropOtherSchemas(s.scopePath("plans"), t.Name); err != nil {
		return err
	}
	next.Harness = newSt
	if err := s.putInstalled(&next); err != nil {
		return err
	}
	if err := s.gc(); err != nil {
		return err
	}
	return nil
}

// ownMembers is the record of each member apply writes, in ip and in
// written, and the approved files writeMember copies for it (contents).
func ownMembers(members []member, prev *InstalledPackage, next *Installed, ip *InstalledPackage) (written []OwnedTree, contents []map[string]plan.FileDigest) {
	for _, mb := range members {
		ot := OwnedTree{Ref: mb.ref, Path: mb.dest, CreatedDir: missingAbove(mb.dest)}
		if prev != nil && ot.CreatedDir == "" {
			for _, o := range prev.owned() {
				if o.Path == mb.dest {
					ot.CreatedDir = o.CreatedDir // a reinstall: dalo still created it
				}
			}
		}
		if ot.CreatedDir == "" {
			// A directory dalo created for another member (of any package
			// here) holds this one too: whichever is removed last takes it
			// away once empty.
			ot.CreatedDir = createdFor(next, filepath.Dir(mb.dest))
		}
		// The approved listing: writeMember copies each file only while it
		// has the digest approved.
		files := mb.files
		ot.Files = hexFiles(files)
		grant := mb.grant
		ot.Grant = &grant
		written = append(written, ot)
		contents = append(contents, files)
		if mb.dir {
			ip.Skills = append(ip.Skills, ot)
		} else {
			ip.Agents = append(ip.Agents, ot)
		}
	}
	return written, contents
}

// keptMembers says which members dalo wrote before (prev) it leaves as
// they are, with the same bytes, every file present and unchanged (same),
// and which it replaces (stale).
func keptMembers(prev *InstalledPackage, written []OwnedTree) (same map[string]bool, stale InstalledPackage) {
	same = map[string]bool{}
	if prev != nil {
		for _, o := range prev.owned() {
			if slices.ContainsFunc(written, func(w OwnedTree) bool {
				return w.Path == o.Path && reflect.DeepEqual(w.Files, o.Files)
			}) && intactOwned(&o) {
				same[o.Path] = true
			} else {
				stale.Skills = append(stale.Skills, o)
			}
		}
	}
	return same, stale
}

// pending is the record of ip that install writes before it writes the
// members and switches the plan: ip, with what of prev a run killed before
// the final record still leaves in use, and prev's manifest and commit. Staged keeps prev's trees too, the
// plan in use runs them; each member prev wrote that install rewrites
// (same says which it keeps as they are) accepts prev's bytes as dalo's
// own; and members the package dropped stay recorded until removed.
func pending(ip InstalledPackage, prev *InstalledPackage, same map[string]bool) InstalledPackage {
	if prev == nil {
		return ip
	}
	out := ip
	// What was installed is what an update compares with until the
	// install completes: a run killed before keeps asking for the new
	// version's grants.
	out.Manifest, out.Commit = prev.Manifest, prev.Commit
	out.Staged = append(append([]string(nil), ip.Staged...), prev.Staged...)
	slices.Sort(out.Staged)
	out.Staged = slices.Compact(out.Staged)
	olds := map[string]OwnedTree{}
	for _, o := range prev.owned() {
		olds[o.Path] = o
	}
	withEarlier := func(trees []OwnedTree) []OwnedTree {
		out := make([]OwnedTree, len(trees))
		for i, t := range trees {
			out[i] = t
			o, ok := olds[t.Path]
			if !ok || same[t.Path] {
				continue
			}
			delete(olds, t.Path)
			out[i].Earlier = earlier(t, o)
		}
		return out
	}
	out.Skills = withEarlier(ip.Skills)
	out.Agents = withEarlier(ip.Agents)
	for _, o := range prev.Skills {
		if _, dropped := olds[o.Path]; dropped && !same[o.Path] {
			out.Skills = append(out.Skills, o)
		}
	}
	for _, o := range prev.Agents {
		if _, dropped := olds[o.Path]; dropped && !same[o.Path] {
			out.Agents = append(out.Agents, o)
		}
	}
	return out
}

// earlier is what t.Earlier must hold while t replaces o at the same path:
// every digest of o, Files and Earlier, that t.Files does not have.
func earlier(t, o OwnedTree) map[string][]string {
	out := map[string][]string{}
	add := func(rel, d string) {
		if t.Files[rel] != d && !slices.Contains(out[rel], d) {
			out[rel] = append(out[rel], d)
		}
	}
	for rel, d := range o.Files {
		add(rel, d)
	}
	for rel, ds := range o.Earlier {
		for _, d := range ds {
			add(rel, d)
		}
	}
	for rel := range out {
		slices.Sort(out[rel])
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// mergeState is a harness state that recognises the entries of both.
func mergeState(a, b HarnessState) HarnessState {
	out := b
	out.CreatedFile = a.CreatedFile || b.CreatedFile
	out.CreatedHooks = a.CreatedHooks || b.CreatedHooks
	if out.CreatedDir == "" {
		out.CreatedDir = a.CreatedDir
	}
	out.Entries = map[string]hooksfile.Entry{}
	out.Created = map[string]bool{}
	out.Interior = map[string]string{}
	for _, st := range []HarnessState{a, b} {
		for k, v := range st.Interior {
			out.Interior[k] = v
		}
		for k, v := range st.Entries {
			out.Entries[k] = v
		}
		for k, v := range st.Created {
			out.Created[k] = out.Created[k] || v
		}
	}
	return out
}

func hexFiles(files map[string]plan.FileDigest) map[string]string {
	out := make(map[string]string, len(files))
	for p, d := range files {
		out[p] = d.SHA256
	}
	return out
}

// createdFor is the directory dalo created, recorded for a member in
// next, that dir is in, or "".
func createdFor(next *Installed, dir string) string {
	for _, ip := range next.Packages {
		for _, o := range ip.owned() {
			if c := o.CreatedDir; c != "" && (dir == c || strings.HasPrefix(dir, c+string(filepath.Separator))) {
				return c
			}
		}
	}
	return ""
}

// ownedPaths maps every member path dalo wrote on this provider to the
// package that owns it.
func ownedPaths(in *Installed, _ string) map[string]string {
	out := map[string]string{}
	for _, ip := range in.Packages {
		for _, o := range ip.owned() {
			out[o.Path] = ip.Package
		}
	}
	return out
}

// listFiles digests a skill directory (every regular file under it) or an
// agent file ("" → its digest). A skill of another registered source was never
// walked by validation, so the package limits apply here too; symlinks and
// special files are skipped, as validation warns (W064, W065), since they
// cannot be copied as the reviewed bytes.
func listFiles(src string, dir bool, lim *engine.Limits) (map[string]plan.FileDigest, error) {
	out := map[string]plan.FileDigest{}
	if !dir {
		d, err := hashFile(src)
		if err != nil {
			return nil, err
		}
		out[""] = d
		return out, nil
	}
	entries, total := 0, int64(0)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == src {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		if entries++; entries > lim.PackageEntries {
			return fmt.Errorf("%s has more than %d entries", src, lim.PackageEntries)
		}
		if d.IsDir() {
			if strings.Count(filepath.ToSlash(rel), "/")+1 > lim.DirectoryDepth {
				return fmt.Errorf("%s is nested deeper than %d directories", p, lim.DirectoryDepth)
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fd, err := hashFile(p)
		if err != nil {
			return err
		}
		if fd.Size > lim.FileBytes {
			return fmt.Errorf("%s is %d bytes, more than the %d-byte file limit", p, fd.Size, lim.FileBytes)
		}
		if total += fd.Size; total > lim.PackageBytes {
			return fmt.Errorf("%s holds more than %d bytes", src, lim.PackageBytes)
		}
		out[filepath.ToSlash(rel)] = fd
		return nil
	})
	return out, err
}

// writeMember copies a skill directory or an agent file to its place,
// atomically: the directory is built under a temporary name and renamed.
// files are the digests listFiles took ("" for an agent file); each source
// file is read as readChecked does, so one swapped since (for a FIFO, a
// symlink, a larger file) fails with an error naming it.
func writeMember(mb member, files map[string]plan.FileDigest) error {
	if err := os.MkdirAll(filepath.Dir(mb.dest), 0o755); err != nil {
		return fmt.Errorf("installing %s: %w", mb.ref, err)
	}
	if !mb.dir {
		data, err := readChecked(mb.src, files[""])
		if err != nil {
			return fmt.Errorf("installing %s: %w", mb.ref, err)
		}
		return writeFile(mb.dest, data, memberMode(files[""]))
	}
	tmp, err := os.MkdirTemp(filepath.Dir(mb.dest), tempPrefix(filepath.Base(mb.dest))+plan.TempMark)
	if err != nil {
		return fmt.Errorf("installing %s: %w", mb.ref, err)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	// Held until the directory is renamed into place: another writer that
	// finds it knows it is not abandoned.
	held, err := os.Open(tmp)
	if err == nil {
		err = lockTemp(held)
		defer held.Close()
	}
	if err != nil {
		return fmt.Errorf("installing %s: %w", mb.ref, err)
	}
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		data, err := readChecked(filepath.Join(mb.src, filepath.FromSlash(rel)), files[rel])
		if err != nil {
			return fmt.Errorf("installing %s: %w", mb.ref, err)
		}
		dst := filepath.Join(tmp, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := writeFile(dst, data, memberMode(files[rel])); err != nil {
			return err
		}
	}
	// Every directory of the tree, deepest first, so that each entry is
	// durable in its parent before the tree is renamed into place (as
	// Stage does): a crash after the rename never leaves a tree with
	// subdirectories missing.
	var dirs []string
	filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := syncDir(dirs[i]); err != nil {
			return fmt.Errorf("installing %s: %w", mb.ref, err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, mb.dest); err != nil {
		return fmt.Errorf("installing %s: %w", mb.ref, err)
	}
	ok = true
	return syncDir(filepath.Dir(mb.dest))
}

// memberMode is the mode a member's file is written with: executable
// when its grant says so (a skill may ship a script it tells the model to
// run), as the package has it.
func memberMode(d plan.FileDigest) os.FileMode {
	if d.Executable {
		return 0o755
	}
	return 0o644
}

// probeWritable says why dalo cannot create a file in dir, or in the
// nearest directory above it that exists (where install would create
// it), by creating one and removing it.
func probeWritable(dir string) error {
	d := dir
	for {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		d = filepath.Dir(d)
	}
	f, err := os.CreateTemp(d, ".dalo-probe"+plan.TempMark)
	if err != nil {
		return fmt.Errorf("cannot write in %s: %v; nothing was written", d, unwrapPath(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// missingAbove is the outermost directory above path that does not exist.
func missingAbove(path string) string {
	out := ""
	for d := filepath.Dir(path); d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		out = d
	}
	return out
}

// changedBinds names the fields of a grant's binds (their JSON names:
// argv, env, failure_policy, ...) whose values differ between what was
// approved and what the source now asks, so that a refusal says what to
// review; files are listed file by file elsewhere.
func changedBinds(approved, now any) []string {
	var a, b map[string]json.RawMessage
	ja, _ := json.Marshal(approved)
	jb, _ := json.Marshal(now)
	if json.Unmarshal(ja, &a) != nil || json.Unmarshal(jb, &b) != nil {
		return []string{"binds"}
	}
	var out []string
	for k, v := range b {
		if k != "files" && !bytes.Equal(a[k], v) {
			out = append(out, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok && k != "files" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	if out == nil {
		out = []string{"binds"}
	}
	return out
}

// goos is the system a tool's platforms are checked against: install
// refuses a required hook whose tool excludes it, doctor reports one
// installed elsewhere (a DALO_HOME shared with another system). A variable
// so that a test can install as another system would.
var goos = runtime.GOOS

// NotHere says why a tool that declares platforms cannot run on this
// system ("its tool notify declares platforms macos, and this system is
// linux"), or "" when it can: what install, review and doctor say.
func NotHere(tool string, platforms []string) string {
	if plan.ToolRunsOn(platforms, goos) {
		return ""
	}
	return fmt.Sprintf("its tool %s declares platforms %s, and this system is %s", tool, strings.Join(platforms, ", "), systemName(goos))
}

// ThisSystem is the platform a tool would declare for this system, or its
// GOOS where the rules name none.
func ThisSystem() string { return systemName(goos) }

// systemName is the platform a tool would declare for the system whose
// GOOS is goos, or the GOOS itself where the rules name none.
func systemName(goos string) string {
	if p, ok := plan.SystemPlatforms[goos]; ok {
		return p
	}
	return goos
}
