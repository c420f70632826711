package store

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"dalo/hooktrust"
	"dalo/internal/unidiff"
	"dalo/plan"
	"dalo/providers"
)

// A RemoveResult says what remove took away, and what it kept because the
// user changed it.
type RemoveResult struct {
	Config    string
	Diff      string
	TrustFile string   // the harness's trust file, when remove changes it
	TrustDiff string   // unified diff of TrustFile
	Moved     []string // trust keys of the user's hooks the change moves
	Removed   []string
	Kept      []string
	Notes     []string
}

// checkPackageRefs returns the first of pkgs that is not SOURCE:PACKAGE.
func checkPackageRefs(pkgs []string) error {
	for _, pkg := range pkgs {
		if _, _, err := ParsePackageRef(pkg); err != nil {
			return err
		}
	}
	return nil
}

// Remove uninstalls the packages pkgs (SOURCE:NAME each) from the provider
// of table t: their dispatcher entries once no installed package needs
// them, their place in the plan, the skills and agents dalo wrote for them
// (exactly those files), the harness trust dalo recorded for entries that
// go, and their staged trees once nothing uses them. The entries still in
// use call the dispatcher d, copied into the store, since the plan they
// read is written by this dalo. It refuses, writing nothing, to remove a
// package another package installed there requires, unless both go. It
// does not need the source: what to remove is in the store. Grants stay
// (revoke removes them). With dryRun it computes everything and writes
// nothing.
func (s *Store) Remove(t *providers.Table, pkgs []string, d Dispatcher, dryRun bool) (*RemoveResult, error) {
	if err := checkPackageRefs(pkgs); err != nil {
		return nil, err
	}
	if !dryRun {
		l, err := s.Lock()
		if err != nil {
			return nil, err
		}
		defer l.Unlock()
	}
	in, err := s.Installed(t.Name)
	if err != nil {
		return nil, err
	}
	gone, next, err := removing(t, in, pkgs)
	if err != nil {
		return nil, err
	}
	res := &RemoveResult{}
	cfg, err := removeConfig(t, in)
	if err != nil {
		return nil, err
	}
	res.Config = cfg
	old, err := readConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := s.dispatcherCopy(d)
	if err != nil {
		return nil, err
	}
	o := s.ownerOf(t)
	want, err := s.wantEntries(t, &next, dc)
	if err != nil {
		return nil, err
	}
	newCfg, newSt, err := editConfig(o, cfg, old, in.Harness, want)
	if err != nil {
		return nil, err
	}
	res.Diff = unidiff.Diff(cfg, old, newCfg)
	te, err := s.planTrust(t, in.Harness, newSt, cfg, newCfg, false, "")
	if err != nil {
		return nil, err
	}
	if te != nil {
		newSt.Trust, newSt.TrustFileCreated = te.records, te.created
		if te.changed() {
			res.TrustFile, res.TrustDiff = te.file, unidiff.Diff(te.file, te.old, te.new)
		}
		res.Moved = hooktrust.Moved(o, cfg, old, newCfg)
		if stale := staleTrust(newSt); len(stale) > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("dalo's entries of %s now call this dalo's dispatcher, so the trust %s recorded for them no longer holds: run 'dalo plugin install PACKAGE --provider %s --trust' with a package still installed there", strings.Join(stale, ", "), t.Harness, t.Name))
		}
	}
	for _, ip := range gone {
		res.Removed = append(res.Removed, memberPaths(&ip)...)
	}
	if dryRun {
		return res, nil
	}
	res.Removed = nil
	// The entries still in use call this dalo's dispatcher: its copy and
	// the plan of its schema come first, while the entries still call the
	// dispatcher they called (which reads its own schema's plan). With
	// nothing left the entries go first, then the plan.
	remains := len(newSt.Entries) > 0
	if remains {
		if err := s.placeDispatcher(dc); err != nil {
			return nil, err
		}
		if err := s.putPlan(t, &next, "remove:plan-generation"); err != nil {
			return nil, err
		}
		step("remove:plan")
	}
	if old != nil || newCfg != nil {
		if err := writeConfig(cfg, old, newCfg); err != nil {
			return nil, err
		}
	}
	if newCfg == nil && in.Harness.CreatedDir != "" {
		removeEmptyDirs(filepath.Dir(cfg), in.Harness.CreatedDir)
	}
	step("remove:config")
	if err := te.write(); err != nil {
		return nil, err
	}
	next.Harness = newSt
	if remains {
		if err := plan.DropOtherSchemas(s.scopePath("plans"), t.Name); err != nil {
			return nil, err
		}
	} else {
		if err := s.putPlan(t, &next, "remove:plan-generation"); err != nil {
			return nil, err
		}
		step("remove:plan")
	}
	for _, ip := range gone {
		removed, kept := removeOwned(&ip)
		res.Removed = append(res.Removed, removed...)
		res.Kept = append(res.Kept, kept...)
	}
	step("remove:members")
	if err := s.putInstalled(&next); err != nil {
		return nil, err
	}
	step("remove:recorded")
	if err := s.dropEmptyScope(); err != nil {
		return nil, err
	}
	if err := s.gc(); err != nil {
		return nil, err
	}
	return res, nil
}

