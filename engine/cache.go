package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

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
// another user or group. The manifest's bytes are in it as their sha256,
// which is read again only when the manifest's stat changed
// (manifestDigest).
const packageKeyVersion = "dalo package check 1"

// packageInputs are what the key of a package's check is made of: the
// walk of its directory and its manifest's digest, with, when the digest
// was not kept, the bytes it is of. The check is given those bytes: one
// read gives the key and the answer, which is never kept for bytes it was
// not computed from, however the manifest changes meanwhile.
type packageInputs struct {
	tree     []byte
	sum      [32]byte
	manifest string // its path
	limit    int64
	src      []byte  // the manifest's bytes sum is of; nil when the cache kept sum
	buf      *[]byte // src's buffer, from keyBuffers
}

// readPackageInputs returns the inputs of p's check, or false when the
// package is not one to cache: its manifest or a directory cannot be
// read, or its tree breaks the limits (the check stops early on such a
// tree, and so should the key). The caller releases them.
func readPackageInputs(root string, p *Package, r *Rules, c Cache) (*packageInputs, bool) {
	in := &packageInputs{manifest: filepath.Join(root, filepath.FromSlash(p.File)), limit: int64(r.Limits.ManifestBytes)}
	var st unix.Stat_t
	tree, ok := packageTree(root, p, r, c, &st, nil)
	if !ok {
		return nil, false
	}
	in.tree = tree
	in.buf = keyBuffers.Get().(*[]byte)
	if in.sum, in.src, ok = manifestDigest(in.manifest, &st, in.limit, c, in.buf); !ok {
		in.release()
		return nil, false
	}
	return in, true
}

// packageTree returns what hashTree writes of p's directory, and the
// stat of its manifest in st; with times not nil, the entries' change
// times into it.
func packageTree(root string, p *Package, r *Rules, c Cache, st *unix.Stat_t, times *[]byte) ([]byte, bool) {
	var tree bytes.Buffer
	if !hashTree(&tree, filepath.Join(root, filepath.FromSlash(p.Dir)), &r.Limits, c, path.Base(p.File), st, times) {
		return nil, false
	}
	return tree.Bytes(), true
}

// checkSeam is called with "check" just before a check whose answer may
// be kept, and "checked" just after it: a test changes the package there.
var checkSeam = func(phase, dir string) {}

// key returns the key of the check of the package named name in the
// source sourceID whose inputs these are.
func (in *packageInputs) key(sourceID, name string) []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\nsource %q\npackage %q\nuser %s\nmanifest %x\n", packageKeyVersion, sourceID, name, user(), in.sum)
	h.Write(in.tree)
	return h.Sum(nil)
}

// read reads the manifest's bytes when the digest came from the cache,
// and takes the digest of what it read: the check to run reads no other.
func (in *packageInputs) read() bool {
	if in.src != nil {
		return true
	}
	manifestsRead.Add(1)
	var st unix.Stat_t
	src, ok := readKeyed(in.manifest, in.limit, &st, in.buf)
	if !ok {
		return false
	}
	in.src, in.sum = src, sha256.Sum256(src)
	return true
}

// release returns the buffer of the manifest's bytes, unless a check was
// given them (handed): what it made of them may share their memory.
func (in *packageInputs) release() {
	if in != nil && in.buf != nil {
		keyBuffers.Put(in.buf)
		in.buf, in.src = nil, nil
	}
}

func (in *packageInputs) handed() { in.buf = nil }

// manifestsRead counts the manifests manifestDigest read: a test holds a
// run with every digest cached to none.
var manifestsRead atomic.Int64

// A manifest's digest is kept in the cache with the stat it was read
// with, as a directory's listing is: a write sets the file's modification
// and change times, and a rename gives it another inode, so a manifest
// whose last change was older than listingAge when its read began, and
// whose stat is the same, holds the same bytes: the digest stands for
// them without a read.
const digestKeyVersion = "dalo manifest digest 1"

