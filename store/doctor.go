package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"dalo/hooksfile"
	"dalo/internal/termtext"
	"dalo/plan"
	"dalo/providers"
)

// A Finding is one thing doctor checked.
type Finding struct {
	// Status is ok, problem (doctor exits 1), warning, unverified, note,
	// or, on the last lines, in force.
	Status  string `json:"status"`
	Subject string `json:"subject"`
	Message string `json:"message"`
}

// Finding statuses.
const (
	StatusOK         = "ok"
	StatusProblem    = "problem"
	StatusWarning    = "warning"
	StatusUnverified = "unverified"
	StatusNote       = "note"
	StatusInForce    = "in force"
)

// DoctorOptions say how doctor checks.
type DoctorOptions struct {
	// Run runs the dispatcher of each harness entry dalo wrote, as the
	// harness would start it but without a shell, with --check: it loads
	// the plan and re-checks each hook's grants, digests and staged tree,
	// and runs no handler. Only an entry byte for byte what dalo writes is
	// run.
	Run bool
	// Getenv locates the harnesses' files (os.Getenv).
	Getenv func(string) string
	// Project is the project whose own settings doctor reads where a
	// table lists them (the current directory), or "" for none.
	Project string
}

// checkTimeout bounds one run of an entry's dispatcher with --check.
const checkTimeout = 10 * time.Second

// Doctor checks, without writing, that the store, the staged digests, the
// dispatch plans and the harness entries agree, and then says of every
// installed hook whether it is in force: whether the harness will call
// dalo's entry for its event and the dispatcher will run it. It reads
// under the store's shared lock (see [Store.ReadLock]), so that it sees no
// writer's half-done change, and reports that lock busy as an error.
func (s *Store) Doctor(opt DoctorOptions) ([]Finding, error) {
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	var out []Finding
	add := func(status, subject, format string, args ...any) {
		out = append(out, Finding{status, subject, fmt.Sprintf(format, args...)})
	}
	if fi, err := os.Stat(s.Dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			add(StatusOK, s.Dir, "no store yet: nothing registered, approved or installed")
			return out, nil
		}
		add(StatusProblem, s.Dir, "%v", err)
		return out, nil
	} else if !fi.IsDir() {
		add(StatusProblem, s.Dir, "not a directory")
		return out, nil
	}
	l, err := s.ReadLock(ReadLockWait)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	s.doctorSources(add)
	grants := s.doctorLedger(add)
	ts, err := s.Tables()
	if err != nil {
		add(StatusProblem, "providers", "%v", err)
		return out, nil
	}
	out = append(out, localTableFindings(ts)...)
	used := map[string]bool{}
	complete := true // every install record read: the unused staged trees are known
	var forces []HookForce
	inst, err := s.InstructionStates()
	if err != nil {
		add(StatusProblem, "instructions", "%v", err)
	}
	// The store's own scope, and the scope of the project doctor runs in
	// (the current directory or one above it) when dalo synced one there:
	// its installs are checked as the user's, each subject naming it.
	checked := []*Store{s}
	if s.project == nil && opt.Project != "" {
		if ps := s.ProjectScopeOf(opt.Project); ps != nil {
			checked = append(checked, ps)
		}
	}
	for _, sc := range checked {
		prefix := ""
		if sc.project != nil && s.project == nil {
			prefix = "project " + sc.project.Root + " "
		}
		names, err := sc.InstalledProviders()
		if err != nil {
			add(StatusProblem, prefix+"installs", "%v", err)
			return out, nil
		}
		records, all := sc.readRecords(names, prefix, add, used)
		complete = complete && all
		for _, name := range names {
			in := records[name]
			if in == nil || len(in.Packages) == 0 && len(in.Harness.Entries) == 0 {
				continue
			}
			t := plannedTable(ts, in, prefix, add)
			if t == nil {
				continue
			}
			var err error
			if sc.project != nil {
				// The project's files, where its harness reads them.
				if t, err = t.InProject(sc.project.Root); err != nil {
					add(StatusProblem, prefix+name, "%v", err)
					continue
				}
				// Whether the harness reads them only in a folder its
				// user trusted: dalo never records that trust.
				add(StatusNote, prefix+name, "%s", t.Config.Project.Trust.How)
				out = append(out, projectOthers(ts, t, names, prefix)...)
			}
			c := &forceCheck{s: sc, t: t, in: in, grants: grants, pending: s.pendingGrants(), opt: opt, records: records, instructions: inst}
			n := len(out)
			out = append(out, c.run()...)
			out = append(out, s.doctorHarness(ts, in)...)
			for i := n; i < len(out); i++ {
				out[i].Subject = prefix + out[i].Subject
			}
			for _, f := range c.forces {
				f.Provider = prefix + f.Provider
				forces = append(forces, f)
			}
		}
	}
	// The other scopes' packages use staged trees too.
	if !s.stagedOfOtherScopes(checked, used) {
		complete = false
	}
	if ents, err := os.ReadDir(s.path("staged")); err == nil && complete {
		for _, e := range ents {
			if !used[e.Name()] && !isTemp(e.Name()) {
				add(StatusProblem, "staged "+e.Name(), "no installed package uses it; the next install or remove deletes it")
			}
		}
	}
	for _, f := range forces {
		out = append(out, f.Finding())
	}
	return out, nil
}

