package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"

	"dalo/engine"
	"dalo/plan"
	"dalo/store/gitrepo"
)

// A GitPin is where a git source is fetched from and the commit the
// registry pins it to. Only 'dalo source update' moves it.
type GitPin struct {
	URL    string `json:"url"`           // without credentials
	Ref    string `json:"ref,omitempty"` // the branch or tag followed; "" the remote's default branch
	Commit string `json:"commit"`
	Tree   string `json:"tree"` // the commit's tree: the name of its snapshot in the store
}

// RefName is the ref the pin follows, as git names it: HEAD for the
// remote's default branch.
func (p *GitPin) RefName() string {
	if p.Ref == "" {
		return "HEAD"
	}
	return p.Ref
}

// A git source lives under git/<id>/: repo.git, the bare repository of
// what was fetched from its URL, and trees/<tree>/, the snapshot of the
// pinned commit's tree that every reader of the source reads (see
// gitrepo.WriteTree): written once by dalo from the object store,
// read-only, named by the tree's id. The directory git/<id> is also the
// source's lock: a fetch holds it (flock) from the fetch to the new pin,
// and nothing collects a source's snapshots or removes it while a fetch
// holds it.
const gitDir = "git"

func (s *Store) sourceDir(id string) string { return s.path(gitDir, id) }

func repoDir(dir string) string { return filepath.Join(dir, "repo.git") }

// sourceRoot is the directory a source's packages are read from.
func (s *Store) sourceRoot(src Source) string {
	if src.Git != nil {
		return filepath.Join(s.sourceDir(src.ID), "trees", src.Git.Tree)
	}
	return src.Path
}

// snapshotLimits bound what dalo writes of a git source's tree: the file
// limit, and the entries and bytes of sixteen and four packages at their
// limits (65,536 entries, 1 GiB): far beyond a source of many packages,
// well short of what would fill a disk.
func snapshotLimits(lim engine.Limits) gitrepo.Limits {
	return gitrepo.Limits{FileBytes: lim.FileBytes, Entries: 16 * lim.PackageEntries, Bytes: 4 * lim.PackageBytes}
}

// fetchBytes bounds one fetch of a git source: what a snapshot may hold
// (snapshotLimits), 1 GiB. A source's history, compressed, is far
// smaller; a fetch past it is refused, nothing of it kept, before it
// fills the disk. Tests lower it.
var fetchBytes = snapshotLimits(plan.DraftLimits).Bytes

// layoutDirs are the top-level directories a source's packages are read
// from (#SourceLayout): all of a git source's tree dalo writes.
func layoutDirs(lay engine.Layout) []string {
	seen := map[string]bool{}
	for _, e := range lay {
		seen[e.Dir] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// gitContext is the context of a source's git runs; gitrepo.Timeout
// bounds each.
func gitContext() context.Context { return context.Background() }

// findGit is the system git, with the crash test's step while a fetch runs.
func findGit() (*gitrepo.Git, error) {
	g, err := gitrepo.Find()
	if err != nil {
		return nil, err
	}
	g.Started = func() { step("source:fetching") }
	return g, nil
}

// writeSnapshot writes the tree of commit into dir/trees/<tree>, unless
// it is there: built under a temporary name, locked while it is built,
// and renamed into place whole.
func writeSnapshot(repo *gitrepo.Repo, dir, commit, tree string) error {
	final := filepath.Join(dir, "trees", tree)
	if _, err := os.Lstat(final); err == nil {
		return nil
	}
	rules, err := engine.LoadRules()
	if err != nil {
		return err
	}
	trees := filepath.Join(dir, "trees")
	if err := os.MkdirAll(trees, 0o700); err != nil {
		return fmt.Errorf("writing the tree of %s: %w", commit, err)
	}
	tmp, release, err := lockedTempDir(trees, tree)
	if err != nil {
		return fmt.Errorf("writing the tree of %s: %w", commit, err)
	}
	defer release()
	ok := false
	defer func() {
		if !ok {
			removeTree(tmp)
		}
	}()
	if err := repo.WriteTree(gitContext(), commit, layoutDirs(rules.Layout), tmp, snapshotLimits(rules.Limits)); err != nil {
		return err
	}
	step("source:tree-written")
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("writing the tree of %s: %w", commit, err)
	}
	ok = true
	return plan.SyncDir(trees)
}

// lockedTempDir makes a temporary directory in dir for name and holds its
// lock (lockTemp) until release: a writer that finds it knows it is not
// abandoned.
func lockedTempDir(dir, name string) (string, func(), error) {
	tmp, err := os.MkdirTemp(dir, tempPrefix(name)+plan.TempMark)
	if err != nil {
		return "", nil, err
	}
	f, err := os.Open(tmp)
	if err == nil {
		if err = lockTemp(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.Remove(tmp)
		return "", nil, err
	}
	return tmp, func() { f.Close() }, nil
}

// lockSource takes the lock of a git source's directory, waiting for a
// fetch that holds it, or with wait false not at all (busy says it is
// held). Lock order: a source's lock, then the store's.
func lockSource(dir string, wait bool) (release func(), busy bool, err error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, false, err
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	err = plan.Flock(f, how)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, true, nil
	}
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("locking %s: %w", dir, err)
	}
	return func() { f.Close() }, false, nil
}