// manifestDigest returns the sha256 of the regular file name, whose lstat
// is st, of at most limit bytes: kept in c, or read into *buf, and then
// with the bytes read; false when it cannot be read, is not one, or is
// not the file st describes.
func manifestDigest(name string, st *unix.Stat_t, limit int64, c Cache, buf *[]byte) ([32]byte, []byte, bool) {
	var sum [32]byte
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > limit {
		return sum, nil, false
	}
	key := []byte(digestKeyVersion + "\x00" + user() + "\x00" + name)
	if c != nil {
		if data := c.Get(key); data != nil {
			d := newDecoder(data)
			if d.statKey() == statKeyOf(st) && len(d.b) == len(sum) {
				copy(sum[:], d.b)
				return sum, nil, true
			}
		}
	}
	manifestsRead.Add(1)
	began := clock()
	var now unix.Stat_t
	src, ok := readKeyed(name, limit, &now, buf)
	if !ok || statKeyOf(&now) != statKeyOf(st) {
		return sum, nil, false // changed since st
	}
	sum = sha256.Sum256(src)
	if c != nil && settled(st, began) {
		var e encoder
		e.statKey(statKeyOf(st))
		c.Put(key, append(e.b, sum[:]...))
	}
	return sum, src, true
}

// readKeyed reads the regular file name, of at most limit bytes, for a
// key, and its stat into st; false when it cannot or is not one. Unlike
// regular.ReadLimited it takes the file's end to be where fstat put it,
// without a read to see it: a system call fewer for each manifest whose
// digest the cache does not keep. A file that grew meanwhile gives a key
// of what it was, whose next stat differs.
//
// It reads into *buf, which it grows as needed: the manifests of a source
// are read one after the other, and hashed at once.
func readKeyed(name string, limit int64, st *unix.Stat_t, buf *[]byte) ([]byte, bool) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	if unix.Fstat(fd, st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > limit {
		return nil, false
	}
	if *buf == nil || int64(cap(*buf)) < st.Size { // never nil: nil means none read
		*buf = make([]byte, st.Size)
	}
	data := (*buf)[:st.Size]
	for n := 0; n < len(data); {
		m, err := unix.Read(fd, data[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || m == 0 {
			return nil, false // shrank, or cannot be read
		}
		n += m
	}
	afterRead(name)
	return data, true
}

// afterRead is called with a file's name after each read of its bytes
// that an answer kept in the cache depends on: a test changes the file
// there, between the reads of one run.
var afterRead = func(name string) {}

// keyBuffers are readKeyed's buffers, one for each worker at a time.
var keyBuffers = sync.Pool{New: func() any { return new([]byte) }}

// hashTree writes into h the name, type, permissions, size and owner of
// dir and of every entry under it, without following a symlink, names in
// order. It returns false when a directory cannot be read or the tree
// breaks the entry or depth limits. This is most of what a run with every
// answer in the cache does: a stat of each entry, and of each directory
// its names, which c keeps (a listing) while the directory stays as it
// was.
//
// The stat of the entry of dir named known, when it has one, goes into
// knownStat; its mode stays 0 when there is none. When times is not nil,
// each entry's inode and change time are appended to it (changeTimes).
func hashTree(h io.Writer, dir string, lim *Limits, c Cache, known string, knownStat *unix.Stat_t, times *[]byte) bool {
	var st unix.Stat_t
	if unix.Lstat(dir, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false
	}
	t := &treeHash{lim: lim, c: c, buf: appendStat(nil, ".", &st), known: "./" + known, knownStat: knownStat, times: times}
	t.time(&st)
	if !t.walk(dir, ".", &st, 0) {
		return false
	}
	h.Write(t.buf)
	return true
}

// A check reads stats of the entries its key holds (a tool file's
// permissions, the walk of the limits) while it runs, and the key is
// taken before it: a change made during the check and undone before the
// walk that follows it (chmod -x, then +x) would leave the key as it was
// and the answer of the other state under it. The change time of every
// entry, which a chmod, a write or a rename sets and no one can set back,
// is taken by a walk just before the check and one just after it: an
// answer is kept only when none moved. (Two changes within one tick of
// the file system's clock, the first before the walk, are the one case
// this cannot see.) The times are never in a key: a key must stay the
// same across runs, and a checkout rewrites every time.
func appendTimes(b []byte, st *unix.Stat_t) []byte {
	b = binary.AppendUvarint(b, uint64(st.Ino))
	return binary.AppendVarint(b, unix.TimespecToNsec(st.Ctim))
}

func (t *treeHash) time(st *unix.Stat_t) {
	if t.times != nil {
		*t.times = appendTimes(*t.times, st)
	}
}

// A treeHash is one walk of hashTree.
type treeHash struct {
	lim       *Limits
	c         Cache
	buf       []byte
	entries   int
	known     string // "./" and the name of the entry whose stat knownStat gets
	knownStat *unix.Stat_t
	times     *[]byte // when not nil, what appendTimes writes of each entry
}

func (t *treeHash) walk(dir, rel string, st *unix.Stat_t, depth int) bool {
	names, ok := listing(dir, st, t.c)
	if !ok {
		return false
	}
	var est unix.Stat_t
	for _, n := range names {
		if t.entries++; t.entries > t.lim.PackageEntries {
			return false
		}
		path, name := dir+"/"+n, rel+"/"+n
		if unix.Lstat(path, &est) != nil {
			return false
		}
		if name == t.known {
			*t.knownStat = est
		}
		t.buf = appendStat(t.buf, name, &est)
		t.time(&est)
		if est.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		if depth+1 > t.lim.DirectoryDepth {
			return false
		}
		sub := est
		if !t.walk(path, name, &sub, depth+1) {
			return false
		}
	}
	return true
}

// A directory's names change only with its modification and change
// times, which the system sets from a clock of coarse grain (a few
// milliseconds; two seconds on FAT): two changes within one grain leave
// the same times. A listing is kept only of a directory whose last change
// is older than listingAge when its read began, so that any change made
// since gives it other times. Tests move the clock.
const (
	listingKeyVersion = "dalo listing 1"
	listingAge        = 3 * time.Second
)

var clock = time.Now

// dirsRead counts the directories listing read: a test holds a run with
// every listing cached to none.
var dirsRead atomic.Int64

// listing returns the sorted names in dir, whose lstat is st: those c
// keeps for a directory with the same device, inode and modification and
// change times, or else those read, which c then keeps when the directory
// last changed long enough ago. false: dir cannot be read, or is not st.
func listing(dir string, st *unix.Stat_t, c Cache) ([]string, bool) {
	var key []byte
	if c != nil {
		// No path holds a NUL.
		key = []byte(listingKeyVersion + "\x00" + user() + "\x00" + dir)
		if data := c.Get(key); data != nil {
			d := newDecoder(data)
			if d.statKey() == statKeyOf(st) {
				names := make([]string, d.count(d.int()))
				for i := range names {
					names[i] = d.str()
				}
				if !d.bad && len(d.b) == 0 {
					return names, true
				}
			}
		}
	}
	dirsRead.Add(1)
	began := clock()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	var now unix.Stat_t
	if unix.Fstat(fd, &now) != nil || statKeyOf(&now) != statKeyOf(st) {
		return nil, false // changed since st: not the directory asked about
	}
	names, err := dirNames(fd)
	if err != nil {
		return nil, false
	}
	slices.Sort(names)
	if c != nil && settled(st, began) {
		var e encoder
		e.statKey(statKeyOf(st))
		e.int(len(names))
		for _, n := range names {
			e.str(n)
		}
		c.Put(key, e.b)
	}
	return names, true
}

// A statKey is what of a file's stat says that its bytes, or a
// directory's names, are those read when it was the same.
type statKey struct {
	dev, ino           uint64
	size, mtime, ctime int64
}

func statKeyOf(st *unix.Stat_t) statKey {
	return statKey{uint64(st.Dev), uint64(st.Ino), st.Size, unix.TimespecToNsec(st.Mtim), unix.TimespecToNsec(st.Ctim)}
}

// settled reports whether st's file had last changed longer than
// listingAge before began, when a read of it began: what was read may be
// kept under its statKey.
func settled(st *unix.Stat_t, began time.Time) bool {
	old := began.Add(-listingAge).UnixNano()
	return unix.TimespecToNsec(st.Mtim) < old && unix.TimespecToNsec(st.Ctim) < old
}

func (e *encoder) statKey(k statKey) {
	for _, n := range []int64{int64(k.dev), int64(k.ino), k.size, k.mtime, k.ctime} {
		e.b = binary.AppendVarint(e.b, n)
	}
}

func (d *decoder) statKey() statKey {
	var k [5]int64
	for i := range k {
		k[i] = d.int64()
	}
	return statKey{uint64(k[0]), uint64(k[1]), k[2], k[3], k[4]}
}

// appendStat appends to b what a key holds of one entry: its name (length
// first), mode (type and permissions), size and owner.
func appendStat(b []byte, name string, st *unix.Stat_t) []byte {
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	b = binary.AppendUvarint(b, uint64(st.Mode))
	b = binary.AppendVarint(b, st.Size)
	b = binary.AppendUvarint(b, uint64(st.Uid))
	return binary.AppendUvarint(b, uint64(st.Gid))
}

// readHead reads the first bytes of the skill or agent file rel, as many
// as its front matter may take and a few more: what its check reads.
func (v *sourceCheck) readHead(rel string) ([]byte, error) {
	name := filepath.Join(v.root, filepath.FromSlash(rel))
	head, _, err := regular.ReadLimited(name, int64(v.rules.Limits.FrontMatterBytes+8))
	afterRead(name)
	return head, err
}

// instructionsRead counts the instructions whose bytes a check read: a
// test holds a run whose every answer is cached to none.
var instructionsRead atomic.Int64

// An instruction's check (its bytes are text) is kept in the cache with
// the stat of the file it read, as a manifest's digest is (manifestDigest):
// a write sets the file's modification and change times, and a rename
// gives it another inode, so an instruction whose last change was older
// than listingAge when the check began, and whose stat is the same, holds
// the same bytes. Keyed by its content instead, every run would read each
// instruction whole to make its key, which is all its check costs: a vet
// of 1,000 packages of four 10 KB instructions each cost more than
// validating them without a cache.
const instructionKeyVersion = "dalo instruction check 1"

// checkInstruction runs check, which reads the instruction rel and reports
// about it, through the cache: what it found for the file of the same
// stat, or a fresh check whose findings it then keeps, when the file did
// not change while it ran and had settled before.
func (v *sourceCheck) checkInstruction(rel string, check func()) {
	if v.cache == nil {
		instructionsRead.Add(1)
		check()
		return
	}
	name := filepath.Join(v.root, filepath.FromSlash(rel))
	var st unix.Stat_t
	if unix.Lstat(name, &st) != nil {
		instructionsRead.Add(1)
		check()
		return
	}
	key := []byte(instructionKeyVersion + "\x00" + user() + "\x00" + name)
	if data := v.cache.Get(key); data != nil {
		d := newDecoder(data)
		if d.statKey() == statKeyOf(&st) {
			if ds := d.diags(); !d.bad && len(d.b) == 0 {
				v.fileDiags(rel).diags = ds
				return
			}
		}
	}
	instructionsRead.Add(1)
	began := clock()
	checkSeam("check", rel)
	check()
	checkSeam("checked", rel)
	var now unix.Stat_t
	if unix.Lstat(name, &now) != nil || statKeyOf(&now) != statKeyOf(&st) || !settled(&st, began) {
		return
	}
	var e encoder
	e.statKey(statKeyOf(&st))
	e.diags(v.fileDiags(rel).diags)
	v.cache.Put(key, e.b)
}

// user is who the process is, as permissions read it: its effective user
// and group and its other groups.
var user = sync.OnceValue(func() string {
	groups, _ := os.Getgroups()
	return fmt.Sprint(os.Geteuid(), os.Getegid(), groups)
})

// A package's entry in the cache is what its check leaves for the
// source-wide checks and the report: its diagnostics, the positions of
// sourceFields, the manifest reduced to what those read (reportView) and,
// when the manifest's shape failed, its references (else they are the
// manifest's). It is written in a compact form of its own (codec): decoding
// JSON was a fifth of a run with every answer in the cache.
const entryVersion = 2

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
			Bindings: fieldsOnly(h.Bindings),
		})
	}
	return v
}

