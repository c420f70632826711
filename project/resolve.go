package project

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"dalo/engine"
	"dalo/providers"
	"dalo/store"
)

// Options say how Resolve treats the pins of the lock it is given.
type Options struct {
	// Update moves the pin of every git source, or with Only of that one,
	// to the commit its ref names now.
	Update bool
	Only   string
	// Progress is told of each fetch (store.Store.Progress).
	Progress func(what string) (done func())
	// Tables, when not nil, are the only tables (NAME@VERSION) resolved
	// on: those of the lock Verify checks.
	Tables []string
}

// Resolve reads p's packages as they are at the pins of old (nil: no lock
// yet) and returns the lock that says so. A git source old pins with the
// same URL and ref keeps its pin, unless opts.Update moves it; a new or
// changed one is pinned to the commit its ref names now. Each package is
// validated as install would validate it, and every grant installing it
// on each of its providers asks for is digested, as on a fresh home.
func Resolve(p *Project, old *Lock, opts Options) (*Lock, error) {
	if opts.Only != "" {
		s, ok := p.Source(opts.Only)
		if !ok {
			return nil, fmt.Errorf("%s declares no source %s", File, opts.Only)
		}
		if s.Git == "" {
			return nil, fmt.Errorf("source %s is a directory of the project: it has no pin to move", opts.Only)
		}
	}
	w, err := store.NewScratch()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	w.Progress = opts.Progress
	out := &Lock{}
	registry := map[string]string{}
	for _, s := range p.Sources {
		ls := LockedSource{ID: s.ID, Git: s.Git, Ref: s.Ref, Path: s.Path}
		if s.Git != "" {
			pin := ""
			if was, ok := old.sourceOf(s); ok && !(opts.Update && (opts.Only == "" || opts.Only == s.ID)) {
				pin = was.Commit
			}
			commit, dir, err := w.Git(s.ID, s.Git, s.Ref, pin)
			if err != nil {
				return nil, fmt.Errorf("source %s: %w", s.ID, err)
			}
			ls.Commit, registry[s.ID] = commit, dir
		} else {
			dir, err := p.sourceDir(s)
			if err != nil {
				return nil, err
			}
			registry[s.ID] = dir
		}
		out.Sources = append(out.Sources, ls)
	}
	ts, err := providers.Load()
	if err != nil {
		return nil, err
	}
	for _, pk := range p.Packages {
		lp := LockedPackage{Source: pk.Source, Name: pk.Name, Providers: slices.Sorted(slices.Values(pk.Providers))}
		tables := map[binding]string{} // → digest
		for _, t := range resolveOn(ts, lp.Providers, opts.Tables) {
			src := store.Source{ID: pk.Source, Path: registry[pk.Source]}
			loaded, err := store.SelectIn(src, registry, t.Key(), []string{pk.Name})
			if err != nil {
				return nil, err
			}
			sel, err := loaded.Pick(pk.Name)
			if errors.Is(err, store.ErrNoPackage) {
				return nil, p.errorf("E113", engine.Field(pk.field, "ref"), "source %s%s has no package %s; %s", pk.Source, atCommit(lockedCommit(out, pk.Source)), pk.Name, store.PackagesOf(loaded.Loaded))
			}
			if err != nil {
				return nil, err
			}
			if err := sel.Valid(); err != nil {
				state := "is invalid"
				if errors.Is(err, store.ErrBlocked) {
					state = "is blocked"
				}
				// Valid's first line names the scratch directory, which is
				// gone when this is read: the findings are what matter.
				_, findings, _ := strings.Cut(err.Error(), "\n")
				return nil, p.errorf("E113", engine.Field(pk.field, "ref"), "package %s%s %s, and cannot be locked:\n%s", pk.Ref(), atCommit(lockedCommit(out, pk.Source)), state, findings)
			}
			m := sel.Pkg.Manifest.Plugin
			lp.ID, lp.Version = m.ID, m.Version
			// Digested as sync installs it: on the table in a project's
			// scope, where the skills, agents and hooks file are the
			// project's. A table without one is a harness sync skips,
			// and the lock holds nothing for it.
			pt, err := t.InProject(w.ProjectDir())
			if err != nil || (opts.Tables != nil && !slices.Contains(opts.Tables, t.Key())) {
				continue
			}
			sel.Table = pt
			grants, err := w.Grants(sel)
			if err != nil {
				return nil, fmt.Errorf("package %s on %s: %w", pk.Ref(), t.Key(), err)
			}
			for id, d := range grants {
				tables[binding{id, t.Key()}] = d
			}
			if !slices.Contains(out.resolved, t.Key()) {
				out.resolved = append(out.resolved, t.Key())
			}
		}
		lp.Grants = groupGrants(tables)
		out.Packages = append(out.Packages, lp)
	}
	slices.SortFunc(out.Packages, func(a, b LockedPackage) int { return strings.Compare(a.Ref(), b.Ref()) })
	return out, nil
}

// resolveOn is the tables a package of providers is read on: every table
// of theirs, or with only (not nil) those of only, or when none of those
// is of theirs the newest table of the first, read for its manifest and
// validity alone.
func resolveOn(ts *providers.Tables, names []string, only []string) []*providers.Table {
	var out []*providers.Table
	for _, t := range ts.All() {
		if slices.Contains(names, t.Name) && (only == nil || slices.Contains(only, t.Key())) {
			out = append(out, t)
		}
	}
	if len(out) == 0 && len(names) > 0 {
		if t, ok := ts.Newest(names[0]); ok {
			out = append(out, t)
		}
	}
	return out
}

// groupGrants turns digests by grant id and table into the lock's
// entries: one per grant id and digest, with the tables it binds that on.
func groupGrants(digests map[binding]string) []LockedGrant {
	type key struct{ id, digest string }
	byKey := map[key][]string{}
	for b, d := range digests {
		k := key{b.id, d}
		byKey[k] = append(byKey[k], b.table)
	}
	var out []LockedGrant
	for k, tables := range byKey {
		out = append(out, LockedGrant{ID: k.id, Digest: k.digest, Tables: tables})
	}
	return sortGrants(out)
}

// sourceOf returns the source l pins for s: the same id, URL and ref.
func (l *Lock) sourceOf(s Source) (LockedSource, bool) {
	if l == nil {
		return LockedSource{}, false
	}
	ls, ok := l.Source(s.ID)
	if !ok || ls.Git != s.Git || ls.Ref != s.Ref || ls.Path != s.Path {
		return LockedSource{}, false
	}
	return ls, true
}

// sourceDir is where a path source's packages are read, refused when a
// symlink takes it out of the project or it is no source directory.
func (p *Project) sourceDir(s Source) (string, error) {
	dir := p.Dir(s)
	field := engine.Field(engine.Field("sources", s.ID), "path")
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", p.errorf("E112", field, "%s: %v", s.Path, unwrapPath(err))
	}
	root, err := filepath.EvalSymlinks(p.Root)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", p.errorf("E112", field, "%s leads out of the project (to %s) through a symlink: a source path stays inside the project", s.Path, real)
	}
	if err := engine.CheckSourceDir(dir); err != nil {
		return "", p.errorf("E112", field, "%v", err)
	}
	return dir, nil
}

// lockedCommit is the commit l pins source id to, or "".
func lockedCommit(l *Lock, id string) string {
	s, _ := l.Source(id)
	return s.Commit
}

// unwrapPath is err without the path an *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