// addGitSource fetches ref of u into a new bare repository, writes the
// tree of the commit it names, and registers the source pinned to it.
// Everything is built under a temporary name beside the sources, and put
// in place and registered under the store's lock: a run killed at any
// point leaves the registry as it was, and its litter is collected.
func (s *Store) addGitSource(id string, u gitrepo.URL, ref string) (Source, error) {
	if ref != "" {
		if err := gitrepo.CheckRef(ref); err != nil {
			return Source{}, err
		}
	}
	if _, err := s.LookupSource(id); err == nil {
		return Source{}, s.alreadyRegistered(id)
	}
	g, err := findGit()
	if err != nil {
		return Source{}, err
	}
	if err := os.MkdirAll(s.path(gitDir), 0o700); err != nil {
		return Source{}, fmt.Errorf("adding source %s: %w", id, err)
	}
	tmp, release, err := lockedTempDir(s.path(gitDir), id)
	if err != nil {
		return Source{}, fmt.Errorf("adding source %s: %w", id, err)
	}
	defer release()
	ok := false
	defer func() {
		if !ok {
			removeTree(tmp)
		}
	}()
	repo, err := g.Init(gitContext(), repoDir(tmp))
	if err != nil {
		return Source{}, err
	}
	repo.FetchBytes = fetchBytes
	done := s.working("fetching " + u.String())
	commit, err := repo.FetchRef(gitContext(), u, ref)
	done()
	if err != nil {
		return Source{}, fetchError(u, ref, err)
	}
	step("source:fetched")
	commit, tree, err := repo.Commit(gitContext(), commit)
	if err != nil {
		return Source{}, err
	}
	if err := repo.Keep(gitContext(), commit, ""); err != nil {
		return Source{}, err
	}
	if err := writeSnapshot(repo, tmp, commit, tree); err != nil {
		return Source{}, err
	}
	if err := plan.SyncDir(tmp); err != nil {
		return Source{}, err
	}

	l, srcs, err := s.lockUnregistered(id)
	if err != nil {
		return Source{}, err
	}
	defer l.Unlock()
	final := s.sourceDir(id)
	if err := s.dropSourceDir(id); err != nil {
		return Source{}, err
	}
	if err := os.Rename(tmp, final); err != nil {
		return Source{}, fmt.Errorf("adding source %s: %w", id, err)
	}
	ok = true // from here on the directory is collected unless registered
	if err := plan.SyncDir(s.path(gitDir)); err != nil {
		return Source{}, err
	}
	step("source:in-place")
	src := Source{ID: id, Git: &GitPin{URL: u.String(), Ref: ref, Commit: commit, Tree: tree}}
	src.Path = s.sourceRoot(src)
	srcs = append(srcs, src)
	return src, s.putSources(srcs)
}

// dropSourceDir removes git/<id> that no registered source owns (what a
// run killed after putting it in place and before registering left),
// unless a fetch holds it. The caller holds the store's lock.
func (s *Store) dropSourceDir(id string) error {
	dir := s.sourceDir(id)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	release, busy, err := lockSource(dir, false)
	if err != nil {
		return err
	}
	if busy {
		return fmt.Errorf("%s is in use by another dalo command; run this again once it ends", dir)
	}
	defer release()
	if err := removeTree(dir); err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return nil
}

