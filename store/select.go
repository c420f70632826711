package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"dalo/engine"
	"dalo/internal/termtext"
	"dalo/plan"
	"dalo/providers"
)

// A Selection is one package of a registered source, validated with the
// user's registry, and, when a provider was named, that provider's table
// and what it does with each hook. Selecting grants nothing.
type Selection struct {
	Source   Source
	Loaded   *engine.Source
	Pkg      *engine.Package
	Report   engine.PackageReport
	Identity plan.PackageIdentity
	Table    *providers.Table                 // nil without a provider
	Caps     map[string]engine.HookCapability // hook id → what Table does with it
	Registry map[string]string                // the user's registry, as resolved
}

// ParsePackageRef splits SOURCE:NAME.
func ParsePackageRef(ref string) (source, name string, err error) {
	source, name, ok := strings.Cut(ref, ":")
	if !ok || source == "" || name == "" || strings.Contains(name, ":") {
		return "", "", fmt.Errorf("package %q: want SOURCE:NAME, such as company:design-review", ref)
	}
	return source, name, nil
}

// ErrNoPackage is wrapped by Select's error when the source has no such
// package (any more).
var ErrNoPackage = errors.New("no such package")

// ErrInvalid marks a package that failed validation: nothing can be
// reviewed for trust, approved or installed from it.
var ErrInvalid = errors.New("package is invalid")

// ErrBlocked marks a package whose own contract is valid but that a
// required reference blocks: it cannot be activated either.
var ErrBlocked = errors.New("package is blocked")

// Select loads the package ref (SOURCE:NAME) from the registry. provider
// may be "" (no provider) or NAME or NAME@VERSION.
func (s *Store) Select(ref, provider string) (*Selection, error) {
	srcID, name, err := ParsePackageRef(ref)
	if err != nil {
		return nil, err
	}
	sel, err := s.load(srcID, provider, []string{name})
	if err != nil {
		return nil, err
	}
	return sel.pick(name)
}

// load validates the packages names of source srcID, and those they
// require, for provider: a Selection of no package yet, which pick
// narrows to one of them. A command about some packages costs what they
// cost, not what the whole source does.
func (s *Store) load(srcID, provider string, names []string) (*Selection, error) {
	// The provider first: an unknown one is bad usage, whatever the
	// registry holds. The store's tables, with the local ones verified on
	// this machine, answer for the provider named.
	var err error
	sel := &Selection{}
	var ts *providers.Tables
	if provider != "" {
		if ts, err = s.Tables(); err != nil {
			return nil, err
		}
		if sel.Table, err = ts.Resolve(provider); err != nil {
			return nil, err
		}
	}
	if sel.Source, err = s.LookupSource(srcID); err != nil {
		return nil, err
	}
	if sel.Registry, err = s.Registry(); err != nil {
		return nil, err
	}
	return sel, sel.loadPackages(names, ts)
}

// tableFor resolves provider (NAME or NAME@VERSION; "" none) among the
// shipped tables only: what a lock binds must not depend on this machine.
func tableFor(provider string) (*providers.Table, error) {
	if provider == "" {
		return nil, nil
	}
	ts, err := providers.Load()
	if err != nil {
		return nil, err
	}
	return ts.Resolve(provider)
}

// loadPackages validates the packages names of sel.Source, and those they
// require, for sel.Table, resolving references against sel.Registry; ts,
// when not nil, are the tables that hold sel.Table (nil: the shipped ones).
func (sel *Selection) loadPackages(names []string, ts *providers.Tables) error {
	var keys []string
	if sel.Table != nil {
		keys = []string{sel.Table.Key()}
	}
	src := sel.Source
	var err error
	sel.Loaded, err = engine.Load(src.Path, engine.Options{SourceID: src.ID, Registry: sel.Registry, Providers: keys, Tables: ts, Packages: names})
	if err != nil {
		return fmt.Errorf("source %s: %w", src.ID, err)
	}
	return nil
}

// pick is sel, loaded, narrowed to its package name: a copy, so that one
// load serves every package of the source.
func (loaded *Selection) pick(name string) (*Selection, error) {
	sel := *loaded
	src := sel.Source
	for i, p := range sel.Loaded.Packages {
		if p.Name == name {
			sel.Pkg = p
			sel.Report = sel.Loaded.Report.Packages[i]
		}
	}
	if sel.Pkg == nil {
		where := src.Path
		if src.Git != nil {
			where = "commit " + src.Git.Commit
		}
		return nil, &noPackageError{fmt.Sprintf("no package %s in source %s (%s); %s", name, src.ID, where, PackagesOf(sel.Loaded))}
	}
	sel.Identity = plan.PackageIdentity{Source: src.ID, Name: name}
	if sel.Pkg.Manifest != nil {
		sel.Identity.ID = sel.Pkg.Manifest.Plugin.ID
	}
	if sel.Table != nil {
		sel.Caps = map[string]engine.HookCapability{}
		for _, c := range sel.Loaded.Report.Capabilities.Of(sel.Table.Key()) {
			if c.Package == name {
				sel.Caps[c.Hook] = c
			}
		}
	}
	return &sel, nil
}

