package project

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	defs "dalo/cue"
	"dalo/engine"
	"dalo/plan"
	"dalo/providers"
	"dalo/store"
	"dalo/tomledit"
)

// A Lock is dalo.lock: what a project's dalo.toml resolved to. It holds
// nothing of one machine: each source as dalo.toml writes it, with a git
// source's commit, and each package's grants by id with the digest of
// what they bind, the digest a teammate's approval is checked against.
type Lock struct {
	Sources  []LockedSource  // by id
	Packages []LockedPackage // by ref

	doc *engine.Document // where each field is, when read from a file
	// resolved are the tables Resolve digested on, when it made the
	// lock: what Compare can say anything of.
	resolved []string
}

// A LockedSource is a source of dalo.toml and, for a git source, the
// commit its packages were read from.
type LockedSource struct {
	ID, Git, Ref, Path string
	Commit             string // a git source's pin
}

// A LockedPackage is a package of dalo.toml as it resolved: its manifest's
// id and version, and every grant installing it on its providers asks
// for, by grant id (plan.GrantID), sorted.
type LockedPackage struct {
	Source, Name string
	ID, Version  string
	Providers    []string // sorted
	Grants       []LockedGrant
}

// Ref is SOURCE:NAME.
func (p LockedPackage) Ref() string { return p.Source + ":" + p.Name }

// A LockedGrant is one grant id, the digest of what it binds, and the
// provider tables (NAME@VERSION, sorted) on which it binds that. A grant
// is locked for every table this dalo knows of each provider the package
// lists: a hook's binds name the native events its table maps it to, so
// one harness version may ask a teammate to approve another digest than
// the next, and the lock holds each.
type LockedGrant struct {
	ID, Digest string
	Tables     []string
}

// A binding is a grant id on one provider table.
type binding struct{ id, table string }

// bindings is the digest p locks for each grant id and table.
func (p LockedPackage) bindings() map[binding]string {
	out := map[binding]string{}
	for _, g := range p.Grants {
		for _, t := range g.Tables {
			out[binding{g.ID, t}] = g.Digest
		}
	}
	return out
}

// Tables are the provider tables (NAME@VERSION) l was resolved on, as its
// grants name them, sorted: what the dalo that wrote it knew with a
// project scope. A lock holds for those, and only those are checked: a
// newer dalo knows more harness versions, and a lock must not fail for
// a version its writer never saw.
func (l *Lock) Tables() []string {
	var out []string
	for _, p := range l.Packages {
		for _, g := range p.Grants {
			for _, t := range g.Tables {
				if !slices.Contains(out, t) {
					out = append(out, t)
				}
			}
		}
	}
	slices.SortFunc(out, compareTables)
	return out
}

// UnknownTables are the tables l names that this dalo has none of: their
// digests cannot be checked here, and 'dalo lock' run here drops them.
func UnknownTables(l *Lock) []string {
	ts, err := providers.Load()
	if err != nil {
		return l.Tables()
	}
	var out []string
	for _, t := range l.Tables() {
		if _, err := ts.Resolve(t); err != nil {
			out = append(out, t)
		}
	}
	return out
}

// GrantCount is how many grants p locks, by id, whatever the tables.
func (p LockedPackage) GrantCount() int { return len(grantIDs(p)) }

// Digest is the digest p locks for grant id on table (NAME@VERSION): what
// approving id on that harness version must bind.
func (p LockedPackage) Digest(id, table string) (string, bool) {
	d, ok := p.bindings()[binding{id, table}]
	return d, ok
}

// Source returns the locked source id.
func (l *Lock) Source(id string) (LockedSource, bool) {
	i := slices.IndexFunc(l.Sources, func(s LockedSource) bool { return s.ID == id })
	if i < 0 {
		return LockedSource{}, false
	}
	return l.Sources[i], true
}

// Package returns the locked package ref (SOURCE:NAME).
func (l *Lock) Package(ref string) (LockedPackage, bool) {
	i := slices.IndexFunc(l.Packages, func(p LockedPackage) bool { return p.Ref() == ref })
	if i < 0 {
		return LockedPackage{}, false
	}
	return l.Packages[i], true
}

