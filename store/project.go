package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"dalo/plan"
)

// A project's scope is what 'dalo sync' installs into for one project: the
// harness's own project files (a per-user settings file of the project,
// its skills and agents directories, see providers.Table.InProject), and
// in the store projects/<id>/, which holds that scope's install records
// (installs/) and dispatch plans (plans/) as the store's own installs/ and
// plans/ hold the user's, and project.json, the project's directory. The
// ledger, the staged trees and the dispatcher copies are the user's, shared
// by every scope: a user approves a package once, for every project.
type projectScope struct {
	Root string `json:"root"` // the project's directory, absolute
	id   string
}

// projectFile is the record of a project scope's directory.
const projectFile = "project.json"

// ProjectID is the id of the scope of the project at root, an absolute
// directory: 16 hexadecimal digits of the SHA-256 of its path, so that
// the same project always has the same scope and its entries the same
// command.
func ProjectID(root string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	return hex.EncodeToString(sum[:8])
}

// InProject returns the store as it installs into the scope of the project
// at root (made absolute, symlinks resolved): its install records and
// plans are the project's, its ledger and staged trees the store's.
func (s *Store) InProject(root string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("project %s: %w", root, err)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return s.inScope(&projectScope{Root: abs, id: ProjectID(abs)}), nil
}

// inScope is the store s in the project scope p (nil: the user's own): a
// new value rather than a copy, which would copy the lock of the tables s
// read.
func (s *Store) inScope(p *projectScope) *Store {
	return &Store{Dir: s.Dir, Progress: s.Progress, TablesCache: s.TablesCache, project: p}
}

// Project is the directory of the project the store installs into, or ""
// for the user's own scope.
func (s *Store) Project() string {
	if s.project == nil {
		return ""
	}
	return s.project.Root
}

// projectID is the id of the store's project scope, or "".
func (s *Store) projectID() string {
	if s.project == nil {
		return ""
	}
	return s.project.id
}

// scopePath is the path of elem in the store's scope: below the store for
// the user's own, below projects/<id> for a project's.
func (s *Store) scopePath(elem ...string) string {
	if s.project == nil {
		return s.path(elem...)
	}
	return s.path(append([]string{plan.ProjectsDir, s.project.id}, elem...)...)
}

// putProject records the project's directory in its scope, once: doctor
// and collection find a scope's project by it.
func (s *Store) putProject() error {
	if s.project == nil {
		return nil
	}
	name := s.scopePath(projectFile)
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	if err := os.MkdirAll(s.scopePath(), 0o700); err != nil {
		return fmt.Errorf("recording project %s: %w", s.project.Root, err)
	}
	return writeJSON(name, s.project)
}

// projectScopes lists the project scopes the store holds, each as the
// store in that scope: what collecting staged trees and dispatcher copies
// must count besides the user's own. A scope whose project.json cannot be
// read is an error: nothing may be collected on a partial answer.
func (s *Store) projectScopes() ([]*Store, error) {
	ents, err := os.ReadDir(s.path(plan.ProjectsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing project scopes: %w", err)
	}
	var out []*Store
	for _, e := range ents {
		if !e.IsDir() || !plan.ValidProject(e.Name()) {
			continue
		}
		var p projectScope
		if err := readJSON(s.path(plan.ProjectsDir, e.Name(), projectFile), &p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				// A scope that never got past its first record: its
				// installs and plans, if any, still count.
				p.Root = ""
			} else {
				return nil, err
			}
		}
		p.id = e.Name()
		out = append(out, s.inScope(&p))
	}
	return out, nil
}

// allScopes is the user's own scope and every project scope of the store.
func (s *Store) allScopes() ([]*Store, error) {
	ps, err := s.projectScopes()
	if err != nil {
		return nil, err
	}
	return append([]*Store{s.inScope(nil)}, ps...), nil
}

// ProjectScopeOf returns the store in the scope of the project that holds
// dir (dir itself or the nearest directory above it with a scope in the
// store), or nil when dalo installed into none there.
func (s *Store) ProjectScopeOf(dir string) *Store {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(s.path(plan.ProjectsDir, ProjectID(d), projectFile)); err == nil {
			ps, err := s.InProject(d)
			if err != nil {
				return nil
			}
			return ps
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// GrantDigests maps the id of every grant installing the selected package
// asks for (each tool, hook, skill and agent, whether approved or not) to
// the digest of what it binds now: what dalo.lock records and sync checks
// the pinned bytes against.
func (s *Store) GrantDigests(sel *Selection, getenv func(string) string) (map[string]string, error) {
	tools, hooks, err := s.GrantStates(sel, nil)
	if err != nil {
		return nil, err
	}
	acts, err := s.MemberActions(sel, sel.Table, getenv)
	if err != nil {
		return nil, err
	}
	members, err := s.MemberStates(sel, acts, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, m := range []map[string]GrantState{tools, hooks, members} {
		for _, st := range m {
			out[st.ID] = st.Digest
		}
	}
	return out, nil
}

// dropEmptyScope removes the store's project scope once it holds no
// install record and no plan: a project whose last package sync removed
// leaves nothing behind in the store.
func (s *Store) dropEmptyScope() error {
	if s.project == nil {
		return nil
	}
	for _, d := range []string{s.scopePath("installs"), s.scopePath("plans")} {
		ents, err := os.ReadDir(d)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if len(ents) > 0 {
			return nil
		}
	}
	if err := os.RemoveAll(s.scopePath()); err != nil {
		return fmt.Errorf("removing the scope of project %s: %w", s.project.Root, err)
	}
	return plan.SyncDir(s.path(plan.ProjectsDir))
}