// PackagesOf names the packages of src, for an error about a package it
// does not hold; a source with none (a package's own directory given for
// its source, a directory not yet filled) says where a source holds them.
func PackagesOf(src *engine.Source) string {
	if len(src.Names) != 0 {
		return "its packages: " + strings.Join(src.Names, ", ")
	}
	where := src.Layout.Path("plugin", "<name>")
	// Discovery's own reason, when it had one (a symlinked plugins/).
	if src.Report != nil {
		for _, d := range src.Report.Diagnostics {
			if d.Severity == engine.Error && d.File == src.Layout["plugin"].Dir && !strings.Contains(d.Message, where) {
				return "it has no packages: " + d.Message
			}
		}
	}
	return "it has no packages: a source holds them at " + where
}

type noPackageError struct{ msg string }

func (e *noPackageError) Error() string        { return e.msg }
func (e *noPackageError) Is(target error) bool { return target == ErrNoPackage }

// Valid reports whether the package passed validation, its own contract
// and its required references (a package they block cannot be activated
// either), and if not returns an error carrying its error diagnostics.
func (sel *Selection) Valid() error {
	blocked := sel.Loaded.Report.Blocked(sel.Pkg.Name)
	if sel.Report.Valid && sel.Pkg.Manifest != nil && len(blocked) == 0 {
		return nil
	}
	why := ErrInvalid
	if sel.Report.Valid && sel.Pkg.Manifest != nil {
		why = ErrBlocked
	}
	var lines []string
	for _, d := range sel.Loaded.Report.Diagnostics {
		if d.Severity == engine.Error && (strings.HasPrefix(d.File, sel.Pkg.Dir+"/") || d.File == sel.Pkg.File || sel.usesFile(d.File)) {
			lines = append(lines, "  "+termtext.Escape(d.String()))
		}
	}
	for _, r := range blocked {
		// The findings above are the member's own; this is why they
		// concern the package. An unresolved one has its own E071.
		if r.Resolution == engine.InvalidRef && r.Target != "" {
			lines = append(lines, fmt.Sprintf("  required %s is invalid: it fails its own checks", r.Ref))
		}
	}
	return fmt.Errorf("%w: %s (%s):\n%s", why, sel.Identity, filepath.Join(sel.Source.Path, sel.Pkg.File), strings.Join(lines, "\n"))
}

func (sel *Selection) usesFile(file string) bool {
	for _, r := range sel.References() {
		if r.Target == file {
			return true
		}
	}
	return false
}

// omitted is why validation left out the member whose reference is at
// field (W073: an optional member whose own file fails its checks), or "".
// Nothing validation omitted is written.
func (sel *Selection) omitted(field string) string {
	for _, d := range sel.Loaded.Report.Diagnostics {
		if d.Code == "W073" && d.File == sel.Pkg.File && d.Field == field {
			// The warning names the member; what is left is the finding.
			if _, finding, ok := strings.Cut(d.Message, " is visibly omitted: "); ok {
				return finding
			}
			return d.Message
		}
	}
	return ""
}

// References are the package's resolved member and requires references.
func (sel *Selection) References() []engine.Reference {
	var out []engine.Reference
	for _, r := range sel.Loaded.Report.References {
		if r.Package == sel.Pkg.Name {
			out = append(out, r)
		}
	}
	return out
}

// PkgDir is the package directory on disk.
func (sel *Selection) PkgDir() string {
	return filepath.Join(sel.Source.Path, filepath.FromSlash(sel.Pkg.Dir))
}

// Tool returns the tool id of the package.
func (sel *Selection) Tool(id string) *engine.Tool {
	for i := range sel.Pkg.Manifest.Tools {
		if sel.Pkg.Manifest.Tools[i].ID == id {
			return &sel.Pkg.Manifest.Tools[i]
		}
	}
	return nil
}

// Hook returns the hook id of the package.
func (sel *Selection) Hook(id string) *engine.Hook {
	for i := range sel.Pkg.Manifest.Hooks {
		if sel.Pkg.Manifest.Hooks[i].ID == id {
			return &sel.Pkg.Manifest.Hooks[i]
		}
	}
	return nil
}

