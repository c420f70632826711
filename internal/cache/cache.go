// Package cache keeps answers between runs of dalo in files under the
// user's cache directory ($XDG_CACHE_HOME/dalo, or ~/.cache/dalo): what
// 'dalo plugin validate' and 'dalo vet' found about a package whose inputs
// have not changed since.
//
// A cache only ever saves work. Every entry is named by a hash of its key,
// which the caller makes of everything the answer depends on, and of the
// identity of the dalo build that wrote it; an entry that is missing,
// unreadable, of another format or damaged is a miss, and a write that
// fails is dropped. So the directory can be deleted at any moment, and a
// run with or without it answers the same. The directories are made mode
// 0700 and the entries 0600: an answer names files of the user's sources.
// Entries are trimmed, least recently used first, when the cache grows
// past its size cap.
package cache

import (
	"bytes"
	"crypto/sha256"
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

// DefaultCap is the size cap of a cache: past it, the entries used least
// recently are removed until it holds three quarters of it. An entry of a
// typical package takes 3 to 5 KB: 10,000 packages take about 50 MB.
const DefaultCap = 256 << 20

// maxEntry bounds what Get reads: an entry is the answer about one
// manifest, which is at most 1 MiB.
const maxEntry = 16 << 20

// magic opens every entry: the format, then the hash of the rest.
const magic = "dalo cache 1\n"

// How often an entry used again has its time renewed, and how often the
// cache is trimmed even when this process wrote little to it.
const (
	touchEvery = time.Hour
	trimEvery  = time.Hour
)

// A Cache is a directory of entries. Its methods are safe for concurrent
// use; none of them fails.
type Cache struct {
	dir   string // .../dalo/<kind>
	build string // the identity of the dalo build, part of every key
	cap   int64

	mu      sync.Mutex
	shards  map[string]bool // shard directories made by this process
	written int64
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

// New returns the cache of entries of kind (a word, such as "validate")
// under dir, as written by the dalo build identified by build. Nothing is
// made until an entry is put.
func New(dir, kind, build string) *Cache {
	return &Cache{dir: filepath.Join(dir, kind), build: build, cap: DefaultCap, shards: map[string]bool{}}
}

// SetCap sets the size cap in bytes (tests use a small one).
func (c *Cache) SetCap(n int64) { c.cap = n }

func (c *Cache) name(key []byte) (shard, file string) {
	h := sha256.New()
	h.Write([]byte(c.build))
	h.Write([]byte{0})
	h.Write(key)
	sum := hex.EncodeToString(h.Sum(nil))
	shard = filepath.Join(c.dir, sum[:2])
	return shard, filepath.Join(shard, sum[2:])
}

// Get returns the data put under key, or nil.
func (c *Cache) Get(key []byte) []byte {
	_, file := c.name(key)
	f, fi, err := regular.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi.Size() > maxEntry {
		return nil
	}
	buf := make([]byte, fi.Size()+1)
	n, _ := readFull(f, buf)
	data, ok := decode(buf[:n])
	if !ok {
		return nil
	}
	if now := time.Now(); now.Sub(fi.ModTime()) > touchEvery {
		// Used again: the trim keeps it over entries not used for longer.
		os.Chtimes(file, now, now)
	}
	return data
}

func readFull(f *os.File, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Put stores data under key. An error is dropped: the next run computes
// the answer again.
func (c *Cache) Put(key, data []byte) {
	shard, file := c.name(key)
	c.mu.Lock()
	made := c.shards[shard]
	c.mu.Unlock()
	if !made {
		if err := os.MkdirAll(shard, 0o700); err != nil {
			return
		}
		c.mu.Lock()
		c.shards[shard] = true
		c.mu.Unlock()
	}
	// The entry is written whole under a temporary name in its shard and
	// renamed into place, so that a reader never sees half of one. It is
	// not synced: an entry a crash damages is a miss.
	f, err := os.CreateTemp(shard, ".tmp-*")
	if err != nil {
		return
	}
	sum := sha256.Sum256(data)
	_, err = f.Write(slices.Concat([]byte(magic), []byte(hex.EncodeToString(sum[:])), []byte("\n"), data))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), file)
	}
	if err != nil {
		os.Remove(f.Name())
		return
	}
	c.mu.Lock()
	c.written += int64(len(data))
	c.mu.Unlock()
}

func decode(b []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(magic))
	if !ok || len(rest) < 65 || rest[64] != '\n' {
		return nil, false
	}
	data := rest[65:]
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != string(rest[:64]) {
		return nil, false
	}
	return data, true
}

// Close trims the cache when it is due: once an hour, or when this
// process wrote a sixteenth of the cap.
func (c *Cache) Close() {
	c.mu.Lock()
	written := c.written
	c.mu.Unlock()
	if written == 0 {
		return
	}
	marker := filepath.Join(c.dir, "trimmed")
	if fi, err := os.Stat(marker); err == nil && time.Since(fi.ModTime()) < trimEvery && written < c.cap/16 {
		return
	}
	c.Trim()
	if f, err := os.Create(marker); err == nil {
		f.Close()
	}
}

// Trim removes the entries used least recently until the cache holds at
// most three quarters of its cap, if it holds more than the cap.
func (c *Cache) Trim() {
	type entry struct {
		path string
		size int64
		used time.Time
	}
	var all []entry
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
			all = append(all, entry{filepath.Join(c.dir, s.Name(), e.Name()), fi.Size(), fi.ModTime()})
			total += fi.Size()
		}
	}
	if total <= c.cap {
		return
	}
	slices.SortFunc(all, func(a, b entry) int { return a.used.Compare(b.used) })
	for _, e := range all {
		if total <= c.cap/4*3 {
			break
		}
		if err := os.Remove(e.path); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= e.size
		}
	}
}