// plannedTable is the table in's entries were planned from, or, when that
// one is gone (a local table removed or broken since), reported, the
// newest of its harness: the plan still holds the protocol, so dispatch
// goes on, and the rest is checked against that one. nil when there is
// none, reported.
func plannedTable(ts *providers.Tables, in *Installed, prefix string, add report) *providers.Table {
	name := in.Provider
	t, err := ts.Resolve(name + "@" + in.Version)
	if err == nil {
		return t
	}
	why := "dalo neither ships nor has verified a table for it any more"
	if b := ts.BrokenFor(name, in.Version); b != nil {
		why = "its local table cannot be used: " + b.Err.Error()
	}
	add(StatusProblem, prefix+name+"@"+in.Version, "dalo's entries were planned from the table of %s@%s, and %s: prove the version again with 'dalo providers verify %s', or plan them for a version dalo has a table for with 'dalo plugin install PACKAGE --provider %s'", name, in.Version, why, name, name)
	if t, err = ts.Resolve(name); err != nil {
		add(StatusProblem, prefix+name, "%v", err)
		return nil
	}
	return t
}

// projectOthers says, of a project's install on t's harness, which other
// harnesses run the hooks of its file too (their tables' project.others):
// dalo's entries there run in those sessions, under grants given for t's
// harness; and, when the project is synced for the other harness as well
// (names, its providers), that each hook runs twice on one call.
func projectOthers(ts *providers.Tables, t *providers.Table, names []string, prefix string) []Finding {
	var out []Finding
	seen := map[string]bool{t.Name: true}
	for _, a := range ts.All() {
		if seen[a.Name] {
			continue
		}
		seen[a.Name] = true
		o, _ := ts.Newest(a.Name)
		if o == nil || o.Config.Project == nil {
			continue
		}
		for _, po := range o.Config.Project.Others {
			if po.Harness != t.Name || po.Location.Path != t.Config.Project.Hooks.Path {
				continue
			}
			f := Finding{StatusNote, prefix + t.Name, fmt.Sprintf("%s: dalo's %s entries there run in %s sessions in this project too, under the grants you approved for %s; a hook binding a field those payloads lack fails under its policy", po.Means, t.Name, o.Harness, t.Name)}
			if slices.Contains(names, o.Name) {
				f.Status = StatusWarning
				f.Message += fmt.Sprintf("; synced for %s as well, each hook runs twice on a call neither denies, once from each harness's entries", o.Name)
			}
			out = append(out, f)
		}
	}
	return out
}

// stagedOfOtherScopes marks in used the staged trees the installs of the
// store's scopes other than checked use; false when it could not read
// them all.
func (s *Store) stagedOfOtherScopes(checked []*Store, used map[string]bool) (complete bool) {
	scopes, err := s.allScopes()
	if err != nil {
		return false
	}
	complete = true
	for _, sc := range scopes {
		if slices.ContainsFunc(checked, func(c *Store) bool { return c.projectID() == sc.projectID() }) {
			continue
		}
		ns, err := sc.InstalledProviders()
		if err != nil {
			complete = false
		}
		for _, n := range ns {
			in, err := sc.Installed(n)
			if err != nil {
				complete = false
				continue
			}
			for _, ip := range in.Packages {
				for _, d := range ip.Staged {
					used[d] = true
				}
			}
		}
	}
	return complete
}

// readRecords reads the install records of names, reporting each it
// cannot read (all is then false), and marks in used the staged trees
// they use.
func (s *Store) readRecords(names []string, prefix string, add report, used map[string]bool) (records map[string]*Installed, all bool) {
	records, all = map[string]*Installed{}, true
	for _, name := range names {
		in, err := s.Installed(name)
		if err != nil {
			add(StatusProblem, prefix+name, "%v", err)
			all = false
			continue
		}
		records[name] = in
		for _, ip := range in.Packages {
			for _, d := range ip.Staged {
				used[d] = true
			}
		}
	}
	return records, all
}

// A report adds a finding to doctor's.
type report func(status, subject, format string, args ...any)