// ToolFiles lists a tool's files, the entry first.
func ToolFiles(t *engine.Tool) []string {
	return append([]string{t.Entry}, t.Files...)
}

// plan.ToolBinds computes what a grant of tool t covers now, hashing its files.
func (sel *Selection) ToolBinds(t *engine.Tool) (*plan.ToolBinds, error) {
	files, err := hashFiles(sel.PkgDir(), ToolFiles(t))
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.ID, err)
	}
	b := &plan.ToolBinds{
		Package: sel.Identity, Tool: t.ID, Runtime: t.Runtime, Entry: t.Entry,
		Argv: nonNil(t.Argv), Env: nonNil(t.Env), Cwd: t.Cwd, Inputs: []plan.PlannedInput{},
		Capabilities: nonNil(t.Capabilities), Platforms: nonNil(t.Platforms), Files: files,
	}
	for _, in := range t.Inputs {
		b.Inputs = append(b.Inputs, plan.PlannedInput{Name: in.Name, Type: in.Type, Required: in.IsRequired()})
	}
	return b, nil
}

// plan.HookBinds computes what a grant of hook h covers on the selected
// provider, given the digest of its tool's binds.
func (sel *Selection) HookBinds(h *engine.Hook, toolDigest string) (*plan.HookBinds, error) {
	if sel.Table == nil {
		return nil, fmt.Errorf("hook %s: no provider selected", h.ID)
	}
	t := sel.Tool(h.Tool)
	if t == nil {
		return nil, fmt.Errorf("hook %s: no tool %s", h.ID, h.Tool)
	}
	b := &plan.HookBinds{
		Package: sel.Identity, Provider: sel.Table.Name, Hook: h.ID, Tool: h.Tool, ToolDigest: toolDigest,
		Subject: h.Subject, Phase: h.Phase, NativeEvent: sel.Caps[h.ID].NativeEvent, Effect: h.Effect,
		AlsoEvents:  sel.alsoEvents(h),
		Requirement: h.Requirement, Matcher: nil, Bindings: sel.bindings(h, t),
		TimeoutMS: h.TimeoutMS, FailurePolicy: h.FailurePolicy, ErrorVisibility: h.ErrorVisibility,
	}
	if h.Matcher != nil {
		b.Matcher = nonNil(h.Matcher.ToolNames)
	}
	return b, nil
}