// fieldsOnly is bs with only the fields they read: what a provider table
// is asked about (Table.UnboundFields).
func fieldsOnly(bs []Binding) []Binding {
	var out []Binding
	for _, b := range bs {
		out = append(out, Binding{Field: b.Field})
	}
	return out
}

func (p *Package) entry() []byte {
	var e encoder
	e.int(entryVersion)
	e.diags(p.diags.diags)
	e.int(len(p.pos) - boolInt(p.pos == nil))
	for _, f := range slices.Sorted(maps.Keys(p.pos)) {
		e.str(f)
		e.int(p.pos[f].Line)
		e.int(p.pos[f].Column)
	}
	switch {
	case p.Manifest != nil:
		e.int(1)
		e.manifest(reportView(p.Manifest))
	case p.refs != nil:
		e.int(2)
		e.int(len(p.refs.members))
		for _, mb := range p.refs.members {
			e.int(mb.n)
			e.member(mb.Member)
		}
		e.int(len(p.refs.requires))
		for _, rq := range p.refs.requires {
			e.int(rq.n)
			e.str(rq.Ref)
			e.str(rq.Requirement)
		}
		e.int(boolInt(p.refs.partialMembers))
	default:
		e.int(0)
	}
	return e.b
}

// restore sets p to the check the cache held; false leaves p as it was.
func (p *Package) restore(data []byte) bool {
	d := newDecoder(data)
	if d.int() != entryVersion {
		return false
	}
	diags := d.diags()
	var pos map[string]Pos
	if n := d.int(); n >= 0 {
		pos = make(map[string]Pos, min(n, len(d.b)))
		for range d.count(n) {
			f := d.str()
			pos[f] = Pos{d.int(), d.int()}
		}
	}
	var m *Manifest
	var refs *refList
	switch d.int() {
	case 1:
		m = d.manifest()
		refs = manifestRefs(m)
	case 2:
		refs = &refList{}
		for range d.count(d.int()) {
			refs.members = append(refs.members, memberAt{d.int(), d.member()})
		}
		for range d.count(d.int()) {
			refs.requires = append(refs.requires, requireAt{d.int(), Require{Ref: d.str(), Requirement: d.str()}})
		}
		refs.partialMembers = d.int() == 1
	}
	if d.bad || len(d.b) != 0 {
		return false
	}
	p.diags.diags, p.pos, p.Manifest, p.refs = diags, pos, m, refs
	return true
}

