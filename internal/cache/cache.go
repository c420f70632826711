// Package cache keeps answers between runs of dalo in files under the
// user's cache directory ($XDG_CACHE_HOME/dalo, or ~/.cache/dalo): what
// 'dalo plugin validate' and 'dalo vet' found about a package whose inputs
// have not changed since.
//
// A cache only ever saves work. Its answers are kept under keys the caller
// makes of everything an answer depends on, in one file per source (its
// path) and dalo build, read whole when it is opened: one read instead of
// one per package. Closing it appends this run's new answers to the file,
// or, once the bytes of answers this run did not use outweigh those it
// used or put, writes the file anew with the used ones alone. Each answer
// carries its own sha256: a file cut short or damaged reads as the answers
// before the damage (and is written anew), a write that fails is dropped,
// so the directory can be deleted at any moment and a run with or without
// it answers the same. The directories are made mode 0700 and the files
// 0600: an answer names files of the user's sources, and whoever can write
// them can make dalo say a package is valid. A cache directory another
// user owns, or one its group or others may write, is not used (Dir).
// Files are removed, least recently used first, when the cache grows past
// its cap.
package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"dalo/internal/regular"
)

// DefaultCap is the size cap of a cache: past it, the files used least
// recently are removed until it holds three quarters of it. The answers
// about a typical package take about 1.5 KB: 10,000 packages take 15 MB.
const DefaultCap = 256 << 20

// maxFile bounds what a read takes: the answers about one source.
const maxFile = 1 << 30

// magic opens every file; records follow, each a key and its data, both
// preceded by their lengths (uvarints), then the sha256 of all of it: a
// damaged record is not taken for an answer by the chance a CRC leaves
// (one in 2^32). A file of an older format reads as empty.
const magic = "dalo cache 4\n"

// How often a file read again has its time renewed, and how often the
// cache is trimmed even when this process wrote little to it.
const (
	touchEvery = time.Hour
	trimEvery  = time.Hour
)

// A Cache is the answers kept about one source. Its methods are safe for
// concurrent use; none of them fails.
type Cache struct {
	dir  string // .../dalo/<kind>
	file string // dir/<2 hex>/<62 hex>
	cap  int64

	mu    sync.Mutex
	index map[string]int // key → its answer in old, as the file holds it
	old   []answer
	size  int64             // the file's bytes as read: what an append adds to
	whole bool              // the file was read to its end without damage
	put   map[string][]byte // put in this run
}

// An answer is one the file held when the cache was opened.
type answer struct {
	data []byte
	size int  // of its record
	used bool // asked for in this run: a rewrite keeps it
}

// Dir returns the cache directory of dalo, $XDG_CACHE_HOME/dalo when
// XDG_CACHE_HOME is an absolute path, else ~/.cache/dalo, and makes it
// when it is missing, with the directories above it that are, mode 0700,
// as the XDG Base Directory spec asks; a cache makes no home.
//
// Whoever can write the cache can make validation say a package is
// valid, so the directory must be the user's and writable by no one else,
// and the one it is in the user's or root's, writable by others only with
// the sticky bit (as /tmp is), so that no one else can put another in its
// place. Else Dir returns an *UnsafeError and the cache is not used.
func Dir() (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("no home directory %s for a cache", home)
		}
		base = filepath.Join(home, ".cache")
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	if err := checkDir(base, true); err != nil {
		return "", err
	}
	dir := filepath.Join(base, "dalo")
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	if err := checkDir(dir, false); err != nil {
		return "", err
	}
	return dir, nil
}

// An UnsafeError is a cache directory that others could write (Dir).
type UnsafeError struct {
	Path string
	Why  string // "belongs to user 1001", ...
}

// Error says which directory is unsafe and why.
func (e *UnsafeError) Error() string { return e.Path + " " + e.Why }

// checkDir checks that dir is a directory of this user, writable by no
// one else; of root too when parent, and then writable by others with
// the sticky bit.
func checkDir(dir string, parent bool) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &UnsafeError{dir, "is not a directory"}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &UnsafeError{dir, "has no owner to check"}
	}
	if uid := os.Geteuid(); int(st.Uid) != uid && !(parent && st.Uid == 0) {
		return &UnsafeError{dir, fmt.Sprintf("belongs to user %d, not to this one (%d)", st.Uid, uid)}
	}
	if fi.Mode().Perm()&0o022 != 0 && !(parent && fi.Mode()&fs.ModeSticky != 0) {
		return &UnsafeError{dir, fmt.Sprintf("is writable by its group or others (mode %04o)", fi.Mode().Perm())}
	}
	return nil
}

// ours reports whether fi, of a file in the cache, is this user's and
// writable by no one else: the answers of any other are not read.
func ours(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid() && fi.Mode().Perm()&0o022 == 0
}

// Open returns the answers of kind (a word, such as "validate") kept
// under dir about the source whose identity is source (its absolute path
// and id), as the dalo build identified by build wrote them.
func Open(dir, kind, build, source string) *Cache {
	h := sha256.New()
	for _, s := range []string{kind, build, source} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	sum := hex.EncodeToString(h.Sum(nil))
	c := &Cache{dir: filepath.Join(dir, kind), cap: DefaultCap, index: map[string]int{}, put: map[string][]byte{}}
	c.file = filepath.Join(c.dir, sum[:2], sum[2:])
	c.read()
	return c
}

// SetCap sets the size cap in bytes (tests use a small one).
func (c *Cache) SetCap(n int64) { c.cap = n }

