package store

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"dalo/engine"
	"dalo/plan"
)

// A member grant (docs/design.md §7) approves the exact bytes install
// writes of a skill or an agent where the harness reads them: the harness
// runs what they say with no dispatcher in between, so the bytes are what
// the user trusts. Install writes a member only with such a grant.

// MemberKey is how a command names a member of a package: KIND:NAME, such
// as skill:review-notes (the reference without its source).
func MemberKey(ref string) string {
	r := engine.ParseRef(ref)
	return r.Kind + ":" + r.Selector
}

// grantable says whether install would write a's member somewhere, now or
// once what blocks it is gone: a member with a grant subject.
func (a *MemberAction) grantable() bool { return a.Src != "" && a.Dest != "" }

// MemberBinds is what a grant of the member a of the selected package
// covers now: every file install would copy, digested.
func (sel *Selection) MemberBinds(a *MemberAction) (*plan.MemberBinds, error) {
	r := engine.ParseRef(a.Ref)
	files, err := listFiles(a.Src, a.Dir, &sel.Loaded.Limits)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.Ref, err)
	}
	return &plan.MemberBinds{
		Package: sel.Identity, Provider: sel.Table.Name, Kind: r.Kind, Member: r.Selector,
		Ref: a.Ref, Files: files,
	}, nil
}

// MemberStates is the state of the grant of every member of the selected
// package that install would write on sel.Table (acts are
// [Store.MemberActions] there), by [MemberKey]. pending counts as the
// ledger, as for GrantStates.
func (s *Store) MemberStates(sel *Selection, acts []MemberAction, pending map[string]*plan.Grant) (map[string]GrantState, error) {
	out := map[string]GrantState{}
	for i := range acts {
		a := &acts[i]
		if !a.grantable() {
			continue
		}
		b, err := sel.MemberBinds(a)
		if err != nil {
			return nil, err
		}
		st := s.grantState(plan.GrantID(sel.Table.Name, sel.Identity, b.Kind, b.Member), pending)
		st.Member = b
		if st.Digest, err = plan.Digest(b); err != nil {
			return nil, fmt.Errorf("%s: %w", a.Ref, err)
		}
		out[MemberKey(a.Ref)] = st.decide()
	}
	return out, nil
}

// memberWhy says what of a member changed since its grant old: which
// files; "" when there is no grant or nothing changed.
func memberWhy(old *plan.Grant, now *plan.MemberBinds) string {
	if old == nil {
		return ""
	}
	v, err := old.Decode()
	if err != nil {
		return "its grant cannot be read"
	}
	was, _ := v.(*plan.MemberBinds)
	if was == nil {
		return "its grant is of another kind"
	}
	if files := changedFiles(was.Files, now.Files); len(files) > 0 {
		return "files changed: " + strings.Join(files, ", ")
	}
	if c := changedBinds(was, now); len(c) > 0 && c[0] != "binds" {
		return strings.Join(c, ", ") + " changed"
	}
	return ""
}

// memberFlags is the approve flags naming keys, sorted: --member K each.
func memberFlags(keys []string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(slices.Values(keys)) {
		b.WriteString(" --member " + k)
	}
	return b.String()
}

// A Withdrawn is a member revoke took away from where the harness reads
// it: its bytes, as they were (a change since install included), now in
// the store.
type Withdrawn struct {
	Provider, Package, Ref string
	From, To               string
}

// withdrawMembers takes every installed member of grants gs away from
// where its harness reads it, under the lock the caller holds: the skill
// directory or agent file moves whole into the store's revoked directory,
// so that nothing of it is left where the harness runs it and nothing the
// user changed in it is lost, and the install record forgets it. The move
// comes first: a crash before the record is written leaves a record naming
// a member that is gone, which doctor, install and remove read as missing.
func (s *Store) withdrawMembers(gs []*plan.Grant) ([]Withdrawn, error) {
	byProvider := map[string][]*plan.Grant{}
	for _, g := range gs {
		if plan.IsMemberKind(g.Kind) {
			byProvider[g.Provider] = append(byProvider[g.Provider], g)
		}
	}
	var out []Withdrawn
	for _, provider := range slices.Sorted(maps.Keys(byProvider)) {
		in, err := s.Installed(provider)
		if err != nil {
			return out, err
		}
		changed := false
		for _, g := range byProvider[provider] {
			i := in.find(g.Package)
			if i < 0 {
				continue
			}
			ip := &in.Packages[i]
			take := func(trees []OwnedTree) ([]OwnedTree, error) {
				var keep []OwnedTree
				for _, o := range trees {
					if MemberKey(o.Ref) != g.Kind+":"+g.Item {
						keep = append(keep, o)
						continue
					}
					w, err := s.withdraw(provider, g, o)
					if err != nil {
						return nil, err
					}
					if w != nil {
						out = append(out, *w)
					}
					changed = true
				}
				if keep == nil {
					keep = []OwnedTree{}
				}
				return keep, nil
			}
			if ip.Skills, err = take(ip.Skills); err != nil {
				return out, err
			}
			if ip.Agents, err = take(ip.Agents); err != nil {
				return out, err
			}
		}
		if changed {
			if err := s.putInstalled(in); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// withdraw moves o, installed under grant g on provider, into
// revoked/<time>-<grant file name>/ of the store; nil when it is gone.
func (s *Store) withdraw(provider string, g *plan.Grant, o OwnedTree) (*Withdrawn, error) {
	if _, err := os.Lstat(o.Path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	dir := s.path("revoked", time.Now().UTC().Format("20060102T150405.000000000Z")+"-"+strings.TrimSuffix(plan.GrantFile(g.ID), ".json"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("revoking %s: %w", g.ID, err)
	}
	to := filepath.Join(dir, filepath.Base(o.Path))
	if err := moveTree(o.Path, to); err != nil {
		return nil, fmt.Errorf("revoking %s: taking %s away: %w", g.ID, o.Path, err)
	}
	plan.SyncDir(dir)
	plan.SyncDir(filepath.Dir(o.Path))
	if o.CreatedDir != "" {
		removeEmptyDirs(filepath.Dir(o.Path), o.CreatedDir)
	}
	return &Withdrawn{Provider: provider, Package: g.Package, Ref: o.Ref, From: o.Path, To: to}, nil
}

// renameTree is os.Rename; a test makes it fail as across file systems.
var renameTree = os.Rename

// moveTree renames from to to; across file systems it copies the tree
// (files, directories and symbolic links, modes kept), syncs it, then
// removes from.
func moveTree(from, to string) error {
	err := renameTree(from, to)
	if err == nil || !errors.Is(err, syscall.EXDEV) {
		return err
	}
	err = filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return writeFile(dst, data, info.Mode().Perm())
		}
		return nil // a FIFO or device: nothing to keep
	})
	if err != nil {
		return err
	}
	return os.RemoveAll(from)
}