// errorf is a finding about field of the lock, at its position when the
// lock was read from a file; about the lock as a whole when field is "".
func (l *Lock) errorf(code, field, format string, args ...any) engine.Diagnostic {
	if l.doc != nil && field != "" {
		return l.doc.Errorf(code, field, format, args...)
	}
	return engine.Diagnostic{Severity: engine.Error, Code: code, File: LockFile, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ReadLock reads root's dalo.lock; a missing one is an error wrapping
// fs.ErrNotExist.
func ReadLock(root string) (*Lock, error) {
	src, err := readFile(filepath.Join(root, LockFile))
	if err != nil {
		return nil, err
	}
	return ParseLock(src)
}

// ParseLock checks src as a dalo.lock: its shape (#Lock), then that it is
// one 'dalo lock' could have written: each source git with a commit or a
// path without one, each id once, each package of a locked source, each
// grant of its package and of a provider it lists. A lock edited by hand
// into something else is refused here, at the field, before anything
// trusts it.
func ParseLock(src []byte) (*Lock, error) {
	r, err := rules()
	if err != nil {
		return nil, err
	}
	doc, diags := r.CheckDocument(LockFile, defs.Lock, src)
	if diags != nil {
		return nil, &Error{diags}
	}
	var raw struct {
		Source []struct {
			ID, Git, Ref, Path, Commit string
		} `toml:"source"`
		Package []struct {
			Ref, ID, Version string
			Providers        []string
			Grant            []struct {
				ID, Digest string
				Tables     []string
			}
		} `toml:"package"`
	}
	if err := toml.Unmarshal(src, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", LockFile, err) // the shape passed: a bug
	}
	l := &Lock{doc: doc}
	var bad []engine.Diagnostic
	for i, s := range raw.Source {
		field := engine.Index("source", i)
		switch {
		case slices.IndexFunc(raw.Source[:i], func(o struct{ ID, Git, Ref, Path, Commit string }) bool { return o.ID == s.ID }) >= 0:
			bad = append(bad, doc.Errorf("E115", engine.Field(field, "id"), "source %s is locked twice", s.ID))
		case (s.Git == "") == (s.Path == ""):
			bad = append(bad, doc.KeyErrorf("E115", field, "locked source %s must have git or path, not both or neither", s.ID))
		case s.Git != "" && s.Commit == "":
			bad = append(bad, doc.KeyErrorf("E115", field, "locked git source %s has no commit", s.ID))
		case s.Path != "" && (s.Commit != "" || s.Ref != ""):
			bad = append(bad, doc.KeyErrorf("E115", field, "locked source %s is a directory: it has no ref or commit", s.ID))
		default:
			l.Sources = append(l.Sources, LockedSource{ID: s.ID, Git: s.Git, Ref: s.Ref, Path: s.Path, Commit: s.Commit})
		}
	}
	for i, p := range raw.Package {
		field := engine.Index("package", i)
		srcID, name, _ := strings.Cut(p.Ref, ":")
		out := LockedPackage{Source: srcID, Name: name, ID: p.ID, Version: p.Version, Providers: p.Providers}
		if _, ok := l.Source(srcID); !ok {
			bad = append(bad, doc.Errorf("E115", engine.Field(field, "ref"), "package %s is of source %s, which the lock does not hold", p.Ref, srcID))
			continue
		}
		if _, ok := l.Package(p.Ref); ok {
			bad = append(bad, doc.Errorf("E115", engine.Field(field, "ref"), "package %s is locked twice", p.Ref))
			continue
		}
		ok := true
		seen := map[binding]bool{}
		for j, g := range p.Grant {
			entry := engine.Index(engine.Field(field, "grant"), j)
			gf := engine.Field(entry, "id")
			// Its shape and kinds are #LockedGrant's (cue/project.cue),
			// which CheckDocument has proved.
			provider, pkg, _, _, err := plan.ParseGrantID(g.ID)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", LockFile, err) // #LockedGrant passed: a bug
			}
			switch {
			case pkg.Source != srcID || pkg.Name != name:
				bad = append(bad, doc.Errorf("E115", gf, "grant %s is not of package %s", g.ID, p.Ref))
			case !slices.Contains(p.Providers, provider):
				bad = append(bad, doc.Errorf("E115", gf, "grant %s is for provider %s, which package %s does not list", g.ID, provider, p.Ref))
			default:
				good := true
				for k, t := range g.Tables {
					tf := engine.Index(engine.Field(entry, "tables"), k)
					switch {
					case !strings.HasPrefix(t, provider+"@"):
						bad = append(bad, doc.Errorf("E115", tf, "grant %s is of provider %s, not of table %s", g.ID, provider, t))
						good = false
					case seen[binding{g.ID, t}]:
						bad = append(bad, doc.Errorf("E115", tf, "grant %s is locked twice for %s", g.ID, t))
						good = false
					}
					seen[binding{g.ID, t}] = true
				}
				if good {
					out.Grants = append(out.Grants, LockedGrant{ID: g.ID, Digest: g.Digest, Tables: g.Tables})
					continue
				}
			}
			ok = false
		}
		if ok {
			l.Packages = append(l.Packages, out)
		}
	}
	if len(bad) > 0 {
		engine.SortDiagnostics(bad)
		return nil, &Error{bad}
	}
	return l, nil
}

// lockHeader opens every dalo.lock.
const lockHeader = `# dalo.lock: what dalo.toml resolved to, written by 'dalo lock'. Commit it;
# do not edit it. 'dalo lock --check' says whether it still holds, and
# 'dalo lock --update' moves its pins. Each digest is what a grant binds:
# every teammate still approves it for themselves.
`

// Marshal writes l as dalo.lock: sources by id, packages by ref, grants by
// id, every field in one order, so that the same resolution is the same
// bytes on every machine and a change is a small diff.
func (l *Lock) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString(lockHeader)
	b.WriteString("lock_version = 1\n")
	srcs := slices.Clone(l.Sources)
	slices.SortFunc(srcs, func(a, b LockedSource) int { return strings.Compare(a.ID, b.ID) })
	for _, s := range srcs {
		b.WriteString("\n[[source]]\n")
		field(&b, "id", s.ID)
		field(&b, "git", s.Git)
		field(&b, "ref", s.Ref)
		field(&b, "path", s.Path)
		field(&b, "commit", s.Commit)
	}
	pkgs := slices.Clone(l.Packages)
	slices.SortFunc(pkgs, func(a, b LockedPackage) int { return strings.Compare(a.Ref(), b.Ref()) })
	for _, p := range pkgs {
		b.WriteString("\n[[package]]\n")
		field(&b, "ref", p.Ref())
		field(&b, "id", p.ID)
		field(&b, "version", p.Version)
		fmt.Fprintf(&b, "providers = [%s]\n", quoteList(slices.Sorted(slices.Values(p.Providers))))
		for _, g := range sortGrants(p.Grants) {
			b.WriteString("\n[[package.grant]]\n")
			field(&b, "id", g.ID)
			field(&b, "digest", g.Digest)
			fmt.Fprintf(&b, "tables = [%s]\n", quoteList(g.Tables))
		}
	}
	return b.Bytes()
}