// doctorSources checks that every registered source is readable: a git
// source's snapshot of its pin, a directory source's directory.
func (s *Store) doctorSources(add report) {
	srcs, err := s.Sources()
	if err != nil {
		add(StatusProblem, s.path("sources.json"), "%v", err)
	} else {
		for _, x := range srcs {
			fi, err := os.Stat(x.Path)
			switch {
			case x.Git != nil && (err != nil || !fi.IsDir()):
				add(StatusProblem, "source "+x.ID, "the snapshot of its pinned commit %s is missing (%s): write it again with 'dalo source update %s --to %s'", x.Git.Commit, x.Path, x.ID, x.Git.Commit)
			case x.Git != nil:
				add(StatusOK, "source "+x.ID, "%s, %s at commit %s", x.Git.URL, x.Git.RefName(), x.Git.Commit)
			case err != nil || !fi.IsDir():
				add(StatusProblem, "source "+x.ID, "%s is not a readable directory", x.Path)
			default:
				add(StatusOK, "source "+x.ID, "%s", x.Path)
			}
		}
	}
}

// doctorLedger reads the ledger, file by file, so that one corrupt grant
// does not hide the others.
func (s *Store) doctorLedger(add report) map[string]*plan.Grant {
	grants := map[string]*plan.Grant{}
	if ents, err := os.ReadDir(s.path("grants")); err == nil {
		for _, e := range ents {
			if isTemp(e.Name()) || !strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			g, err := s.grantFile(e.Name())
			if err != nil {
				add(StatusProblem, "ledger", "%v", err)
				continue
			}
			grants[g.ID] = g
		}
		add(StatusOK, "ledger", "%s", nouns(len(grants), "grant"))
	} else if !errors.Is(err, fs.ErrNotExist) {
		add(StatusProblem, "ledger", "%v", err)
	}
	return grants
}

// doctorHarness checks that the harness installed now is the version
// dalo's entries were planned for: an upgrade or a downgrade since needs a
// new plan, from the table of the version found (or says there is none).
// A version the user chose at install is said to be their choice.
func (s *Store) doctorHarness(ts *providers.Tables, in *Installed) []Finding {
	key := in.Provider + "@" + in.Version
	h, err := s.FindHarness(ts, in.Provider)
	if in.Chosen {
		f := Finding{StatusNote, key, fmt.Sprintf("%s is your choice (install --provider %s), not a version dalo found installed", key, key)}
		switch {
		case err != nil:
			f.Message += ": " + err.Error()
		case h.Version != in.Version:
			f.Status = StatusWarning
			f.Message += fmt.Sprintf(": the %s found is %s (%s)", in.Provider, h.Version, h.Path)
		}
		return []Finding{f}
	}
	if err != nil {
		return []Finding{{StatusWarning, key, "cannot tell which version is installed now: " + err.Error()}}
	}
	if h.Version == in.Version {
		msg := fmt.Sprintf("%s %s is installed (%s)", h.Name, h.Version, h.Path)
		if h.Table != nil && h.Table.Verified != nil {
			msg += "; " + VerifiedNote(h.Table)
		}
		return []Finding{{StatusOK, key, msg}}
	}
	var pkgs []string
	for _, ip := range in.Packages {
		pkgs = append(pkgs, ip.Package)
	}
	msg := fmt.Sprintf("%s %s is installed now (%s), and dalo's entries were planned for %s", h.Name, orVersion(h), h.Path, in.Version)
	switch {
	case h.Table == nil:
		msg += fmt.Sprintf("; dalo has evidence only for %s %s", h.Name, strings.Join(Versions(ts, h.Name), ", "))
		if b := ts.BrokenFor(h.Name, h.Version); b != nil {
			msg += fmt.Sprintf(" (the local table of %s cannot be used: %v)", b.Key, b.Err)
		}
		msg += fmt.Sprintf(": prove %s on this machine with 'dalo providers verify %s', then plan them for it with 'dalo plugin install PACKAGE --provider %s' for each of %s; or install one of those versions, or plan for a version of your choice with 'dalo plugin install PACKAGE --provider %s@VERSION'", orVersion(h), h.Name, h.Name, strings.Join(pkgs, ", "), h.Name)
	default:
		msg += fmt.Sprintf(": plan them for %s with 'dalo plugin install %s --provider %s' for each of %s", h.Version, "PACKAGE", h.Name, strings.Join(pkgs, ", "))
		if h.Table.Verified != nil {
			msg += " (" + VerifiedNote(h.Table) + ")"
		}
	}
	return []Finding{{StatusProblem, key, msg}}
}

// VerifiedNote says when a local table was proved: what install, review,
// approve, doctor and providers say of one.
func VerifiedNote(t *providers.Table) string {
	return fmt.Sprintf("its table was verified on this machine on %s (dalo %s, %s)", t.Verified.Date, t.Verified.Dalo, t.File)
}

