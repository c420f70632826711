package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"dalo/bench/sourcegen"
)

// memCache is a Cache in memory that counts what it is asked.
type memCache struct {
	mu         sync.Mutex
	m          map[string][]byte
	hits, puts int
}

func (c *memCache) Get(key []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[string(key)]
	if ok {
		c.hits++
	}
	return d
}

func (c *memCache) Put(key, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[string(key)] = data
	c.puts++
}

// TestValidateCacheChecksOnlyWhatChanged validates a source twice through
// a cache, then after editing one manifest: the second run checks no
// package, skill or agent, the third only the edited package, and every
// report is the one validating without a cache gives.
func TestValidateCacheChecksOnlyWhatChanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "src")
	if err := sourcegen.Write(dir, 30, 0); err != nil {
		t.Fatal(err)
	}
	c := &memCache{m: map[string][]byte{}}
	report := func(opts Options) string {
		rep, err := Validate(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(rep)
		return string(b)
	}
	// Beside the 30 packages, the 36 skills and agents they name are
	// checked once each.
	for i, want := range []struct{ hits, puts int }{{0, 30 + 36}, {30 + 36, 0}, {29 + 36, 1}} {
		if i == 2 {
			f := filepath.Join(dir, "plugins/pkg-0007/PLUGIN.toml")
			b, _ := os.ReadFile(f)
			if err := os.WriteFile(f, append(b, "\n# edited\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c.hits, c.puts = 0, 0
		got := report(Options{Cache: c})
		if got != report(Options{}) {
			t.Fatalf("run %d: the report through the cache differs", i+1)
		}
		if c.hits != want.hits || c.puts != want.puts {
			t.Errorf("run %d: %d hits, %d entries put; want %d and %d", i+1, c.hits, c.puts, want.hits, want.puts)
		}
	}
	c.hits = 0
	if _, err := Load(dir, Options{Cache: c}); err != nil || c.hits != 0 {
		t.Errorf("Load read the cache (%d hits, %v): it must check afresh", c.hits, err)
	}
}

// TestEntryDamaged restores every package of a source from its entry, then
// from every shorter prefix of it: the whole entry gives the package back
// as checked, and a prefix is refused without a panic.
func TestEntryDamaged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "src")
	if err := sourcegen.Write(dir, 5, 0); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Packages {
		data := p.entry()
		var q Package
		if !q.restore(data) || string(q.entry()) != string(data) {
			t.Fatalf("%s: restored differently", p.Name)
		}
		for n := range len(data) {
			var q Package
			if q.restore(data[:n]) {
				t.Errorf("%s: a prefix of %d of %d bytes restored", p.Name, n, len(data))
			}
		}
	}
}