type encoder struct{ b []byte }

func (e *encoder) int(n int)    { e.b = binary.AppendVarint(e.b, int64(n)) }
func (e *encoder) str(s string) { e.int(len(s)); e.b = append(e.b, s...) }

func (e *encoder) diags(ds []Diagnostic) {
	e.int(len(ds))
	for _, x := range ds {
		e.str(string(x.Severity))
		e.str(x.Code)
		e.str(x.Message)
		e.str(x.File)
		e.int(x.Line)
		e.int(x.Column)
		e.str(x.Field)
	}
}

func (e *encoder) member(mb Member) {
	e.str(mb.Ref)
	e.str(mb.Requirement)
	e.int(boolInt(mb.Fallback != nil))
	if mb.Fallback != nil {
		e.str(mb.Fallback.Kind)
		e.str(mb.Fallback.Skill)
	}
}

func (e *encoder) manifest(m *Manifest) {
	e.int(m.SchemaVersion)
	e.str(m.Plugin.Name)
	e.str(m.Plugin.ID)
	e.int(len(m.Plugin.Members))
	for _, mb := range m.Plugin.Members {
		e.member(mb)
	}
	e.int(len(m.Plugin.Requires))
	for _, rq := range m.Plugin.Requires {
		e.str(rq.Ref)
		e.str(rq.Requirement)
	}
	e.int(len(m.Tools))
	for _, t := range m.Tools {
		e.str(t.ID)
		e.str(t.Runtime)
		e.str(t.Entry)
		e.str(t.Availability)
	}
	e.int(len(m.Hooks))
	for _, h := range m.Hooks {
		for _, s := range []string{h.ID, h.Tool, h.Subject, h.Phase, h.Effect, h.Requirement, h.Fallback, h.FailurePolicy, h.ErrorVisibility} {
			e.str(s)
		}
		e.int(h.TimeoutMS)
		switch {
		case h.Matcher == nil:
			e.int(-1)
		case h.Matcher.ToolNames == nil:
			e.int(-2)
		default:
			e.int(len(h.Matcher.ToolNames))
			for _, n := range h.Matcher.ToolNames {
				e.str(n)
			}
		}
		e.int(len(h.Bindings))
		for _, b := range h.Bindings {
			e.str(b.Field)
		}
	}
}