// localTableFindings reports the local tables dalo does not use: broken
// ones, a problem, since a version the user proved is refused until they
// verify it again; and ones a shipped table of the same version shadows,
// a note, since they are read no more.
func localTableFindings(ts *providers.Tables) []Finding {
	var out []Finding
	for _, b := range ts.Broken() {
		name, _, _ := strings.Cut(b.Key, "@")
		out = append(out, Finding{StatusProblem, "local table " + b.Key, fmt.Sprintf("%v: install refuses %s until you verify it again with 'dalo providers verify %s' (or remove it with 'dalo providers remove %s')", b.Err, b.Key, name, b.Key)})
	}
	for _, t := range ts.Shadowed() {
		out = append(out, Finding{StatusNote, "local table " + t.Key(), fmt.Sprintf("this dalo ships a table for %s, which it uses instead of %s: remove that with 'dalo providers remove %s'", t.Key(), t.File, t.Key())})
	}
	return out
}

// orVersion is h's version, or what its --version printed.
func orVersion(h *Harness) string {
	if h.Version != "" {
		return h.Version
	}
	return fmt.Sprintf("%q", h.Output)
}

// A HookForce says whether one installed hook is in force: whether the
// harness will call dalo's entry for its event, and the dispatcher run it.
type HookForce struct {
	Provider string `json:"provider"`
	Package  string `json:"package"`
	Hook     string `json:"hook"`
	Event    string `json:"event"`
	Required bool   `json:"required"`
	InForce  bool   `json:"in_force"`
	// Why says why it is not in force, or, in force, what doctor could
	// not verify.
	Why        string `json:"why,omitempty"`
	Unverified bool   `json:"unverified,omitempty"`
}

// Finding is the line doctor ends with for f: a required hook not in force
// is a problem, an optional one a warning.
func (f HookForce) Finding() Finding {
	subj := fmt.Sprintf("%s %s/%s on %s", f.Provider, f.Package, f.Hook, f.Event)
	req := plan.RequirementOptional
	if f.Required {
		req = plan.RequirementRequired
	}
	switch {
	case f.InForce && f.Unverified:
		return Finding{StatusUnverified, subj, req + ", in force as far as dalo can tell: " + f.Why}
	case f.InForce:
		return Finding{StatusInForce, subj, req}
	case f.Required:
		return Finding{StatusProblem, subj, "required, NOT in force: " + f.Why}
	}
	return Finding{StatusWarning, subj, "optional, not in force: " + f.Why}
}

// Forces says of every hook installed on any provider whether it is in
// force, as doctor does, without running any dispatcher: what plugin
// status shows. It reads under the store's shared lock.
func (s *Store) Forces() ([]HookForce, error) {
	l, err := s.ReadLock(ReadLockWait)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	ts, err := s.Tables()
	if err != nil {
		return nil, err
	}
	grants := map[string]*plan.Grant{}
	gs, err := s.Grants()
	if err != nil {
		return nil, err
	}
	for _, g := range gs {
		grants[g.ID] = g
	}
	names, err := s.InstalledProviders()
	if err != nil {
		return nil, err
	}
	records := map[string]*Installed{}
	for _, name := range names {
		in, err := s.Installed(name)
		if err != nil {
			return nil, err
		}
		records[name] = in
	}
	inst, _ := s.InstructionStates()
	var out []HookForce
	for _, name := range names {
		in := records[name]
		t, err := ts.Resolve(name + "@" + in.Version)
		if err != nil {
			if t, err = ts.Resolve(name); err != nil {
				continue
			}
		}
		c := &forceCheck{s: s, t: t, in: in, grants: grants, pending: s.pendingGrants(), opt: DoctorOptions{Getenv: os.Getenv}, records: records, instructions: inst}
		c.run()
		out = append(out, c.forces...)
	}
	return out, nil
}

// A forceCheck checks one provider's install: the findings of doctor, and
// whether each hook is in force.
type forceCheck struct {
	s            *Store
	t            *providers.Table
	in           *Installed
	grants       map[string]*plan.Grant
	pending      map[string]*plan.Grant // an update's, not yet the ledger's (plan.PendingDir)
	opt          DoctorOptions
	records      map[string]*Installed
	instructions []InstructionState

	out    []Finding
	forces []HookForce
	// Why a hook is not in force: the whole harness (all), one event's
	// entry, one hook (by package/hook).
	all     string
	event   map[string]string
	hook    map[string]string
	trusted map[string]string // event → unverified trust, in force
}

