package store

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"dalo/engine"
	"dalo/plan"
)

// A Difference is one thing that differs between two versions of a
// package: a field of its manifest, a tool file's bytes, a member file's
// bytes, or a whole tool, hook, member or requirement added or removed.
type Difference struct {
	Item  string `json:"item"`            // "plugin", "tool guard", "hook guard", "member skill:review", "requires company:base"
	Field string `json:"field,omitempty"` // "argv", "file guard.sh", ...; "" for the whole item
	Old   string `json:"old,omitempty"`   // "" where it is absent
	New   string `json:"new,omitempty"`
}

// A PackageDiff says how one package differs between two versions of its
// source.
type PackageDiff struct {
	Package     string       `json:"package"`
	State       string       `json:"state"` // added, removed, changed, unchanged
	Valid       bool         `json:"valid"` // the new version validates
	Differences []Difference `json:"differences"`
}

// A version is a package's contents as differences compare them: its
// manifest, the digest of each tool file, and of each file of its skill
// and agent members, the members install writes.
type version struct {
	valid   bool
	m       *engine.Manifest
	tools   map[string]map[string]plan.FileDigest // tool id → path → digest
	members map[string]map[string]string          // member ref → path ("" for an agent file) → sha256
}

// versionOf reads the version of package i of the loaded source, whose
// references refs lists (references by package, see refsByPackage).
func versionOf(src *engine.Source, i int, refs []engine.Reference) *version {
	p := src.Packages[i]
	v := &version{valid: src.Report.Packages[i].Valid, m: p.Manifest, tools: map[string]map[string]plan.FileDigest{}, members: map[string]map[string]string{}}
	if v.m == nil {
		return v
	}
	dir := filepath.Join(src.Root, filepath.FromSlash(p.Dir))
	for i := range v.m.Tools {
		t := &v.m.Tools[i]
		if files, err := hashFiles(dir, ToolFiles(t)); err == nil {
			v.tools[t.ID] = files
		}
	}
	for _, r := range refs {
		ref := engine.ParseRef(r.Ref)
		if r.Resolution != engine.Resolved || !strings.HasPrefix(r.Field, "plugin.members[") || (ref.Kind != "skill" && ref.Kind != "agent") {
			continue
		}
		if ref.Source != "" && ref.Source != src.ID {
			continue // another source's: it has versions of its own
		}
		target := filepath.Join(src.Root, filepath.FromSlash(r.Target))
		if ref.Kind == "skill" {
			target = filepath.Dir(target)
		}
		if files, err := listFiles(target, ref.Kind == "skill", &src.Limits); err == nil {
			v.members[r.Ref] = hexFiles(files)
		}
	}
	return v
}

// refsByPackage groups a report's references by package name.
func refsByPackage(src *engine.Source) map[string][]engine.Reference {
	out := map[string][]engine.Reference{}
	for _, r := range src.Report.References {
		out[r.Package] = append(out[r.Package], r)
	}
	return out
}

// A field is one value of a version: its item and field name.
type field struct{ item, name string }

// fields flattens v into the values differences compare, each shown as
// review shows it: text as it is, lists and tables as compact JSON, a
// file as its digest.
func (v *version) fields() map[field]string {
	out := map[field]string{{"plugin", ""}: "present", {"plugin", "valid"}: "no"}
	if v.valid {
		out[field{"plugin", "valid"}] = "yes"
	}
	if v.m == nil {
		return out
	}
	set := func(item, name string, val any) {
		switch x := val.(type) {
		case string:
			if x != "" {
				out[field{item, name}] = x
			}
		case int:
			out[field{item, name}] = fmt.Sprint(x)
		default:
			if s := compactJSON(val); s != "null" && s != "[]" {
				out[field{item, name}] = s
			}
		}
	}
	p := v.m.Plugin
	set("plugin", "description", p.Description)
	set("plugin", "id", p.ID)
	set("plugin", "version", p.Version)
	for _, t := range v.m.Tools {
		item := "tool " + t.ID
		out[field{item, ""}] = "present"
		set(item, "runtime", t.Runtime)
		set(item, "runtime_version", t.RuntimeVersion)
		set(item, "entry", t.Entry)
		set(item, "argv", t.Argv)
		set(item, "cwd", t.Cwd)
		set(item, "env", t.Env)
		set(item, "inputs", t.Inputs)
		set(item, "capabilities", t.Capabilities)
		set(item, "platforms", t.Platforms)
		set(item, "availability", t.Availability)
		for path, d := range v.tools[t.ID] {
			set(item, "file "+path, fileText(d))
		}
	}
	for _, h := range v.m.Hooks {
		item := "hook " + h.ID
		out[field{item, ""}] = "present"
		set(item, "tool", h.Tool)
		set(item, "subject/phase", h.Subject+"/"+h.Phase)
		set(item, "effect", h.Effect)
		set(item, "requirement", h.Requirement)
		set(item, "fallback", h.Fallback)
		if h.Matcher != nil {
			set(item, "matcher", h.Matcher.ToolNames)
		}
		set(item, "bindings", h.Bindings)
		set(item, "timeout_ms", h.TimeoutMS)
		set(item, "failure_policy", h.FailurePolicy)
		set(item, "retry", h.Retry)
		set(item, "error_visibility", h.ErrorVisibility)
		set(item, "blocking_scope", h.BlockingScope)
	}
	for _, mb := range p.Members {
		item := "member " + mb.Ref
		out[field{item, ""}] = "present"
		set(item, "requirement", mb.Requirement)
		if mb.Fallback != nil {
			set(item, "fallback", mb.Fallback.Skill)
		}
		for path, d := range v.members[mb.Ref] {
			name := "file " + path
			if path == "" {
				name = "file"
			}
			set(item, name, "sha256 "+short(d))
		}
	}
	for _, rq := range p.Requires {
		item := "requires " + rq.Ref
		out[field{item, ""}] = "present"
		set(item, "requirement", rq.Requirement)
	}
	return out
}

