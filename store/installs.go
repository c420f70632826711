package store

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"dalo/engine"
	"dalo/hooksfile"
	"dalo/instruction"
	"dalo/plan"
	"dalo/providers"
)

// Installed is what dalo installed for one provider: the packages, what
// each owns, and the dispatcher entries written into the harness
// configuration. installs/<provider>.json.
type Installed struct {
	Schema   int    `json:"schema"`
	Provider string `json:"provider"`
	Version  string `json:"version"`
	// Chosen says the user named the version's table at install
	// (--provider NAME@VERSION) instead of dalo finding it installed.
	Chosen   bool               `json:"chosen,omitempty"`
	Packages []InstalledPackage `json:"packages"`
	Harness  HarnessState       `json:"harness"`
}

// An InstalledPackage is one package installed on a provider.
type InstalledPackage struct {
	Package   string          `json:"package"` // source:name
	Source    string          `json:"source"`
	Hooks     []InstalledHook `json:"hooks"`
	Staged    []string        `json:"staged"` // tree digests under staged/
	Skills    []OwnedTree     `json:"skills"`
	Agents    []OwnedTree     `json:"agents"`
	Omitted   []string        `json:"omitted"`   // visible omissions
	Fallbacks []string        `json:"fallbacks"` // agents replaced by their inline fallback skill
	// Requires are the packages (SOURCE:NAME) it requires, required:
	// remove refuses to take one away while it is installed, and doctor
	// reports one that is not.
	Requires []string `json:"requires,omitempty"`
	// Instructions are its required instruction members: install refuses
	// while one is not enabled in the harness's user-wide file, and doctor
	// reports one that is not any more.
	Instructions []instruction.ID `json:"instructions,omitempty"`
	// Manifest is the package as installed, and Commit the commit of its
	// git source: what 'dalo plugin outdated' and 'dalo plugin update'
	// compare the source with now.
	Manifest *engine.Manifest `json:"manifest,omitempty"`
	Commit   string           `json:"commit,omitempty"`
}

// owned is every member dalo wrote for ip: its skills, then its agents.
func (ip *InstalledPackage) owned() []OwnedTree {
	return append(append([]OwnedTree(nil), ip.Skills...), ip.Agents...)
}

// An InstalledHook is a planned hook and the native event it runs on.
type InstalledHook struct {
	Event string           `json:"event"`
	Hook  plan.PlannedHook `json:"hook"`
}

// An OwnedTree is a skill directory or an agent file dalo wrote into a
// harness location: exactly the files listed, with their digests.
type OwnedTree struct {
	Ref   string            `json:"ref"`
	Path  string            `json:"path"`  // the skill directory or the agent file
	Files map[string]string `json:"files"` // relative path ("" for an agent file) → sha256
	// CreatedDir is the outermost directory above Path that dalo created
	// for it (such as ~/.agents); remove takes it away again once empty.
	CreatedDir string `json:"created_dir,omitempty"`
	// Earlier are the digests of bytes dalo wrote at these paths before
	// (relative path → digests), while a reinstall replaces them: the
	// record is written before the members, so a run killed in between
	// leaves dalo's old bytes on disk, and they must still read as dalo's
	// own, neither "changed" nor kept by remove. The reinstall's final
	// record drops them.
	Earlier map[string][]string `json:"earlier,omitempty"`
	// Grant is the member grant install wrote these bytes under; nil in
	// a record written before members had grants.
	Grant *plan.GrantRef `json:"grant,omitempty"`
}