// memberGrant checks the installed member o of pkg against the grant it
// was written under: the ledger still holds it, and every file has the
// approved bytes and exec bit (the bytes dalo wrote are the approved ones,
// so a change since is reported with the others the user made).
func (c *forceCheck) memberGrant(subj, pkg string, o *OwnedTree) {
	key := MemberKey(o.Ref)
	if o.Grant == nil {
		c.add(StatusWarning, subj, "%s was installed before skills and agents had grants: approve it ('dalo plugin approve %s --provider %s --member %s') and install again", termtext.Escape(key), pkg, c.t.Name, termtext.Escape(key))
		return
	}
	g := c.grants[o.Grant.ID]
	switch {
	case g == nil:
		c.add(StatusProblem, subj, "%s is installed where %s reads it, and its grant %s is gone: 'dalo plugin remove %s --provider %s' takes it away, or approve it and install again", termtext.Escape(key), c.t.Harness, termtext.Escape(o.Grant.ID), pkg, c.t.Name)
		return
	case g.Digest != o.Grant.Digest:
		c.add(StatusProblem, subj, "%s is installed with bytes its grant no longer approves (grant %s was approved again since): install again", termtext.Escape(key), termtext.Escape(o.Grant.ID))
		return
	}
	v, err := g.Decode()
	b, _ := v.(*plan.MemberBinds)
	if err != nil || b == nil {
		return // the ledger's own check reports it
	}
	for _, rel := range slices.Sorted(maps.Keys(b.Files)) {
		p, err := o.file(rel)
		if err != nil {
			continue
		}
		fd, err := hashFile(p)
		if err == nil && fd.SHA256 == b.Files[rel].SHA256 && fd.Executable != b.Files[rel].Executable {
			c.add(StatusProblem, subj, "%s: its exec bit differs from the approved one", termtext.Escape(p))
		}
	}
}

func (c *forceCheck) add(status, subject, format string, args ...any) {
	c.out = append(c.out, Finding{status, subject, fmt.Sprintf(format, args...)})
}

// reinstall says what writes the provider's plan, dispatch index and
// entries again: installing again a package installed on it (any one
// rewrites them all), or 'dalo sync' in the project dalo synced.
func (c *forceCheck) reinstall() string {
	if len(c.in.Packages) == 0 {
		return "run 'dalo plugin install' again"
	}
	u := GrantUse{Provider: c.t.Name, Project: c.s.Project(), Package: c.in.Packages[0].Package}
	if u.Project != "" {
		return "run " + u.Reinstall()
	}
	return "run " + u.Reinstall() + " again"
}

func (c *forceCheck) run() []Finding {
	c.event, c.hook, c.trusted = map[string]string{}, map[string]string{}, map[string]string{}
	s, t, in := c.s, c.t, c.in
	name := t.Name
	want, werr := PlanOf(t, in)
	have, err := s.ReadPlan(name)
	switch {
	case werr != nil:
		c.add(StatusProblem, name+" plan", "%v", werr)
		c.all = "its dispatch plan cannot be built: " + werr.Error()
	case errors.Is(err, fs.ErrNotExist) && len(want.Events) == 0:
	case err != nil:
		c.add(StatusProblem, name+" plan", "%v", err)
	default:
		a, _ := plan.Canonical(have)
		b, _ := plan.Canonical(want)
		if string(a) != string(b) {
			c.add(StatusProblem, name+" plan", "%s does not match what is installed; %s", s.planPath(name), c.reinstall())
		} else {
			c.add(StatusOK, name+" plan", "%s", nouns(len(have.Events), "native event"))
		}
	}
	if werr == nil {
		c.out = append(c.out, c.index(want)...)
	}
	for _, ip := range in.Packages {
		subj := name + " " + ip.Package
		checked := map[string]bool{} // a hook installed on several native events is checked once
		for _, h := range ip.Hooks {
			if checked[h.Hook.Hook] {
				continue
			}
			checked[h.Hook.Hook] = true
			key := ip.Package + "/" + h.Hook.Hook
			for _, ref := range []plan.GrantRef{h.Hook.ToolGrant, h.Hook.HookGrant} {
				g := c.grants[ref.ID]
				if p := c.pending[ref.ID]; p != nil && p.Digest == ref.Digest {
					g = p // dispatch holds the hook to it, as the update left it
				}
				switch {
				case g == nil:
					c.add(StatusProblem, subj, "hook %s will not run: grant %s was revoked; approve it again or remove the package", h.Hook.Hook, ref.ID)
					c.why(c.hook, key, "grant "+ref.ID+" was revoked")
				case g.Digest != ref.Digest:
					c.add(StatusProblem, subj, "hook %s will not run: grant %s changed since install; install again", h.Hook.Hook, ref.ID)
					c.why(c.hook, key, "grant "+ref.ID+" changed since install")
				}
			}
			if why := c.notHere(h.Hook.ToolGrant, h.Hook.Tool.ID); why != "" {
				st := StatusProblem
				if h.Hook.Requirement != plan.RequirementRequired {
					st = StatusWarning
				}
				c.add(st, subj, "hook %s cannot run on this system: %s; it was installed on another that shares this DALO_HOME: 'dalo plugin remove %s --provider %s' takes it away here", h.Hook.Hook, why, ip.Package, name)
				c.why(c.hook, key, "it cannot run on this system: "+why)
			}
			if c.t.MatchesNothing(h.Hook.ToolNames) {
				// Installed by a dalo from before install refused it.
				why := fmt.Sprintf("its tool_names (%s) name none of %s's native tools (%s), so it never runs",
					strings.Join(h.Hook.ToolNames, ", "), c.t.Harness, strings.Join(c.t.ToolNames(), ", "))
				st := StatusProblem
				if h.Hook.Requirement != plan.RequirementRequired {
					st = StatusWarning
				}
				c.add(st, subj, "hook %s: %s", h.Hook.Hook, why)
				c.why(c.hook, key, why)
			}
			if bad := VerifyStaged(h.Hook.Tool.Root, toDigests(h.Hook.Tool.Files)); len(bad) > 0 {
				c.add(StatusProblem, subj, "staged tool %s differs from its approved bytes: %s", h.Hook.Tool.ID, strings.Join(bad, ", "))
				c.why(c.hook, key, "its staged tool differs from the approved bytes")
			}
		}
		for _, ch := range changedOwned(&ip) {
			c.add(StatusProblem, subj, "%s", ch)
		}
		for _, o := range ip.owned() {
			if _, err := os.Lstat(o.Path); err != nil {
				c.add(StatusProblem, subj, "%s is missing; install again", o.Path)
				continue
			}
			if len(o.Earlier) > 0 {
				c.add(StatusProblem, subj, "%s: %s; 'dalo plugin install %s --provider %s' completes it", termtext.Escape(MemberKey(o.Ref)), incomplete, ip.Package, c.t.Name)
			}
			c.memberGrant(subj, ip.Package, &o)
		}
		c.required(&ip)
		c.add(StatusOK, subj, "installed: %s, %s, %s", nouns(len(checked), "hook"), nouns(len(ip.Skills), "skill"), nouns(len(ip.Agents), "agent"))
	}
	c.entries(want)
	c.switches()
	for _, ip := range in.Packages {
		for _, h := range ip.Hooks {
			f := HookForce{Provider: name, Package: ip.Package, Hook: h.Hook.Hook, Event: h.Event, Required: h.Hook.Requirement == plan.RequirementRequired}
			for _, why := range []string{c.all, c.event[h.Event], c.hook[ip.Package+"/"+h.Hook.Hook]} {
				if why != "" {
					f.Why = why
					break
				}
			}
			f.InForce = f.Why == ""
			if f.InForce && c.trusted[h.Event] != "" {
				f.Why, f.Unverified = c.trusted[h.Event], true
			}
			c.forces = append(c.forces, f)
		}
	}
	return c.out
}