// fetchError says what went wrong fetching ref of u, in the words a user
// needs: no git, no such ref, or what git said.
func fetchError(u gitrepo.URL, ref string, err error) error {
	name := ref
	if name == "" {
		name = "HEAD"
	}
	switch {
	case gitrepo.IsMissingRef(err) && ref == "":
		return fmt.Errorf("%s has no default branch (its HEAD names no commit): name a branch or tag with --ref", u)
	case gitrepo.IsMissingRef(err):
		return fmt.Errorf("%s has no branch or tag %s", u, name)
	case errors.Is(err, gitrepo.ErrNoGit):
		return err
	case errors.Is(err, gitrepo.ErrShallow):
		return fmt.Errorf("%s is a shallow clone (its history is cut short), and dalo keeps whole histories: add a complete clone, or complete this one with 'git fetch --unshallow'", u)
	}
	return fmt.Errorf("cannot fetch %s %s: %w", u, name, err)
}

// A SourceUpdate is what 'dalo source update' did to one git source.
type SourceUpdate struct {
	Source Source // with its new pin
	Old    GitPin
	// Rewritten says the new commit does not descend from the old one:
	// the ref was moved back or rewritten upstream (a force-push), or
	// --to went back.
	Rewritten bool
	Packages  []PackageDiff // what changed, package by package
}

// UpdateSource fetches the ref a git source follows and moves its pin to
// the commit the ref names now, or with to, to that commit (a commit id,
// whole or abbreviated: one the repository keeps, the pin or the one
// before it, or one a branch or tag of the URL reaches now). It writes the new commit's tree, says per package
// what changed, and only then moves the pin, under the store's lock: a
// run killed before leaves the previous pin in force, its tree in place.
// Installed packages keep running their staged, approved bytes: nothing
// they run changes until 'dalo plugin update'.
func (s *Store) UpdateSource(id, to string) (*SourceUpdate, error) {
	src, err := s.LookupSource(id)
	if err != nil {
		return nil, err
	}
	if src.Git == nil {
		return nil, fmt.Errorf("source %s is a directory (%s): it is read as it is now, and has no pin to move", id, src.Path)
	}
	if to != "" {
		if err := gitrepo.CheckCommit(to); err != nil {
			return nil, err
		}
	}
	u, _, err := gitrepo.ParseURL(src.Git.URL)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", id, err)
	}
	g, err := findGit()
	if err != nil {
		return nil, err
	}
	dir := s.sourceDir(id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	release, _, err := lockSource(dir, true)
	if err != nil {
		return nil, err
	}
	defer release()
	repo := g.Open(repoDir(dir))
	if _, err := os.Stat(repo.Dir); errors.Is(err, fs.ErrNotExist) {
		// The repository is a cache of what the URL served: fetch it
		// again.
		if repo, err = g.Init(gitContext(), repo.Dir); err != nil {
			return nil, err
		}
	}
	if err := repo.RemoveStaleLocks(); err != nil {
		return nil, fmt.Errorf("source %s: %w", id, err)
	}
	repo.FetchBytes = fetchBytes
	// Whatever this update ends in, the repository keeps what the pin,
	// and the one before it, reach, and nothing else a fetch brought
	// (other branches, what a force-push replaced, a fetch whose update
	// failed). An error only leaves more than that for the next update.
	pin, previous := src.Git.Commit, ""
	defer func() { repo.Keep(gitContext(), pin, previous) }()
	commit, err := s.fetchCommit(repo, u, src.Git.Ref, to)
	if err != nil {
		return nil, err
	}
	step("source:fetched")
	commit, tree, err := repo.Commit(gitContext(), commit)
	if err != nil {
		return nil, err
	}
	if err := writeSnapshot(repo, dir, commit, tree); err != nil {
		return nil, err
	}
	up := &SourceUpdate{Old: *src.Git}
	if commit != src.Git.Commit {
		if _, _, err := repo.Commit(gitContext(), src.Git.Commit); err == nil {
			desc, err := repo.IsAncestor(gitContext(), src.Git.Commit, commit)
			if err != nil {
				return nil, err
			}
			up.Rewritten = !desc
		}
	}
	next := src
	next.Git = &GitPin{URL: src.Git.URL, Ref: src.Git.Ref, Commit: commit, Tree: tree}
	next.Path = s.sourceRoot(next)
	if commit != src.Git.Commit {
		if up.Packages, err = s.diffSources(src, next); err != nil {
			return nil, err
		}
	}

	l, err := s.Lock()
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	srcs, err := s.Sources()
	if err != nil {
		return nil, err
	}
	i := sort.Search(len(srcs), func(i int) bool { return srcs[i].ID >= id })
	if i == len(srcs) || srcs[i].ID != id || srcs[i].Git == nil || *srcs[i].Git != *src.Git {
		return nil, fmt.Errorf("source %s changed while it was fetched; nothing was changed: run this again", id)
	}
	srcs[i] = next
	if err := s.putSources(srcs); err != nil {
		return nil, err
	}
	step("source:pinned")
	if commit != src.Git.Commit {
		pin, previous = commit, src.Git.Commit
	}
	up.Source = next
	// The previous tree goes now; one this cannot remove, the next
	// writer collects.
	s.gcTrees(id, tree)
	return up, nil
}