// files lists every relative path the record owns, of Files and of
// Earlier, sorted.
func (o *OwnedTree) files() []string {
	seen := map[string]bool{}
	for rel := range o.Files {
		seen[rel] = true
	}
	for rel := range o.Earlier {
		seen[rel] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// agent says whether o is an agent file: its one key is "".
func (o *OwnedTree) agent() bool {
	_, f := o.Files[""]
	_, e := o.Earlier[""]
	return f || e
}

// owns says whether sha256 is the digest of bytes dalo wrote at rel.
func (o *OwnedTree) owns(rel, sha256 string) bool {
	if d, ok := o.Files[rel]; ok && d == sha256 {
		return true
	}
	return slices.Contains(o.Earlier[rel], sha256)
}

// file is the path of the owned file rel ("" for an agent file), or an
// error when rel, from the record, is not a local path: a corrupt or
// crafted record never makes dalo hash or remove a file outside the tree.
func (o *OwnedTree) file(rel string) (string, error) {
	if rel == "" {
		return o.Path, nil
	}
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", fmt.Errorf("%s: the install record names %q, not a path inside it", o.Path, rel)
	}
	return filepath.Join(o.Path, filepath.FromSlash(rel)), nil
}

// Providers lists the provider names of the known tables: the providers
// dalo can install on, not the ones it installed on (see
// [Store.InstalledProviders]).
func Providers() []string {
	ts, err := providers.Load()
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range ts.All() {
		if !seen[t.Name] {
			seen[t.Name] = true
			out = append(out, t.Name)
		}
	}
	sort.Strings(out)
	return out
}

// InstalledProviders lists, sorted, the providers that have an install
// record (installs/<provider>.json): what dalo installed, whether or not
// this dalo still has a table for the provider. An installs directory that
// cannot be read is an error, never "nothing installed": callers delete
// staged trees and allow a source's removal on this answer.
func (s *Store) InstalledProviders() ([]string, error) {
	ents, err := os.ReadDir(s.scopePath("installs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing install records: %w", err)
	}
	var out []string
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || name == "" || isTemp(e.Name()) || strings.HasPrefix(name, ".") {
			continue
		}
		out = append(out, name)
	}
	return out, nil // ReadDir sorts by name
}

func (s *Store) installsPath(provider string) string {
	return s.scopePath("installs", provider+".json")
}

// Installed reads what is installed for provider; empty when nothing is.
func (s *Store) Installed(provider string) (*Installed, error) {
	in := &Installed{Schema: 1, Provider: provider}
	err := readJSON(s.installsPath(provider), in)
	if errors.Is(err, fs.ErrNotExist) {
		return &Installed{Schema: 1, Provider: provider}, nil
	}
	if err != nil {
		return nil, err
	}
	return in, nil
}

func (in *Installed) find(pkg string) int {
	for i, p := range in.Packages {
		if p.Package == pkg {
			return i
		}
	}
	return -1
}

// Find returns the installed package pkg, or nil.
func (in *Installed) Find(pkg string) *InstalledPackage {
	if i := in.find(pkg); i >= 0 {
		return &in.Packages[i]
	}
	return nil
}

func (s *Store) putInstalled(in *Installed) error {
	if len(in.Packages) == 0 && len(in.Harness.Entries) == 0 {
		err := os.Remove(s.installsPath(in.Provider))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("removing %s: %w", s.installsPath(in.Provider), err)
		}
		return syncDir(s.scopePath("installs"))
	}
	sort.Slice(in.Packages, func(i, j int) bool { return in.Packages[i].Package < in.Packages[j].Package })
	if err := s.putProject(); err != nil {
		return err
	}
	return writeJSON(s.installsPath(in.Provider), in)
}

func (s *Store) planPath(provider string) string {
	return s.scopePath("plans", provider+".json")
}

