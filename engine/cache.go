package engine

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"dalo/internal/regular"
)

// A Cache keeps the answers of package checks between runs
// (Options.Cache): dalo's is internal/cache, on disk. Get returns nil on
// a miss; Put may drop what it is given. Only validate and vet use one:
// review, approve and install decide on trust and always check afresh.
type Cache interface {
	Get(key []byte) []byte
	Put(key, data []byte)
}

// A package check reads the manifest's bytes and, of the package
// directory, every entry's name, type, permissions and size (the walk of
// the limits, the tool files' checks), and nothing else of the machine;
// with the source id, the package's name and dalo's own rules and code
// (the cache's build identity) that is all its answer depends on. The key
// holds exactly that, and who asks: permissions mean something else to
// another user or group.
const packageKeyVersion = "dalo package check 1"

// packageKey returns the key of p's check, or false when the package is
// not one to cache: its manifest or a directory cannot be read, or its
// tree breaks the limits (the check stops early on such a tree, and so
// should the key).
func packageKey(root, sourceID string, p *Package, r *Rules) ([]byte, bool) {
	src, tooBig, err := regular.ReadLimited(filepath.Join(root, filepath.FromSlash(p.File)), int64(r.Limits.ManifestBytes))
	if err != nil || tooBig {
		return nil, false
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\nsource %q\npackage %q\nuser %s\nmanifest %x\n", packageKeyVersion, sourceID, p.Name, user(), sha256.Sum256(src))
	if !hashTree(h, filepath.Join(root, filepath.FromSlash(p.Dir)), &r.Limits) {
		return nil, false
	}
	return h.Sum(nil), true
}

// hashTree writes into h the name, type, permissions, size and owner of
// dir and of every entry under it, as walkTree reaches them (no symlink
// followed), in the order it does. It returns false when a directory
// cannot be read or the tree breaks the entry or depth limits.
func hashTree(h io.Writer, dir string, lim *Limits) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	writeEntry(h, ".", fi)
	entries := 0
	var walk func(dir, rel string, depth int) bool
	walk = func(dir, rel string, depth int) bool {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return false
		}
		for _, e := range ents {
			if entries++; entries > lim.PackageEntries {
				return false
			}
			fi, err := e.Info()
			if err != nil {
				return false
			}
			name := rel + "/" + e.Name()
			writeEntry(h, name, fi)
			if fi.IsDir() && (depth+1 > lim.DirectoryDepth || !walk(filepath.Join(dir, e.Name()), name, depth+1)) {
				return false
			}
		}
		return true
	}
	return walk(dir, ".", 0)
}

// The check of a skill or an agent a reference resolves to reads, beside
// the rules, its file's first bytes, up to the front matter limit (the
// front matter), the file's type, permissions and size, and of a skill,
// every entry of its directory (the walk of the limits).
const assetKeyVersion = "dalo asset check 1"

// assetKey returns the key of the check of the skill or agent name whose
// file is rel, which lstat described as fi; false when it is not one to
// cache.
func (v *sourceCheck) assetKey(kind, name, rel string, fi fs.FileInfo) ([]byte, bool) {
	head, _, err := regular.ReadLimited(filepath.Join(v.root, filepath.FromSlash(rel)), int64(v.rules.Limits.FrontMatterBytes+8))
	if err != nil {
		return nil, false
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\nkind %s\nname %q\nuser %s\nhead %x\n", assetKeyVersion, kind, name, user(), sha256.Sum256(head))
	writeEntry(h, rel, fi)
	if kind == "skill" && !hashTree(h, filepath.Join(v.root, filepath.FromSlash(v.rules.Layout.Dir("skill", name))), &v.rules.Limits) {
		return nil, false
	}
	return h.Sum(nil), true
}

// checkAsset runs check, which reports about the file rel, through the
// cache: the diagnostics it gave for the same inputs, or a fresh check
// whose diagnostics it then keeps.
func (v *sourceCheck) checkAsset(kind, name, rel string, fi fs.FileInfo, check func()) {
	if v.cache == nil {
		check()
		return
	}
	key, ok := v.assetKey(kind, name, rel, fi)
	if ok {
		var ds []Diagnostic
		if data := v.cache.Get(key); data != nil && json.Unmarshal(data, &ds) == nil {
			v.fileDiags(rel).diags = ds
			return
		}
	}
	check()
	if !ok {
		return
	}
	if after, ok := v.assetKey(kind, name, rel, fi); !ok || string(after) != string(key) {
		return
	}
	if data, err := json.Marshal(v.fileDiags(rel).diags); err == nil {
		v.cache.Put(key, data)
	}
}

// user is who the process is, as permissions read it: its effective user
// and group and its other groups.
var user = sync.OnceValue(func() string {
	groups, _ := os.Getgroups()
	return fmt.Sprint(os.Geteuid(), os.Getegid(), groups)
})

func writeEntry(h io.Writer, name string, fi fs.FileInfo) {
	uid, gid := -1, -1
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		uid, gid = int(st.Uid), int(st.Gid)
	}
	fmt.Fprintf(h, "%q %v %d %d %d\n", name, fi.Mode(), fi.Size(), uid, gid)
}