// sortGrants returns grants in the lock's order: by id, then by table,
// each entry's tables in order.
func sortGrants(grants []LockedGrant) []LockedGrant {
	out := make([]LockedGrant, len(grants))
	for i, g := range grants {
		g.Tables = slices.Clone(g.Tables)
		slices.SortFunc(g.Tables, compareTables)
		out[i] = g
	}
	slices.SortFunc(out, func(a, b LockedGrant) int {
		if c := strings.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return compareTables(first(a.Tables), first(b.Tables))
	})
	return out
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// compareTables orders NAME@VERSION keys by name, then version.
func compareTables(a, b string) int {
	an, av, _ := strings.Cut(a, "@")
	bn, bv, _ := strings.Cut(b, "@")
	if c := strings.Compare(an, bn); c != 0 {
		return c
	}
	return providers.CompareVersions(av, bv)
}

// quoteList writes strings as the elements of a TOML array.
func quoteList(list []string) string {
	quoted := make([]string, len(list))
	for i, x := range list {
		quoted[i] = tomledit.Quote(x)
	}
	return strings.Join(quoted, ", ")
}

// field writes key = "value", or nothing for an empty value.
func field(b *bytes.Buffer, key, value string) {
	if value != "" {
		fmt.Fprintf(b, "%s = %s\n", key, tomledit.Quote(value))
	}
}

// WriteLock replaces root's dalo.lock with l, atomically and durably: a
// reader sees the old lock or the new one, never a part.
func WriteLock(root string, l *Lock) error {
	return store.WriteFile(filepath.Join(root, LockFile), l.Marshal(), 0o644)
}