// ReadPlan reads the dispatch plan of provider.
func (s *Store) ReadPlan(provider string) (*plan.Plan, error) {
	var p plan.Plan
	if err := readJSON(s.planPath(provider), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// PlanOf is the dispatch plan of everything in: every hook by native
// event, in stable hook-identity order (package, then hook id), and the
// native protocol of each of those events from t, the table of the
// installed version. Install writes it; dispatchtest builds its plans with
// it too.
func PlanOf(t *providers.Table, in *Installed) (*plan.Plan, error) {
	p := &plan.Plan{Schema: plan.Schema, Provider: in.Provider, Version: in.Version, Events: map[string][]plan.PlannedHook{}, Natives: map[string]plan.Native{}}
	for _, ip := range in.Packages {
		for _, h := range ip.Hooks {
			if _, ok := plan.Runtimes[h.Hook.Tool.Runtime]; !ok {
				return nil, fmt.Errorf("dispatch plan of %s: hook %s of %s: the rules have no runtime %q", in.Provider, h.Hook.Hook, h.Hook.Package, h.Hook.Tool.Runtime)
			}
			p.Events[h.Event] = append(p.Events[h.Event], h.Hook)
		}
	}
	for ev, hs := range p.Events {
		plan.SortHooks(hs)
		n, err := NativeOf(t, ev)
		if err != nil {
			return nil, fmt.Errorf("dispatch plan of %s: %w", in.Provider, err)
		}
		p.Natives[ev] = n
	}
	return p, nil
}

// putPlan writes the dispatch plan of in: the index dispatch reads (a new
// generation made current at once, see plan.WriteIndex), then the whole
// plan beside it. With nothing installed it removes both, the whole plan
// first, so that an interrupted removal leaves dispatch the previous
// generation, whole. stepName names the crash-test step between writing
// the new generation and making it current (or, removing, between the
// whole plan and the index).
func (s *Store) putPlan(t *providers.Table, in *Installed, stepName string) error {
	p, err := PlanOf(t, in)
	if err != nil {
		return err
	}
	if len(p.Events) == 0 {
		err := os.Remove(s.planPath(in.Provider))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", s.planPath(in.Provider), err)
		}
		step(stepName)
		return plan.RemoveIndex(s.scopePath("plans"), in.Provider)
	}
	if err := os.MkdirAll(s.scopePath("plans"), 0o755); err != nil {
		return fmt.Errorf("writing dispatch plan: %w", err)
	}
	if err := plan.WriteIndex(s.scopePath("plans"), p, func() { step(stepName) }); err != nil {
		return err
	}
	return writeJSON(s.planPath(in.Provider), p)
}

// wantEntries is the dispatcher entry of every native event in use,
// calling the store's dispatcher copy c: with --fail-closed and its guard
// on an event where a required fail_closed hook is installed. Its shape is
// the table's (config.hooks.entry).
func (s *Store) wantEntries(t *providers.Table, in *Installed, c *dispatcherCopy) (map[string]hooksfile.Entry, error) {
	sum := map[string]int{}
	closed := map[string]bool{}
	for _, ip := range in.Packages {
		for _, h := range ip.Hooks {
			sum[h.Event] += h.Hook.TimeoutMS
			if plan.Guarded[h.Hook.Requirement][h.Hook.FailurePolicy] {
				closed[h.Event] = true
			}
		}
	}
	out := map[string]hooksfile.Entry{}
	for ev, ms := range sum {
		// The hooks of an event run concurrently, but only so many at
		// once (dispatch's maxParallel), so their sum bounds the worst
		// case; the dispatcher needs a little more to report a timeout.
		timeout := t.NativeTimeout(ms + dispatchSlackMS)
		if max, ok := t.TimeoutClampMS(ev); ok {
			// The harness cuts it anyway, and warns when it does.
			timeout = min(timeout, t.NativeTimeout(max))
		}
		cmd := wantEntryCommand(t, c, s.Dir, ev, closed[ev])
		cmd.Project = s.projectID()
		e, err := t.Entry(ev, cmd.String(), timeout)
		if err != nil {
			return nil, err
		}
		out[ev] = e
	}
	return out, nil
}

// dispatchSlackMS is the time the dispatcher itself may take beyond its
// handlers' timeouts.
const dispatchSlackMS = 5000

// gcStaged removes staged trees that neither an install record of any
// provider nor a dispatch plan or index names: what remove, reinstall or
// an interrupted run left behind. The plans count on their own: a run
// killed between recording its new state and switching the index leaves
// hooks dispatch still runs from trees the record dropped. The caller holds
// the store lock. It deletes nothing unless it read every install record
// and every plan, and nothing while a dispatch runs: a dispatch that read
// the plan before this writer switched it may still run handlers from the
// trees the switch left unused (see [plan.HoldDispatch]). It then skips
// collecting, without waiting: the unused trees only take space until a
// later write finds no dispatch running and collects them.
func (s *Store) gcStaged() error {
	// Every scope's records and plans count: a project's install runs
	// the same staged trees as the user's.
	scopes, err := s.allScopes()
	if err != nil {
		return fmt.Errorf("collecting staged trees: %w", err)
	}
	used := map[string]bool{}
	for _, sc := range scopes {
		names, err := sc.InstalledProviders()
		if err != nil {
			return fmt.Errorf("collecting staged trees: %w", err)
		}
		for _, p := range names {
			in, err := sc.Installed(p)
			if err != nil {
				return fmt.Errorf("collecting staged trees: %w", err)
			}
			for _, ip := range in.Packages {
				for _, d := range ip.Staged {
					used[d] = true
				}
			}
		}
		roots, err := plan.Roots(sc.scopePath("plans"))
		if err != nil {
			return fmt.Errorf("collecting staged trees: %w", err)
		}
		for _, r := range roots {
			used[filepath.Base(r)] = true
		}
	}
	ents, err := os.ReadDir(s.path("staged"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("collecting staged trees: %w", err)
	}
	var drop []string
	for _, e := range ents {
		if !used[e.Name()] && !isTemp(e.Name()) {
			drop = append(drop, e.Name())
		}
	}
	if len(drop) == 0 {
		return nil
	}
	release, busy, err := plan.ExcludeDispatch(s.Dir)
	if err != nil {
		return fmt.Errorf("collecting staged trees: %w", err)
	}
	if busy {
		return nil // a dispatch runs: the next write collects them
	}
	defer release()
	return s.unstage(drop)
}

// NativeOf is the native protocol of event in the table t, as the dispatch
// plan carries it: install copies it there, so that dispatch renders a
// harness's answers from the table without loading it. A part of an
// outcome the event has no channel for gets its undelivered message, the
// event's own or the table's.
func NativeOf(t *providers.Table, event string) (plan.Native, error) {
	e, ok := t.Events[event]
	if !ok {
		return plan.Native{}, fmt.Errorf("%s: no native event %s", t.Key(), event)
	}
	n := plan.Native{Harness: t.Harness, Event: event, Channels: map[string]plan.Output{}}
	for _, f := range slices.Sorted(maps.Keys(e.Payload.Fields)) {
		pf := e.Payload.Fields[f]
		n.Fields = append(n.Fields, plan.Field{Field: f, Key: pf.Key, Type: pf.Type})
	}
	if e.Payload.Actor != nil {
		n.ActorKey = e.Payload.Actor.Key
	}
	for part, o := range e.Channels {
		n.Channels[part] = plan.Output{Stdout: o.Stdout, Stderr: o.Stderr, Exit: o.Exit, UserOnly: o.UserOnly != nil}
	}
	for _, part := range []string{plan.PartContext, plan.PartDeny, plan.PartContinue, plan.PartRewriteInput, plan.PartReplaceOutput} {
		if _, ok := n.Channels[part]; ok {
			continue
		}
		msg, ok := e.Undelivered[part]
		if !ok {
			msg, ok = t.Undelivered[part]
		}
		if !ok {
			return plan.Native{}, fmt.Errorf("%s: event %s has no channel and no undelivered message for %s", t.Key(), event, part)
		}
		if n.Undelivered == nil {
			n.Undelivered = map[string]string{}
		}
		n.Undelivered[part] = strings.ReplaceAll(msg, "$event", event)
	}
	return n, nil
}