// A packageEntry is what a package check leaves for the source-wide
// checks and the report, as the cache holds it: the manifest reduced to
// what those read (reportView), the package's diagnostics, its references
// when the manifest's shape failed (else they are the manifest's), and the
// positions of sourceFields, as [line, column].
type packageEntry struct {
	Manifest *Manifest        `json:"m,omitempty"`
	Diags    []Diagnostic     `json:"d,omitempty"`
	Refs     *refListEntry    `json:"r,omitempty"`
	Pos      map[string][]int `json:"p,omitempty"`
}

type refListEntry struct {
	Members  []memberEntry  `json:"m"`
	Requires []requireEntry `json:"r"`
	Partial  bool           `json:"p"`
}

type memberEntry struct {
	N int `json:"n"`
	Member
}

type requireEntry struct {
	N int `json:"n"`
	Require
}

// reportView is m with only what validation reads of it once the
// package's own checks are done: the id (uniqueIDs), the references
// (manifestRefs), what the report lists of each tool and hook and what a
// provider table is asked about a hook (ProviderCapabilities). This is
// why only Validate takes a cache: Load returns manifests whole, for
// review, approval and installation.
func reportView(m *Manifest) *Manifest {
	v := &Manifest{SchemaVersion: m.SchemaVersion, Plugin: Plugin{
		Name: m.Plugin.Name, ID: m.Plugin.ID, Members: m.Plugin.Members, Requires: m.Plugin.Requires,
	}}
	for _, t := range m.Tools {
		v.Tools = append(v.Tools, Tool{ID: t.ID, Runtime: t.Runtime, Entry: t.Entry, Availability: t.Availability})
	}
	for _, h := range m.Hooks {
		v.Hooks = append(v.Hooks, Hook{
			ID: h.ID, Tool: h.Tool, Subject: h.Subject, Phase: h.Phase, Effect: h.Effect,
			Requirement: h.Requirement, Fallback: h.Fallback, TimeoutMS: h.TimeoutMS,
			FailurePolicy: h.FailurePolicy, ErrorVisibility: h.ErrorVisibility, Matcher: h.Matcher,
		})
	}
	return v
}

func (p *Package) entry() ([]byte, error) {
	e := packageEntry{Diags: p.diags.diags}
	if p.pos != nil {
		e.Pos = make(map[string][]int, len(p.pos))
		for f, pos := range p.pos {
			e.Pos[f] = []int{pos.Line, pos.Column}
		}
	}
	if p.Manifest != nil {
		e.Manifest = reportView(p.Manifest)
	} else if rl := p.refs; rl != nil {
		e.Refs = &refListEntry{Partial: rl.partialMembers}
		for _, mb := range rl.members {
			e.Refs.Members = append(e.Refs.Members, memberEntry{mb.n, mb.Member})
		}
		for _, rq := range rl.requires {
			e.Refs.Requires = append(e.Refs.Requires, requireEntry{rq.n, rq.Require})
		}
	}
	return json.Marshal(e)
}

// restore sets p to the check the cache held; false leaves p as it was.
func (p *Package) restore(data []byte) bool {
	var e packageEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return false
	}
	p.pos = nil
	if e.Pos != nil {
		p.pos = make(map[string]Pos, len(e.Pos))
		for f, lc := range e.Pos {
			if len(lc) != 2 {
				return false
			}
			p.pos[f] = Pos{lc[0], lc[1]}
		}
	}
	p.Manifest = e.Manifest
	p.diags.diags = e.Diags
	p.refs = nil
	switch {
	case e.Manifest != nil:
		p.refs = manifestRefs(e.Manifest)
	case e.Refs != nil:
		p.refs = &refList{partialMembers: e.Refs.Partial}
		for _, mb := range e.Refs.Members {
			p.refs.members = append(p.refs.members, memberAt{mb.N, mb.Member})
		}
		for _, rq := range e.Refs.Requires {
			p.refs.requires = append(p.refs.requires, requireAt{rq.N, rq.Require})
		}
	}
	return true
}

// checkCached is checkPackage through cache c: an answer the cache holds
// for exactly these inputs, or a fresh check it then keeps. The key is
// made before and after the check, and a package that changed meanwhile
// is not kept: its answer may be of neither.
// The key needs only r's limits; the check runs with own(), the rules of
// the worker.
func checkCached(root, sourceID string, p *Package, r *Rules, own func() *Rules, c Cache) {
	if c == nil {
		checkPackage(root, sourceID, p, own())
		return
	}
	key, ok := packageKey(root, sourceID, p, r)
	if ok {
		if data := c.Get(key); data != nil && p.restore(data) {
			return
		}
	}
	checkPackage(root, sourceID, p, own())
	if !ok {
		return
	}
	if after, ok := packageKey(root, sourceID, p, r); !ok || string(after) != string(key) {
		return
	}
	if data, err := p.entry(); err == nil {
		c.Put(key, data)
	}
}