// A decoder reads what an encoder wrote; bad says it could not, and then
// everything it returns is to be dropped. It reads a string, of which the
// strings it returns are parts: one copy of an entry, not one for each
// string in it (restoring 1,000 packages made some 50,000).
type decoder struct {
	b   string
	bad bool
}

func newDecoder(data []byte) decoder { return decoder{b: string(data)} }

// int reads a varint, as binary.Varint does.
func (d *decoder) int() int { return int(d.int64()) }

func (d *decoder) int64() int64 {
	var ux uint64
	for i := 0; i < len(d.b) && i < binary.MaxVarintLen64; i++ {
		c := d.b[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break // overflow
			}
			ux |= uint64(c) << (7 * i)
			d.b = d.b[i+1:]
			x := int64(ux >> 1)
			if ux&1 != 0 {
				x = ^x
			}
			return x
		}
		ux |= uint64(c&0x7f) << (7 * i)
	}
	d.bad, d.b = true, ""
	return 0
}

func (d *decoder) str() string {
	n := d.int()
	if n < 0 || n > len(d.b) {
		d.bad, d.b = true, ""
		return ""
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

// count returns n as a number of elements still to read, each of which
// takes a byte at least; 0 when it cannot be.
func (d *decoder) count(n int) int {
	if n < 0 || n > len(d.b) {
		d.bad, d.b = true, ""
		return 0
	}
	return n
}

func (d *decoder) diags() []Diagnostic {
	var ds []Diagnostic
	for range d.count(d.int()) {
		ds = append(ds, Diagnostic{Severity: Severity(d.str()), Code: d.str(), Message: d.str(), File: d.str(), Line: d.int(), Column: d.int(), Field: d.str()})
	}
	return ds
}

func (d *decoder) member() Member {
	mb := Member{Ref: d.str(), Requirement: d.str()}
	if d.int() == 1 {
		mb.Fallback = &Fallback{Kind: d.str(), Skill: d.str()}
	}
	return mb
}

func (d *decoder) manifest() *Manifest {
	m := &Manifest{SchemaVersion: d.int()}
	m.Plugin.Name, m.Plugin.ID = d.str(), d.str()
	m.Plugin.Members = sized[Member](d)
	for i := range m.Plugin.Members {
		m.Plugin.Members[i] = d.member()
	}
	m.Plugin.Requires = sized[Require](d)
	for i := range m.Plugin.Requires {
		m.Plugin.Requires[i] = Require{Ref: d.str(), Requirement: d.str()}
	}
	m.Tools = sized[Tool](d)
	for i := range m.Tools {
		m.Tools[i] = Tool{ID: d.str(), Runtime: d.str(), Entry: d.str(), Availability: d.str()}
	}
	m.Hooks = sized[Hook](d)
	for i := range m.Hooks {
		h := &m.Hooks[i]
		*h = Hook{ID: d.str(), Tool: d.str(), Subject: d.str(), Phase: d.str(), Effect: d.str(), Requirement: d.str(), Fallback: d.str(), FailurePolicy: d.str(), ErrorVisibility: d.str(), TimeoutMS: d.int()}
		switch n := d.int(); {
		case n == -2:
			h.Matcher = &Matcher{}
		case n >= 0:
			h.Matcher = &Matcher{ToolNames: make([]string, d.count(n))}
			for j := range h.Matcher.ToolNames {
				h.Matcher.ToolNames[j] = d.str()
			}
		}
		h.Bindings = sized[Binding](d)
		for j := range h.Bindings {
			h.Bindings[j] = Binding{Field: d.str()}
		}
	}
	return m
}

// sized reads a count and returns a slice of that many elements to fill,
// nil for none, as appending to a nil slice leaves it.
func sized[T any](d *decoder) []T {
	if n := d.count(d.int()); n > 0 {
		return make([]T, n)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkCached is checkPackage through cache c: an answer the cache holds
// for exactly these inputs, or a fresh check it then keeps. The check is
// of the manifest's bytes the key was made of (packageInputs); the walk
// of the package's directory is made before and after it, and a package
// whose tree changed meanwhile is not kept: its answer may be of neither.
// The check runs with r, which the workers share, and own(), the rules of
// the worker, for what r's fast path does not prove.
func checkCached(root, sourceID string, p *Package, r *Rules, own func() *Rules, c *cacheRun) {
	if c == nil {
		checkPackage(root, sourceID, p, r, own, nil)
		return
	}
	in, ok := readPackageInputs(root, p, r, c.stats())
	defer in.release()
	if ok {
		if data := c.Get(in.key(sourceID, p.Name)); data != nil && p.restore(data) {
			return
		}
	}
	c.checking()
	if !ok || !in.read() {
		checkPackage(root, sourceID, p, r, own, nil)
		return
	}
	in.handed()
	// The walk before the check must find the tree of the key, and the
	// one after it the same tree with the same change times.
	var st unix.Stat_t
	var before, after []byte
	tree, ok := packageTree(root, p, r, c.stats(), &st, &before)
	checkSeam("check", p.Dir)
	checkPackage(root, sourceID, p, r, own, in.src)
	checkSeam("checked", p.Dir)
	if !ok || !bytes.Equal(tree, in.tree) {
		return
	}
	if tree, ok := packageTree(root, p, r, c.stats(), &st, &after); !ok || !bytes.Equal(tree, in.tree) || !bytes.Equal(after, before) {
		return
	}
	c.Put(in.key(sourceID, p.Name), p.entry())
}

// A cacheRun is a Cache as one validation uses it: beside the answers of
// package and instruction checks, those of the rules (ruleMemo), read
// once a check must run and kept when it ran.
type cacheRun struct {
	Cache
	once   sync.Once
	loaded bool
	local  bool // the source is on a local file system (localFS)
}

// newCacheRun returns c for one validation of the source at root; nil
// when c is.
func newCacheRun(c Cache, root string) *cacheRun {
	if c == nil {
		return nil
	}
	return &cacheRun{Cache: c, local: trustStats(root)}
}

// trustStats is localFS; tests that keep listings and digests on any file
// system replace it.
var trustStats = localFS

// stats returns the cache that keeps what a stat stands for (directory
// listings, manifest digests), nil on a file system whose stats dalo does
// not trust.
func (r *cacheRun) stats() Cache {
	if !r.local {
		return nil
	}
	return r.Cache
}

// checking is called before a check the cache does not answer for.
func (r *cacheRun) checking() {
	r.once.Do(func() {
		sharedMemo.loadFrom(r.Cache)
		r.loaded = true
	})
}

// done keeps the rules' answers, when a check ran and asked new ones; the
// validation's checks have all returned.
func (r *cacheRun) done() {
	if r != nil && r.loaded {
		sharedMemo.saveTo(r.Cache)
	}
}