// fileText is how a difference shows a file's digest.
func fileText(d plan.FileDigest) string {
	s := fmt.Sprintf("sha256 %s, %d bytes", short(d.SHA256), d.Size)
	if d.Executable {
		s += ", executable"
	}
	return s
}

func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// diffVersions lists what differs from old to new: a whole item added or
// removed once, otherwise each field that differs; in the order plugin,
// tools, hooks, members, requires, and by field within an item.
func diffVersions(old, new *version) []Difference {
	a, b := old.fields(), new.fields()
	items := map[string]bool{}
	for f := range a {
		items[f.item] = true
	}
	for f := range b {
		items[f.item] = true
	}
	var out []Difference
	for _, item := range sortedItems(items) {
		_, inA := a[field{item, ""}]
		_, inB := b[field{item, ""}]
		switch {
		case inA && !inB:
			out = append(out, Difference{Item: item, Old: "present"})
			continue
		case !inA && inB:
			out = append(out, Difference{Item: item, New: "present"})
			continue
		}
		names := map[string]bool{}
		for f := range a {
			if f.item == item && f.name != "" {
				names[f.name] = true
			}
		}
		for f := range b {
			if f.item == item && f.name != "" {
				names[f.name] = true
			}
		}
		for _, n := range sortedFields(names) {
			if x, y := a[field{item, n}], b[field{item, n}]; x != y {
				out = append(out, Difference{Item: item, Field: n, Old: x, New: y})
			}
		}
	}
	return out
}

// itemRank orders the kinds of items as a manifest does.
var itemRank = []string{"plugin", "tool", "hook", "member", "requires"}

func sortedItems(items map[string]bool) []string {
	out := slices.Sorted(maps.Keys(items))
	rank := func(s string) int {
		k, _, _ := strings.Cut(s, " ")
		return slices.Index(itemRank, k)
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

// fieldRank orders the fields of an item as review shows them; files come
// last, by path.
var fieldRank = []string{
	"valid", "description", "id", "version",
	"runtime", "runtime_version", "entry", "argv", "cwd", "env", "inputs", "capabilities", "platforms", "availability",
	"tool", "subject/phase", "effect", "requirement", "fallback", "matcher", "bindings", "timeout_ms", "failure_policy", "retry", "error_visibility", "blocking_scope",
}

func sortedFields(names map[string]bool) []string {
	out := slices.Sorted(maps.Keys(names))
	rank := func(s string) int {
		if i := slices.Index(fieldRank, s); i >= 0 {
			return i
		}
		return len(fieldRank)
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

// loadSource validates src as the registry resolves it, with src's own
// entry naming src.Path: a version of a git source that is not, or not
// yet, the one pinned.
func (s *Store) loadSource(src Source) (*engine.Source, error) {
	reg, err := s.Registry()
	if err != nil {
		return nil, err
	}
	reg[src.ID] = src.Path
	loaded, err := engine.Load(src.Path, engine.Options{SourceID: src.ID, Registry: reg})
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", src.ID, err)
	}
	return loaded, nil
}

// diffSources says, package by package, what differs between two versions
// of a source.
func (s *Store) diffSources(old, new Source) ([]PackageDiff, error) {
	a, err := s.loadSource(old)
	if err != nil {
		return nil, err
	}
	b, err := s.loadSource(new)
	if err != nil {
		return nil, err
	}
	at := func(src *engine.Source) map[string]int {
		out := map[string]int{}
		for i, p := range src.Packages {
			out[p.Name] = i
		}
		return out
	}
	ia, ib := at(a), at(b)
	ra, rb := refsByPackage(a), refsByPackage(b)
	names := map[string]bool{}
	for n := range ia {
		names[n] = true
	}
	for n := range ib {
		names[n] = true
	}
	var out []PackageDiff
	for _, n := range slices.Sorted(maps.Keys(names)) {
		d := PackageDiff{Package: new.ID + ":" + n, Differences: []Difference{}}
		i, inA := ia[n]
		j, inB := ib[n]
		if inB {
			d.Valid = b.Report.Packages[j].Valid
		}
		switch {
		case !inA:
			d.State = "added"
		case !inB:
			d.State = "removed"
		default:
			d.Differences = diffVersions(versionOf(a, i, ra[n]), versionOf(b, j, rb[n]))
			d.State = "changed"
			if len(d.Differences) == 0 {
				d.State = "unchanged"
			}
		}
		out = append(out, d)
	}
	return out, nil
}
