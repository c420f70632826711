package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"dalo/store/gitrepo"
)

// A Scratch reads sources the registry does not hold, a project's, in a
// temporary directory of its own: git sources are fetched and their trees
// written as 'dalo source add' writes a registered source's (the same
// hardened git, layout directories and limits), and grants are computed
// as on a fresh home, with no ledger and nothing installed, so that what
// it says depends on the sources alone. Close removes it all.
type Scratch struct {
	dir  string
	home *Store // an empty store: GrantStates and MemberActions read none
	// Progress is Store.Progress, for the fetches.
	Progress func(what string) (done func())
}

// NewScratch makes a scratch directory under the system's temporary
// directory.
func NewScratch() (*Scratch, error) {
	dir, err := os.MkdirTemp("", "dalo-scratch-")
	if err != nil {
		return nil, err
	}
	return &Scratch{dir: dir, home: &Store{Dir: filepath.Join(dir, "home")}}, nil
}

// Getenv is the environment Grants places harnesses with: HOME an empty
// directory of the scratch directory's, every other variable unset.
func (w *Scratch) Getenv(key string) string {
	if key == "HOME" {
		return filepath.Join(w.dir, "harness-home")
	}
	return ""
}

// ProjectDir is the project Grants places a project's scope in: a
// directory of the scratch directory's, where nothing is.
func (w *Scratch) ProjectDir() string { return filepath.Join(w.dir, "project") }

// Close removes the scratch directory and everything in it.
func (w *Scratch) Close() error { return removeTree(w.dir) }

// Git fetches ref of url ("" the remote's default branch) into a scratch
// repository for id and writes the tree of pin, or when pin is "" of the
// commit ref names now, into a directory it returns with the commit. A
// pin the ref no longer reaches is looked for among every branch and tag
// (a force-push upstream); one none reaches is an error wrapping
// gitrepo.ErrNoCommit.
func (w *Scratch) Git(id, url, ref, pin string) (commit, dir string, err error) {
	u, isGit, err := gitrepo.ParseURL(url)
	if err != nil {
		return "", "", err
	}
	if !isGit {
		return "", "", fmt.Errorf("%s is not a git URL", url)
	}
	if ref != "" {
		if err := gitrepo.CheckRef(ref); err != nil {
			return "", "", err
		}
	}
	if pin != "" {
		if err := gitrepo.CheckCommit(pin); err != nil {
			return "", "", err
		}
	}
	g, err := findGit()
	if err != nil {
		return "", "", err
	}
	s := &Store{Dir: w.dir, Progress: w.Progress}
	src := s.sourceDir(id)
	if err := os.MkdirAll(src, 0o700); err != nil {
		return "", "", err
	}
	repo, err := g.Init(gitContext(), repoDir(src))
	if err != nil {
		return "", "", err
	}
	repo.FetchBytes = fetchBytes
	done := s.working("fetching " + u.String())
	head, err := repo.FetchRef(gitContext(), u, ref)
	done()
	if err != nil {
		return "", "", fetchError(u, ref, err)
	}
	want := head
	if pin != "" {
		want = pin
		if _, _, err := repo.Commit(gitContext(), pin); errors.Is(err, gitrepo.ErrNoCommit) {
			done := s.working("fetching every branch and tag of " + u.String())
			err := repo.FetchAll(gitContext(), u)
			done()
			if err != nil {
				return "", "", fetchError(u, "", err)
			}
		}
	}
	commit, tree, err := repo.Commit(gitContext(), want)
	if errors.Is(err, gitrepo.ErrNoCommit) {
		return "", "", fmt.Errorf("commit %s is not in %s: no branch or tag there reaches it (a force-push may have removed it): %w", pin, u, gitrepo.ErrNoCommit)
	}
	if err != nil {
		return "", "", err
	}
	if err := writeSnapshot(repo, src, commit, tree); err != nil {
		return "", "", err
	}
	return commit, filepath.Join(src, "trees", tree), nil
}

// SelectIn loads the packages names of src, a source the registry does
// not hold, read from src.Path, its references resolved against registry
// (source id → directory), for provider (NAME or NAME@VERSION; "" none):
// Select's answer, which Pick narrows to one package.
func SelectIn(src Source, registry map[string]string, provider string, names []string) (*Selection, error) {
	table, err := tableFor(provider)
	if err != nil {
		return nil, err
	}
	sel := &Selection{Source: src, Registry: registry, Table: table}
	if err := sel.loadPackages(names, nil); err != nil {
		return nil, err
	}
	return sel, nil
}

// Pick narrows what SelectIn loaded to the package name; the error wraps
// ErrNoPackage when the source has none.
func (sel *Selection) Pick(name string) (*Selection, error) { return sel.pick(name) }

// Grants is the digest, by grant id, of every grant installing the
// selected package on sel.Table asks for: each tool and hook
// (GrantStates) and each skill and agent install writes there
// (MemberStates), computed as on a fresh home: the harness's directories
// are placed in the scratch directory (Getenv), where nothing is, so that
// neither this user's environment nor their files change the answer.
func (w *Scratch) Grants(sel *Selection) (map[string]string, error) {
	return w.home.GrantDigests(sel, w.Getenv)
}
