package project

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"dalo/engine"
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
	// Getenv places the harnesses' directories (os.Getenv); they decide
	// only which members a provider writes.
	Getenv func(string) string
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
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
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
	for i, pk := range p.Packages {
		lp := LockedPackage{Source: pk.Source, Name: pk.Name, Providers: slices.Sorted(slices.Values(pk.Providers))}
		for _, provider := range lp.Providers {
			src := store.Source{ID: pk.Source, Path: registry[pk.Source]}
			loaded, err := store.SelectIn(src, registry, provider, []string{pk.Name})
			if err != nil {
				return nil, err
			}
			sel, err := loaded.Pick(pk.Name)
			if errors.Is(err, store.ErrNoPackage) {
				return nil, fmt.Errorf("%s: packages[%d]: source %s has no package %s; its packages: %s", File, i, pk.Source, pk.Name, strings.Join(loaded.Loaded.Names, ", "))
			}
			if err != nil {
				return nil, err
			}
			if err := sel.Valid(); err != nil {
				return nil, fmt.Errorf("package %s: %w", pk.Ref(), err)
			}
			m := sel.Pkg.Manifest.Plugin
			lp.ID, lp.Version = m.ID, m.Version
			grants, err := w.Grants(sel, opts.Getenv)
			if err != nil {
				return nil, fmt.Errorf("package %s on %s: %w", pk.Ref(), provider, err)
			}
			for id, d := range grants {
				lp.Grants = append(lp.Grants, LockedGrant{ID: id, Digest: d})
			}
		}
		slices.SortFunc(lp.Grants, func(a, b LockedGrant) int { return strings.Compare(a.ID, b.ID) })
		out.Packages = append(out.Packages, lp)
	}
	slices.SortFunc(out.Packages, func(a, b LockedPackage) int { return strings.Compare(a.Ref(), b.Ref()) })
	return out, nil
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
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("%s: sources.%s.path: %w", File, s.ID, err)
	}
	root, err := filepath.EvalSymlinks(p.Root)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: sources.%s.path: %s leads out of the project (to %s) through a symlink: a source path stays inside the project", File, s.ID, s.Path, real)
	}
	if err := engine.CheckSourceDir(dir); err != nil {
		return "", fmt.Errorf("%s: sources.%s.path: %w", File, s.ID, err)
	}
	return dir, nil
}