// removing is what removing pkgs from in leaves: the packages that go
// and the install record after. A package another one still requires
// blocks the removal.
func removing(t *providers.Table, in *Installed, pkgs []string) (gone []InstalledPackage, next Installed, err error) {
	for _, pkg := range pkgs {
		ip := in.Find(pkg)
		if ip == nil {
			return nil, Installed{}, fmt.Errorf("%s is not installed on %s", pkg, t.Name)
		}
		if !slices.ContainsFunc(gone, func(g InstalledPackage) bool { return g.Package == pkg }) {
			gone = append(gone, *ip)
		}
	}
	next = *in
	next.Packages = nil
	for _, ip := range in.Packages {
		if !slices.Contains(pkgs, ip.Package) {
			next.Packages = append(next.Packages, ip)
		}
	}
	// A required package stays while a package that requires it does.
	var held []string
	for _, ip := range next.Packages {
		for _, dep := range ip.Requires {
			if slices.Contains(pkgs, dep) {
				held = append(held, fmt.Sprintf("%s requires %s: remove both with 'dalo plugin remove %s %s --provider %s'", ip.Package, dep, dep, ip.Package, t.Name))
			}
		}
	}
	if len(held) > 0 {
		return nil, Installed{}, &BlockedError{Package: strings.Join(pkgs, ", "), Provider: t.Name, Reasons: held, Verb: "remove"}
	}
	return gone, next, nil
}

// removeConfig is the harness configuration a removal edits: the file
// dalo's entries are in, or the one they would be in.
func removeConfig(t *providers.Table, in *Installed) (string, error) {
	if in.Harness.File != "" {
		return in.Harness.File, nil
	}
	return configFile(t)
}

// gc collects what install and remove leave behind them: staged trees and
// dispatcher copies nothing uses any more.
func (s *Store) gc() error {
	if err := s.gcStaged(); err != nil {
		return err
	}
	return s.gcDispatchers()
}

// staleTrust lists the events whose entry changed since the harness trust
// dalo recorded for it.
func staleTrust(st HarnessState) []string {
	var stale []string
	for _, ev := range slices.Sorted(maps.Keys(st.Entries)) {
		if r, ok := st.Trust[ev]; ok && !reflect.DeepEqual(r.Entry, st.Entries[ev]) {
			stale = append(stale, ev)
		}
	}
	return stale
}

// memberPaths lists where the members dalo wrote for ip are.
func memberPaths(ip *InstalledPackage) []string {
	var out []string
	for _, o := range ip.owned() {
		out = append(out, o.Path)
	}
	return out
}

// changedOwned lists the files dalo wrote for ip that the user changed: a
// file that is gone is not changed. A record naming a path outside its tree
// counts as changed, so that nothing is overwritten or removed on its word.
func changedOwned(ip *InstalledPackage) []string {
	var out []string
	for _, o := range ip.owned() {
		for _, rel := range o.files() {
			p, err := o.file(rel)
			if err != nil {
				out = append(out, err.Error())
				continue
			}
			fd, err := hashFile(p)
			if err == nil && !o.owns(rel, fd.SHA256) || err != nil && !errors.Is(err, fs.ErrNotExist) {
				out = append(out, p+" changed since dalo wrote it")
			}
		}
	}
	return out
}