func (sel *Selection) bindings(h *engine.Hook, t *engine.Tool) []plan.PlannedBinding {
	out := []plan.PlannedBinding{}
	for _, b := range h.Bindings {
		typ := ""
		for _, in := range t.Inputs {
			if in.Name == b.Input {
				typ = in.Type
			}
		}
		out = append(out, plan.PlannedBinding{Input: b.Input, Field: b.Field, Type: typ})
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// MemberPath is where a resolved reference's asset is on disk: in the
// selected source, or in the registered source it names.
func (sel *Selection) MemberPath(r engine.Reference) (string, error) {
	ref := engine.ParseRef(r.Ref)
	root := sel.Source.Path
	if ref.Source != "" && ref.Source != sel.Source.ID {
		p, ok := sel.Registry[ref.Source]
		if !ok {
			return "", fmt.Errorf("%s: source %s is not registered", r.Ref, ref.Source)
		}
		root = p
	}
	return filepath.Join(root, filepath.FromSlash(r.Target)), nil
}

// What install does with a member on a provider ([MemberAction.Action]):
// #MemberInstall's actions (cue/provider.cue), which say what each means.
const (
	MemberSkill       = "installed"
	MemberSubagent    = "subagent"
	MemberFallback    = "fallback"
	MemberBlocks      = "blocks"
	MemberOmitted     = "omitted"
	MemberInstruction = "instruction"
)

// A MemberAction is what install does with one member of the package on
// one provider. Install acts on exactly these and review shows them, so
// that review never says something install does not do.
type MemberAction struct {
	Ref, Kind, Requirement string
	Action                 string // one of the Member constants
	Text                   string // the sentence install and review show after the reference
	Src, Dest              string // installed and subagent: what is copied, and to where
	Dir                    bool   // installed: Src and Dest are skill directories
}

// MemberActions decides, for every member of the selected package, what
// install does with it on t: #MemberInstall's answer (cue/provider.cue),
// with the harness locations (getenv is os.Getenv or a test's) and what
// dalo already installed there: a skill or agent at the same place that
// is not this package's blocks installation, since dalo never overwrites
// what is not its own.
func (s *Store) MemberActions(sel *Selection, t *providers.Table, getenv func(string) string) ([]MemberAction, error) {
	ts, err := s.Tables()
	if err != nil {
		return nil, err
	}
	skillsDirs, err := t.SkillDirs(getenv)
	if err != nil {
		return nil, err
	}
	if len(skillsDirs) == 0 {
		return nil, fmt.Errorf("%s: the provider table names no skills directory", t.Key())
	}
	in, err := s.Installed(t.Name)
	if err != nil {
		return nil, err
	}
	pkg := sel.Identity.String()
	owned := ownedPaths(in, pkg)
	refs := map[string]engine.Reference{}
	for _, r := range sel.References() {
		refs[r.Field] = r
	}
	var out []MemberAction
	for n, mb := range sel.Pkg.Manifest.Plugin.Members {
		ref := engine.ParseRef(mb.Ref)
		r := refs[fmt.Sprintf("plugin.members[%d].ref", n)]
		q := providers.MemberQuestion{Kind: providers.MemberKind(ref.Kind), Requirement: mb.Requirement,
			Validation: providers.MemberKept, HasFallback: mb.Fallback != nil}
		var why string
		switch {
		case sel.omitted(r.Field) != "":
			q.Validation, why = providers.MemberOmitted, sel.omitted(r.Field)
		case r.Resolution != engine.Resolved:
			q.Validation, why = providers.MemberUnresolved, orUnknown(r.Reason)
		}
		ask := func() (MemberAction, error) {
			ans, err := ts.MemberInstall(t, q)
			if err != nil {
				return MemberAction{}, err
			}
			a := MemberAction{Ref: mb.Ref, Kind: ref.Kind, Requirement: mb.Requirement, Action: ans.Action}
			place := func(l providers.Location) string { return strings.Replace(t.Display(l), "<name>", ref.Selector, 1) }
			fill := []string{"<kind>", ref.Kind, "<why>", why, "<instructions>", t.Display(t.Config.Instructions)}
			switch a.Action {
			case MemberSkill:
				a.Dir, a.Dest = true, filepath.Join(skillsDirs[0], ref.Selector)
				fill = append(fill, "<skills>", place(t.Config.Skills[0]))
			case MemberSubagent:
				if a.Dest, _, err = t.AgentFile(ref.Selector, getenv); err != nil {
					return MemberAction{}, err
				}
				fill = append(fill, "<agents>", place(*t.Config.Agents.Location))
			case MemberFallback:
				fill = append(fill, "<fallback>", mb.Fallback.Skill)
			}
			a.Text = strings.NewReplacer(fill...).Replace(ans.Text)
			return a, nil
		}
		a, err := ask()
		if err != nil {
			return nil, err
		}
		if a.Dest != "" {
			if src, err := sel.MemberPath(r); err != nil {
				q.Validation, why = providers.MemberUnreachable, err.Error()
				if a, err = ask(); err != nil {
					return nil, err
				}
			} else if a.Src = src; a.Dir {
				a.Src = filepath.Dir(src) // the skill directory of its SKILL.md
			}
		}
		if a.Dest != "" {
			if text := conflict(a.Dest, owned, pkg); text != "" {
				a.Action, a.Text = MemberBlocks, text
			} else if text := changedSince(in.Find(pkg), a.Dest); text != "" {
				a.Action, a.Text = MemberBlocks, text
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// conflict says why dest cannot be written for pkg, or "".
func conflict(dest string, owned map[string]string, pkg string) string {
	_, err := os.Lstat(dest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ""
	case err != nil:
		return err.Error()
	}
	switch o, ok := owned[dest]; {
	case !ok:
		return dest + " already exists and is not dalo's; rename or remove it, dalo never overwrites it"
	case o != pkg:
		return dest + " is installed by " + o
	}
	return ""
}

// changedSince says which files of the member dalo wrote at dest for ip
// the user changed since, or "": install never overwrites them.
func changedSince(ip *InstalledPackage, dest string) string {
	if ip == nil {
		return ""
	}
	var changed []string
	for _, o := range ip.owned() {
		if o.Path == dest {
			changed = changedOwned(&InstalledPackage{Skills: []OwnedTree{o}})
		}
	}
	if len(changed) == 0 {
		return ""
	}
	return strings.Join(changed, "; ") + "; move it away, dalo never overwrites it"
}

// alsoEvents are the further native events hook h runs on, beside its
// row's own (rows.also), where the table supports it.
func (sel *Selection) alsoEvents(h *engine.Hook) []string {
	if sel.Caps[h.ID].Status != providers.Supported {
		return nil
	}
	return sel.Table.AlsoEvents(h.Subject, h.Phase, h.Effect)
}
