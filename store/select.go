package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"dalo/engine"
	"dalo/providers"
	"dalo/store/plan"
)

// A Selection is one package of a registered source, validated with the
// user's registry, and, when a provider was named, that provider's table
// and what it does with each hook. Selecting grants nothing.
type Selection struct {
	Source   Source
	Loaded   *engine.Source
	Pkg      *engine.Package
	Report   engine.PackageReport
	Identity PackageIdentity
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

// ErrInvalid marks a package that failed validation: nothing can be
// reviewed for trust, approved or installed from it.
var ErrInvalid = errors.New("package is invalid")

// Select loads the package ref (SOURCE:NAME) from the registry. provider
// may be "" (no provider) or NAME or NAME@VERSION.
func (s *Store) Select(ref, provider string) (*Selection, error) {
	srcID, name, err := ParsePackageRef(ref)
	if err != nil {
		return nil, err
	}
	src, err := s.LookupSource(srcID)
	if err != nil {
		return nil, err
	}
	reg, err := s.Registry()
	if err != nil {
		return nil, err
	}
	sel := &Selection{Source: src, Registry: reg}
	var keys []string
	if provider != "" {
		ts, err := providers.Load()
		if err != nil {
			return nil, err
		}
		if sel.Table, err = ts.Resolve(provider); err != nil {
			return nil, err
		}
		keys = []string{sel.Table.Key()}
	}
	sel.Loaded, err = engine.Load(src.Path, engine.Options{SourceID: src.ID, Registry: reg, Providers: keys})
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", src.ID, err)
	}
	for i, p := range sel.Loaded.Packages {
		if p.Name == name {
			sel.Pkg = p
			sel.Report = sel.Loaded.Report.Packages[i]
		}
	}
	if sel.Pkg == nil {
		var names []string
		for _, p := range sel.Loaded.Packages {
			names = append(names, p.Name)
		}
		return nil, fmt.Errorf("no package %s in source %s (%s); its packages: %s", name, src.ID, src.Path, strings.Join(names, ", "))
	}
	sel.Identity = PackageIdentity{Source: src.ID, Name: name}
	if sel.Pkg.Manifest != nil {
		sel.Identity.ID = sel.Pkg.Manifest.Plugin.ID
	}
	if sel.Table != nil {
		sel.Caps = map[string]engine.HookCapability{}
		for _, c := range sel.Loaded.Report.Capabilities[sel.Table.Key()] {
			if c.Package == name {
				sel.Caps[c.Hook] = c
			}
		}
	}
	return sel, nil
}

// Valid reports whether the package passed validation, and if not returns
// an error carrying its error diagnostics.
func (sel *Selection) Valid() error {
	if sel.Report.Valid && sel.Pkg.Manifest != nil {
		return nil
	}
	var lines []string
	for _, d := range sel.Loaded.Report.Diagnostics {
		if d.Severity == engine.Error && (strings.HasPrefix(d.File, sel.Pkg.Dir+"/") || d.File == sel.Pkg.File || sel.usesFile(d.File)) {
			lines = append(lines, "  "+d.String())
		}
	}
	return fmt.Errorf("%w: %s (%s):\n%s", ErrInvalid, sel.Identity, filepath.Join(sel.Source.Path, sel.Pkg.File), strings.Join(lines, "\n"))
}

func (sel *Selection) usesFile(file string) bool {
	for _, r := range sel.References() {
		if r.Target == file {
			return true
		}
	}
	return false
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

// ToolBinds computes what a grant of tool t covers now, hashing its files.
func (sel *Selection) ToolBinds(t *engine.Tool) (*ToolBinds, error) {
	files, err := HashFiles(sel.PkgDir(), ToolFiles(t))
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.ID, err)
	}
	b := &ToolBinds{
		Package: sel.Identity, Tool: t.ID, Runtime: t.Runtime, Entry: t.Entry,
		Argv: nonNil(t.Argv), Env: nonNil(t.Env), Cwd: t.Cwd, Inputs: []plan.PlannedInput{},
		Capabilities: nonNil(t.Capabilities), Platforms: nonNil(t.Platforms), Files: files,
	}
	for _, in := range t.Inputs {
		b.Inputs = append(b.Inputs, plan.PlannedInput{Name: in.Name, Type: in.Type, Required: in.IsRequired()})
	}
	return b, nil
}

// HookBinds computes what a grant of hook h covers on the selected
// provider, given the digest of its tool's binds.
func (sel *Selection) HookBinds(h *engine.Hook, toolDigest string) (*HookBinds, error) {
	if sel.Table == nil {
		return nil, fmt.Errorf("hook %s: no provider selected", h.ID)
	}
	t := sel.Tool(h.Tool)
	if t == nil {
		return nil, fmt.Errorf("hook %s: no tool %s", h.ID, h.Tool)
	}
	b := &HookBinds{
		Package: sel.Identity, Provider: sel.Table.Name, Hook: h.ID, Tool: h.Tool, ToolDigest: toolDigest,
		Subject: h.Subject, Phase: h.Phase, NativeEvent: sel.Caps[h.ID].NativeEvent, Effect: h.Effect,
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