// fetchCommit fetches the commit an update pins: the tip of ref, or the
// commit to, fetching every branch and tag when the repository lacks it.
func (s *Store) fetchCommit(repo *gitrepo.Repo, u gitrepo.URL, ref, to string) (commit string, err error) {
	if to == "" {
		done := s.working("fetching " + u.String())
		commit, err = repo.FetchRef(gitContext(), u, ref)
		done()
		if err != nil {
			return "", fetchError(u, ref, err)
		}
	} else if commit, _, err = repo.Commit(gitContext(), to); errors.Is(err, gitrepo.ErrNoCommit) {
		done := s.working("fetching every branch and tag of " + u.String())
		// Not err := : the Commit below must set the err checked after
		// this block, or a commit the fetch brought reads as missing.
		ferr := repo.FetchAll(gitContext(), u)
		done()
		if ferr != nil {
			return "", fetchError(u, "", ferr)
		}
		if commit, _, err = repo.Commit(gitContext(), to); errors.Is(err, gitrepo.ErrNoCommit) {
			return "", fmt.Errorf("commit %s is not in %s: no branch or tag there reaches it, and it is neither the pin nor the one before it (a force-push may have removed it)", to, u)
		}
	}
	if err != nil {
		return "", err
	}
	return commit, nil
}

// gcTrees removes the snapshots of source id other than keep, and what a
// writer killed while writing one left. The caller holds the source's lock.
func (s *Store) gcTrees(id, keep string) error {
	trees := filepath.Join(s.sourceDir(id), "trees")
	ents, err := os.ReadDir(trees)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range ents {
		p := filepath.Join(trees, e.Name())
		switch {
		case isTemp(e.Name()):
			removeAbandoned(p)
		case e.Name() != keep:
			if err := removeTree(p); err != nil {
				return fmt.Errorf("removing %s: %w", p, err)
			}
		}
	}
	return plan.SyncDir(trees)
}

// gcSources removes what no registered git source owns under git/: the
// directory of a source removed or never registered, snapshots of commits
// no longer pinned, and what writers killed half way left. It skips a
// source a fetch holds, and deletes nothing unless it read the registry.
// The caller holds the store's lock.
func (s *Store) gcSources() {
	ents, err := os.ReadDir(s.path(gitDir))
	if err != nil {
		return
	}
	srcs, err := s.Sources()
	if err != nil {
		return
	}
	pinned := map[string]string{}
	for _, x := range srcs {
		if x.Git != nil {
			pinned[x.ID] = x.Git.Tree
		}
	}
	for _, e := range ents {
		p := filepath.Join(s.path(gitDir), e.Name())
		if isTemp(e.Name()) {
			removeAbandoned(p)
			continue
		}
		release, busy, err := lockSource(p, false)
		if err != nil || busy {
			continue
		}
		if tree, ok := pinned[e.Name()]; ok {
			s.gcTrees(e.Name(), tree)
		} else {
			removeTree(p)
		}
		release()
	}
}