// notHere says why the tool of an installed hook, by the platforms its
// grant binds, cannot run on this system, or "".
func (c *forceCheck) notHere(ref plan.GrantRef, tool string) string {
	g := c.grants[ref.ID]
	if g == nil {
		return "" // reported as revoked
	}
	v, err := g.Decode()
	if b, ok := v.(*plan.ToolBinds); ok && err == nil {
		return NotHere(tool, b.Platforms)
	}
	return ""
}

// why records the first reason of key in m.
func (c *forceCheck) why(m map[string]string, key, why string) {
	if m[key] == "" {
		m[key] = why
	}
}

// required reports a required member or dependency of ip that is not in
// force on this provider: a required package not installed here, a
// required instruction not enabled in this harness's user-wide file.
func (c *forceCheck) required(ip *InstalledPackage) {
	subj := c.t.Name + " " + ip.Package
	for _, dep := range ip.Requires {
		if c.in.Find(dep) == nil {
			c.add(StatusProblem, subj, "it requires %s, which is not installed on %s: install it, or remove %s", dep, c.t.Name, ip.Package)
		}
	}
	for _, id := range ip.Instructions {
		if ok, projects := instructionEnabled(c.t, c.instructions, id); !ok {
			ref := "instruction:" + id.Selector
			if id.Source != ip.Source {
				ref = "instruction:" + id.Source + ":" + id.Selector
			}
			c.add(StatusProblem, subj, "its %s", notEnabled(c.t, ip.Package, ref, projects))
		}
	}
}

// index checks that the dispatch index, what dispatch actually reads,
// holds for every event exactly the hooks and native protocol of want.
func (c *forceCheck) index(want *plan.Plan) []Finding {
	name := c.t.Name
	subj := name + " dispatch index"
	var bad []string
	for _, ev := range slices.Sorted(maps.Keys(want.Events)) {
		ef, err := plan.Load(c.s.scopePath("plans"), name, ev, func(*plan.Native) (string, bool) { return "", true })
		if err != nil {
			c.why(c.event, ev, "its dispatch index cannot be read: "+err.Error())
			return []Finding{{StatusProblem, subj, err.Error()}}
		}
		if ef == nil {
			bad = append(bad, ev+" is missing")
			c.why(c.event, ev, "the dispatch index has no "+ev+"; "+c.reinstall())
			continue
		}
		a, _ := plan.Canonical(struct {
			N plan.Native
			H []plan.PlannedHook
		}{ef.Native, ef.Hooks})
		b, _ := plan.Canonical(struct {
			N plan.Native
			H []plan.PlannedHook
		}{want.Natives[ev], want.Events[ev]})
		if string(a) != string(b) {
			bad = append(bad, ev+" differs")
			c.why(c.event, ev, "the dispatch index of "+ev+" differs from what is installed; "+c.reinstall())
		}
	}
	switch {
	case len(bad) > 0:
		return []Finding{{StatusProblem, subj, strings.Join(bad, ", ") + "; " + c.reinstall()}}
	case len(want.Events) == 0:
		return nil
	}
	return []Finding{{StatusOK, subj, nouns(len(want.Events), "native event")}}
}

