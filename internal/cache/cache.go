// Package cache keeps answers between runs of dalo in files under the
// user's cache directory ($XDG_CACHE_HOME/dalo, or ~/.cache/dalo): what
// 'dalo plugin validate' and 'dalo vet' found about a package whose inputs
// have not changed since.
//
// A cache only ever saves work. Its answers are kept under keys the caller
// makes of everything an answer depends on, in one file per source (its
// path) and dalo build, read whole when it is opened and written whole,
// with only the answers of this run, when it is closed and has new ones:
// one read instead of one per package. A file that is missing, unreadable,
// of another format or damaged reads as empty, and a write that fails is
// dropped, so the directory can be deleted at any moment and a run with or
// without it answers the same. The directories are made mode 0700 and the
// files 0600: an answer names files of the user's sources. Files are
// removed, least recently used first, when the cache grows past its cap.
package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"dalo/internal/regular"
)

// DefaultCap is the size cap of a cache: past it, the files used least
// recently are removed until it holds three quarters of it. The answers
// about a typical package take about 1.5 KB: 10,000 packages take 15 MB.
const DefaultCap = 256 << 20

// maxFile bounds what a read takes: the answers about one source.
const maxFile = 1 << 30

// magic opens every file: the format, then the hash of the rest.
const magic = "dalo cache 2\n"

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

	mu   sync.Mutex
	old  map[string][]byte // read when opened
	keep map[string][]byte // used or put in this run: what Close writes
	put  bool
}

// Dir returns the cache directory of dalo: $XDG_CACHE_HOME/dalo when
// XDG_CACHE_HOME is an absolute path, else ~/.cache/dalo. The directory
// it is in must exist, or be ~/.cache in a home that does: a cache makes
// neither a home nor a directory a user named for caches and did not make.
func Dir() (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	mustExist := base
	if !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base, mustExist = filepath.Join(home, ".cache"), home
	}
	if fi, err := os.Stat(mustExist); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("no directory %s for a cache", mustExist)
	}
	return filepath.Join(base, "dalo"), nil
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
	c := &Cache{dir: filepath.Join(dir, kind), cap: DefaultCap, old: map[string][]byte{}, keep: map[string][]byte{}}
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
	if fi.Size() > maxFile {
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
	entries, ok := decode(buf[:n])
	if !ok {
		return
	}
	c.old = entries
	if now := time.Now(); now.Sub(fi.ModTime()) > touchEvery {
		// Used again: the trim keeps it over files not used for longer.
		os.Chtimes(c.file, now, now)
	}
}

// Get returns the data put under key, or nil.
func (c *Cache) Get(key []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.old[string(key)]
	if !ok {
		return nil
	}
	c.keep[string(key)] = d
	return d
}

// Put stores data under key, to be written when the cache is closed.
func (c *Cache) Put(key, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keep[string(key)] = slices.Clone(data)
	c.put = true
}

// Close writes the answers of this run, when there are new ones, and trims
// the cache when that is due: once an hour, or when this file is over a
// sixteenth of the cap. An error is dropped: the next run computes the
// answers again.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.put {
		return
	}
	c.put = false
	data := encode(c.keep)
	if c.write(data) != nil {
		return
	}
	marker := filepath.Join(c.dir, "trimmed")
	if fi, err := os.Stat(marker); err == nil && time.Since(fi.ModTime()) < trimEvery && int64(len(data)) < c.cap/16 {
		return
	}
	c.Trim()
	if f, err := os.Create(marker); err == nil {
		f.Close()
	}
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
	sum := sha256.Sum256(data)
	_, err = f.Write(slices.Concat([]byte(magic), []byte(hex.EncodeToString(sum[:])), []byte("\n"), data))
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

// encode writes entries as key length, key, data length, data, each
// length a uvarint, in the order of their keys.
func encode(entries map[string][]byte) []byte {
	keys := make([]string, 0, len(entries))
	size := 0
	for k, d := range entries {
		keys = append(keys, k)
		size += len(k) + len(d) + 2*binary.MaxVarintLen64
	}
	slices.Sort(keys)
	out := make([]byte, 0, size)
	for _, k := range keys {
		out = binary.AppendUvarint(out, uint64(len(k)))
		out = append(out, k...)
		out = binary.AppendUvarint(out, uint64(len(entries[k])))
		out = append(out, entries[k]...)
	}
	return out
}

func decode(b []byte) (map[string][]byte, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(magic))
	if !ok || len(rest) < 65 || rest[64] != '\n' {
		return nil, false
	}
	data := rest[65:]
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != string(rest[:64]) {
		return nil, false
	}
	entries := map[string][]byte{}
	for len(data) > 0 {
		var parts [2][]byte
		for i := range parts {
			n, w := binary.Uvarint(data)
			if w <= 0 || n > uint64(len(data)-w) {
				return nil, false
			}
			parts[i], data = data[w:w+int(n)], data[w+int(n):]
		}
		entries[string(parts[0])] = parts[1]
	}
	return entries, true
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