// intactOwned says whether every file the record o lists is present with
// the digest of Files: what a reinstall may leave as it is.
func intactOwned(o *OwnedTree) bool {
	if len(o.Earlier) > 0 {
		return false // a reinstall was interrupted: some may be old bytes
	}
	for rel, want := range o.Files {
		p, err := o.file(rel)
		if err != nil {
			return false
		}
		fd, err := hashFile(p)
		if err != nil || fd.SHA256 != want {
			return false
		}
	}
	return true
}

// removeOwnedKept removes exactly the files dalo wrote that still have the
// digest dalo wrote, then the directories that became empty; it returns
// what it kept.
func removeOwnedKept(ip *InstalledPackage) []string {
	_, kept := removeOwned(ip)
	return kept
}

// removeOwned is removeOwnedKept that also says what it removed: a skill
// directory or agent file that is gone, or, of a directory it had to keep,
// each file it removed. A kept path says why it was kept.
func removeOwned(ip *InstalledPackage) (removed, kept []string) {
	for _, o := range ip.owned() {
		var dirs, gone []string
		changed := map[string]bool{} // files dalo wrote and kept, by path
		failed := false              // a file dalo wrote could not be removed
		for _, rel := range o.files() {
			p, err := o.file(rel)
			if err != nil {
				kept = append(kept, err.Error())
				failed = true
				continue
			}
			if rel != "" {
				for d := filepath.Dir(p); d != o.Path && strings.HasPrefix(d, o.Path); d = filepath.Dir(d) {
					dirs = append(dirs, d)
				}
			}
			fd, err := hashFile(p)
			switch {
			case errors.Is(err, fs.ErrNotExist):
			case err != nil || !o.owns(rel, fd.SHA256):
				kept = append(kept, p+" (changed since dalo wrote it)")
				changed[p] = true
			default:
				if err := removeFile(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					kept = append(kept, fmt.Sprintf("%s (could not be removed: %v)", p, unwrapPath(err)))
					changed[p] = true
					failed = true
				} else {
					gone = append(gone, p)
				}
			}
		}
		// An agent is one file (its only key is ""); a skill is a directory.
		if !o.agent() {
			sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
			for _, d := range append(dirs, o.Path) {
				if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) && d == o.Path {
					if !failed {
						kept = append(kept, d+" ("+keptDirReason(d, changed)+")")
					}
				}
			}
		}
		if _, err := os.Lstat(o.Path); errors.Is(err, fs.ErrNotExist) {
			removed = append(removed, o.Path)
		} else {
			removed = append(removed, gone...)
		}
		if o.CreatedDir != "" {
			removeEmptyDirs(filepath.Dir(o.Path), o.CreatedDir)
		}
		plan.SyncDir(filepath.Dir(o.Path))
	}
	return removed, kept
}

// keptDirReason says why a skill directory dalo wrote is still there: the
// files dalo wrote that it kept (changed), and those it did not write.
func keptDirReason(dir string, changed map[string]bool) string {
	var theirs []string
	keeps := false
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir || d.IsDir() {
			return nil
		}
		if changed[p] {
			keeps = true
		} else {
			rel, _ := filepath.Rel(dir, p)
			theirs = append(theirs, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(theirs) > 5 {
		theirs = append(theirs[:5], fmt.Sprintf("and %d more", len(theirs)-5))
	}
	switch {
	case len(theirs) > 0 && keeps:
		return "it holds the files kept above and files dalo did not write: " + strings.Join(theirs, ", ")
	case len(theirs) > 0:
		return "it holds files dalo did not write: " + strings.Join(theirs, ", ")
	case keeps:
		return "it holds the files kept above"
	}
	return "it holds directories dalo did not write"
}

// removeFile removes a file dalo wrote; a test replaces it to make a
// removal fail, which permissions cannot do for root.
var removeFile = os.Remove

// removeEmptyDirs removes dir and its parents up to and including top, as
// long as they are empty: dalo created them, and anything the user put in
// them since keeps them.
func removeEmptyDirs(dir, top string) {
	for d := dir; d == top || strings.HasPrefix(d, top+string(filepath.Separator)); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			return
		}
		plan.SyncDir(filepath.Dir(d))
	}
}