// entries checks the harness entries: the file reads as the harness reads
// it, each of dalo's entries is present, unchanged, names this store and
// calls a dispatcher that runs (with Run, it runs it), and the harness
// trusts it where it runs only trusted hooks.
func (c *forceCheck) entries(want *plan.Plan) {
	s, t, in := c.s, c.t, c.in
	file := in.Harness.File
	if file == "" {
		file, _ = configFile(t)
	}
	doc, _, err := readUserFile(file, "", nil) // read only: a file dalo could not edit may still be read
	if err != nil {
		c.add(StatusProblem, file, "%v", err)
		c.all = err.Error()
		return
	}
	o := s.ownerOf(t)
	var owned []hooksfile.Found
	if doc != nil {
		if _, _, owned, err = o.Scan(file, doc); err != nil {
			msg := err.Error()
			if ce, ok := err.(*hooksfile.Error); ok && ce.File == file {
				msg = ce.Msg // the finding's subject names the file
			}
			c.add(StatusProblem, file, "%s", msg)
			c.all = err.Error()
			return
		}
	}
	seen := map[string]bool{}
	for _, f := range owned {
		seen[f.Event] = true
		rec, ok := in.Harness.Entries[f.Event]
		text := doc[f.Val.Start:f.Val.End]
		switch {
		case !ok:
			c.add(StatusProblem, file, "dalo entry for %s is not in the store: no installed package needs it; remove it by hand", f.Event)
			continue
		case !hooksfile.Same(text, rec):
			c.add(StatusProblem, file, "dalo entry for %s was changed since dalo wrote it", f.Event)
			c.why(c.event, f.Event, "dalo's "+f.Event+" entry in "+file+" was changed since dalo wrote it")
			continue
		}
		cmd, _ := hooksfile.ParseCommand(rec.Command(t))
		x := t.Expanded(rec.Command(t))
		switch {
		case x != "":
			c.add(StatusProblem, file, "dalo entry for %s holds %s, which %s replaces in its settings before it runs the command, so it runs another command than dalo wrote; %s", f.Event, x, t.Harness, c.reinstall())
			c.why(c.event, f.Event, "dalo's "+f.Event+" entry holds "+x+", which "+t.Harness+" rewrites")
			continue
		case cmd.Home == "":
			c.add(StatusProblem, file, "dalo entry for %s was written by an earlier dalo: it names no store, and calls %s, which may not stay; %s", f.Event, cmd.Program, c.reinstall())
			c.why(c.event, f.Event, "dalo's "+f.Event+" entry names no store; "+c.reinstall())
			continue
		case !canRun(cmd.Program) && (cmd.FailClosed || !cmd.Open && t.FailedCommandDenies(f.Event)):
			// The outage it is: the harness blocks every action of the
			// event, the guard of a fail_closed hook or the harness itself
			// (a failed hook command denies there).
			c.add(StatusProblem, file, "dalo entry for %s calls %s, which is missing or cannot run: %s blocks every %s action until it runs again; %s", f.Event, cmd.Program, t.Harness, f.Event, c.reinstall())
			c.why(c.event, f.Event, "its dispatcher "+cmd.Program+" is missing or cannot run, and "+t.Harness+" blocks every "+f.Event+" action meanwhile")
			continue
		case !canRun(cmd.Program):
			c.add(StatusProblem, file, "dalo entry for %s calls %s, which is missing or cannot run: the harness cannot dispatch, so its hooks do not run; %s", f.Event, cmd.Program, c.reinstall())
			c.why(c.event, f.Event, "its dispatcher "+cmd.Program+" is missing or cannot run")
			continue
		}
		if c.opt.Run {
			if why := c.runCheck(cmd, f.Event); why != "" {
				c.add(StatusProblem, file, "dalo entry for %s: %s", f.Event, why)
				c.why(c.event, f.Event, why)
				continue
			}
		}
		c.add(StatusOK, file, "dalo entry for %s present", f.Event)
	}
	for _, ev := range slices.Sorted(maps.Keys(want.Events)) {
		if !seen[ev] {
			c.add(StatusProblem, file, "dalo entry for %s is missing; %s", ev, c.reinstall())
			c.why(c.event, ev, "dalo's "+ev+" entry is missing from "+file)
		}
	}
	if t.Config.Trust.Required && len(owned) > 0 {
		c.trust(file, doc, owned)
	}
}