func (c *Cache) read() {
	f, fi, err := regular.Open(c.file)
	if err != nil {
		return
	}
	defer f.Close()
	if fi.Size() > maxFile || !ours(fi) {
		return
	}
	buf := make([]byte, fi.Size()+1)
	n := 0
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err != nil {
			break
		}
	}
	c.decode(buf[:n])
	if now := time.Now(); now.Sub(fi.ModTime()) > touchEvery {
		// Used again: the trim keeps it over files not used for longer.
		os.Chtimes(c.file, now, now)
	}
}

// Get returns the data put under key, or nil.
func (c *Cache) Get(key []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.index[string(key)]
	if !ok {
		return nil
	}
	c.old[i].used = true
	return c.old[i].data
}

// Put stores data under key, to be written when the cache is closed.
func (c *Cache) Put(key, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put[string(key)] = slices.Clone(data)
}

// Close writes the answers put in this run, when there are any, and trims
// the cache when that is due: once an hour, or when this file is over a
// sixteenth of the cap. They are appended to the file, unless it was
// damaged or missing or the bytes of the answers this run did not ask for
// (and of answers replaced) outweigh those of the answers it asked for or
// put: then it is written anew with the answers used or put in this run. An error is dropped: the next run
// computes the answers again.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.put) == 0 {
		return
	}
	var fresh []byte
	for _, k := range slices.Sorted(maps.Keys(c.put)) {
		fresh = appendRecord(fresh, k, c.put[k])
	}
	live := int64(len(fresh))
	for k, i := range c.index {
		if _, ok := c.put[k]; !ok && c.old[i].used {
			live += int64(c.old[i].size)
		}
	}
	size := c.size + int64(len(fresh))
	stale := c.size - int64(len(magic)) - (live - int64(len(fresh)))
	if !c.whole || stale > live || c.append(fresh) != nil {
		data := []byte(magic)
		for _, k := range slices.Sorted(maps.Keys(c.index)) {
			if a := c.old[c.index[k]]; a.used && c.put[k] == nil {
				data = appendRecord(data, k, a.data)
			}
		}
		data = append(data, fresh...)
		size = int64(len(data))
		if c.write(data) != nil {
			c.put = map[string][]byte{}
			return
		}
		c.whole = true
		for k, i := range c.index {
			if !c.old[i].used {
				delete(c.index, k) // not written
			}
		}
	}
	// What was put is in the file now, as if read from it.
	c.size = size
	for k, d := range c.put {
		a := answer{data: d, size: len(appendRecord(nil, k, d)), used: true}
		if i, ok := c.index[k]; ok {
			c.old[i] = a
		} else {
			c.index[k] = len(c.old)
			c.old = append(c.old, a)
		}
	}
	c.put = map[string][]byte{}
	marker := filepath.Join(c.dir, "trimmed")
	if fi, err := os.Stat(marker); err == nil && time.Since(fi.ModTime()) < trimEvery && size < c.cap/16 {
		return
	}
	c.Trim()
	if f, err := os.Create(marker); err == nil {
		f.Close()
	}
}

// append adds records to the end of c.file in one write: a reader sees
// them whole or, past a record cut short, not at all.
func (c *Cache) append(records []byte) error {
	f, err := os.OpenFile(c.file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(records)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// write puts data in c.file whole: written under a temporary name in its
// directory and renamed into place, so that a reader never sees half of
// it. It is not synced: a file a crash damages reads as empty.
func (c *Cache) write(data []byte) error {
	shard := filepath.Dir(c.file)
	if err := os.MkdirAll(shard, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(shard, ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), c.file)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// appendRecord appends to b the record of key and data.
func appendRecord(b []byte, key string, data []byte) []byte {
	start := len(b)
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(data)))
	b = append(b, data...)
	sum := sha256.Sum256(b[start:])
	return append(b, sum[:]...)
}

// decode reads the records of a file's bytes b, a later record of a key
// replacing an earlier one, up to the first that is damaged.
func (c *Cache) decode(b []byte) {
	rest, ok := bytes.CutPrefix(b, []byte(magic))
	if !ok {
		return
	}
	c.size = int64(len(b))
	for len(rest) > 0 {
		var parts [2][]byte
		n := 0
		for i := range parts {
			l, w := binary.Uvarint(rest[n:])
			if w <= 0 || l > uint64(len(rest)-n-w) {
				return
			}
			parts[i] = rest[n+w : n+w+int(l)]
			n += w + int(l)
		}
		if len(rest)-n < sha256.Size {
			return
		}
		if sum := sha256.Sum256(rest[:n]); !bytes.Equal(rest[n:n+sha256.Size], sum[:]) {
			return
		}
		a := answer{data: parts[1], size: n + sha256.Size}
		if i, ok := c.index[string(parts[0])]; ok {
			c.old[i] = a
		} else {
			c.index[string(parts[0])] = len(c.old)
			c.old = append(c.old, a)
		}
		rest = rest[n+sha256.Size:]
	}
	c.whole = true
}

// Trim removes the files used least recently until the cache holds at
// most three quarters of its cap, if it holds more than the cap.
func (c *Cache) Trim() {
	type file struct {
		path string
		size int64
		used time.Time
	}
	var all []file
	var total int64
	shards, _ := os.ReadDir(c.dir)
	for _, s := range shards {
		if !s.IsDir() {
			continue
		}
		ents, _ := os.ReadDir(filepath.Join(c.dir, s.Name()))
		for _, e := range ents {
			fi, err := e.Info()
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			all = append(all, file{filepath.Join(c.dir, s.Name(), e.Name()), fi.Size(), fi.ModTime()})
			total += fi.Size()
		}
	}
	if total <= c.cap {
		return
	}
	slices.SortFunc(all, func(a, b file) int { return a.used.Compare(b.used) })
	for _, f := range all {
		if total <= c.cap/4*3 {
			break
		}
		if err := os.Remove(f.path); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= f.size
		}
	}
}