// runCheck runs the dispatcher of cmd, the command of dalo's entry for
// event, as the harness would start it but without a shell and with
// --check, and says why a hook would not run: the whole event ("" when
// the plan loaded), and each hook into c.hook. Only a command that is
// byte for byte what dalo writes is run.
func (c *forceCheck) runCheck(cmd hooksfile.Command, event string) string {
	rebuilt := cmd
	if rebuilt.FailClosed {
		w := wantEntryCommand(c.t, &dispatcherCopy{Dispatcher: Dispatcher{Hook: !cmd.Dalo}, Path: cmd.Program}, cmd.Home, event, true)
		rebuilt.Block, rebuilt.Continued = w.Block, w.Continued
	}
	if rebuilt.String() != c.in.Harness.Entries[event].Command(c.t) {
		return "its command is not one dalo writes; doctor does not run it"
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	argv := cmd.Argv("--check")
	x := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	x.Stdout, x.Stderr = &stdout, &stderr
	err := x.Run()
	if ctx.Err() != nil {
		return fmt.Sprintf("its dispatcher %s gave no answer within %v", cmd.Program, checkTimeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return "its dispatcher " + cmd.Program + " cannot dispatch: " + msg
	}
	var checks []struct {
		Package string `json:"package"`
		Hook    string `json:"hook"`
		Problem string `json:"problem"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &checks); err != nil {
		return fmt.Sprintf("its dispatcher %s answered --check with %q, not its report", cmd.Program, truncate(stdout.String(), 64))
	}
	got := map[string]bool{}
	for _, ch := range checks {
		got[ch.Package+"/"+ch.Hook] = true
		if ch.Problem != "" {
			c.why(c.hook, ch.Package+"/"+ch.Hook, "its dispatcher would not run it: "+ch.Problem)
		}
	}
	for _, ip := range c.in.Packages {
		for _, h := range ip.Hooks {
			if h.Event == event && !got[ip.Package+"/"+h.Hook.Hook] {
				c.why(c.hook, ip.Package+"/"+h.Hook.Hook, "the dispatch plan its dispatcher reads does not hold it; run 'dalo plugin install' again")
			}
		}
	}
	return ""
}

// switches reports the settings that keep the harness from running
// dalo's entries, as the table says it reads them: a file it drops, a
// switch of its off list set, a comment it cannot read past. Each names
// the file, the key and what the harness does.
func (c *forceCheck) switches() {
	t := c.t
	r := &hooksfile.Settings{Table: t, Getenv: c.opt.Getenv, Project: c.opt.Project, Entries: c.in.Harness.Entries}
	for _, o := range r.Off() {
		if _, ok := c.in.Harness.Entries[o.Event]; o.Event != "" && !ok {
			// Hooks of the user's own, on an event dalo has no entry for.
			c.add(StatusNote, o.File, "%s", o.Why)
			continue
		}
		c.add(StatusProblem, o.File, "%s", o.Why)
		if o.Event != "" {
			c.why(c.event, o.Event, o.Why)
		} else if c.all == "" {
			c.all = o.Why
		}
	}
	for _, w := range r.Warnings {
		c.add(StatusWarning, w.File, "%s", w.Msg)
	}
	// Only a table that lists a switch in a project's settings says a
	// project can switch hooks off; of any other doctor says nothing, since
	// a project's setting of the same name may switch nothing off there.
	project := slices.ContainsFunc(t.Config.Off, func(sw providers.Switch) bool { return sw.Location.Root == "project" })
	if !project || c.opt.Project == "" {
		return
	}
	c.add(StatusNote, t.Name, "%s also reads each project's own settings, which can switch hooks off for that project: doctor read those of %s, the current directory; run it in another project to check that one", t.Harness, c.opt.Project)
	// Those settings, and the project's hooks, only in a folder its user
	// trusted (the table's project trust): said, since dalo neither reads
	// nor gives that trust. A project's scope says it of itself (Doctor).
	if p := t.Config.Project; p != nil && p.Trust.Required && t.ProjectDir() == "" {
		c.add(StatusNote, t.Name, "in %s: %s", c.opt.Project, p.Trust.How)
	}
}

func toDigests(files map[string]string) map[string]plan.FileDigest {
	out := make(map[string]plan.FileDigest, len(files))
	for p, d := range files {
		out[p] = plan.FileDigest{SHA256: d}
	}
	return out
}

// truncate cuts s to n bytes, marked.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// nouns counts n of word in English: "1 hook", "2 hooks", "0 hooks".
func nouns(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
