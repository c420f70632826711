package cache

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestPutGet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dalo")
	c := Open(dir, "validate", "build-1", "/src")
	if got := c.Get([]byte("k")); got != nil {
		t.Fatalf("empty cache answered %q", got)
	}
	c.Put([]byte("k"), []byte("answer"))
	c.Put([]byte("unused"), []byte("x"))
	c.Close()
	c = Open(dir, "validate", "build-1", "/src")
	if got := c.Get([]byte("k")); string(got) != "answer" {
		t.Fatalf("Get = %q, want answer", got)
	}
	if got := Open(dir, "validate", "build-2", "/src").Get([]byte("k")); got != nil {
		t.Errorf("another build read %q", got)
	}
	if got := Open(dir, "validate", "build-1", "/other").Get([]byte("k")); got != nil {
		t.Errorf("another source read %q", got)
	}
	// A run that puts something appends it; the answers it did not use
	// stay until they outweigh those it used, and the file is written
	// anew with the used ones alone.
	size := func() int64 { fi, _ := os.Stat(c.file); return fi.Size() }
	before := size()
	c.Put([]byte("new"), []byte("n"))
	c.Close()
	if got, want := size()-before, int64(len(appendRecord(nil, "new", []byte("n")))); got != want {
		t.Errorf("a run that put one answer added %d bytes, want its record's %d", got, want)
	}
	c = Open(dir, "validate", "build-1", "/src")
	if c.Get([]byte("k")) == nil || c.Get([]byte("new")) == nil || c.Get([]byte("unused")) == nil {
		t.Errorf("after an append: k %q, new %q, unused %q; want all three", c.Get([]byte("k")), c.Get([]byte("new")), c.Get([]byte("unused")))
	}
	c = Open(dir, "validate", "build-1", "/src")
	c.Get([]byte("new"))
	c.Put([]byte("big"), make([]byte, 100))
	c.Put([]byte("new"), []byte("n2")) // replaces the old answer
	c.Close()
	c = Open(dir, "validate", "build-1", "/src")
	if string(c.Get([]byte("new"))) != "n2" || c.Get([]byte("big")) == nil {
		t.Errorf("after a second append: new %q, big %t", c.Get([]byte("new")), c.Get([]byte("big")) != nil)
	}
	c = Open(dir, "validate", "build-1", "/src")
	c.Get([]byte("new"))
	c.Put([]byte("last"), []byte("l"))
	c.Close()
	c = Open(dir, "validate", "build-1", "/src")
	if c.Get([]byte("k")) != nil || c.Get([]byte("unused")) != nil || c.Get([]byte("big")) != nil || c.Get([]byte("new")) == nil || c.Get([]byte("last")) == nil {
		t.Errorf("after stale answers outweighed used ones: k %t, unused %t, big %t, new %t, last %t; want the last two alone",
			c.Get([]byte("k")) != nil, c.Get([]byte("unused")) != nil, c.Get([]byte("big")) != nil, c.Get([]byte("new")) != nil, c.Get([]byte("last")) != nil)
	}
	if got, want := size(), int64(len(magic)+len(appendRecord(nil, "new", []byte("n2")))+len(appendRecord(nil, "last", []byte("l")))); got != want {
		t.Errorf("the file written anew holds %d bytes, want %d", got, want)
	}
	c = Open(dir, "validate", "build-1", "/src")
	c.Get([]byte("last"))
	c.Get([]byte("new"))
	c.Put([]byte("k"), []byte("answer"))
	c.Close()
	for _, p := range []string{dir, filepath.Join(dir, "validate"), filepath.Dir(c.file)} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a directory of mode 0700", p, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(c.file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file: %v, %v; want mode 0600", fi.Mode(), err)
	}
	// Damage loses the answers from the record it is in to the end: the
	// file holds last and new, written anew, then k, appended.
	b, _ := os.ReadFile(c.file)
	kAt := bytes.Index(b, []byte("answer"))
	for i, tc := range []struct {
		damage func([]byte) []byte
		kept   []string
	}{
		{func(b []byte) []byte { b = slices.Clone(b); b[len(b)-1] ^= 1; return b }, []string{"last", "new"}},
		{func(b []byte) []byte { b = slices.Clone(b); b[kAt] ^= 1; return b }, []string{"last", "new"}},
		{func(b []byte) []byte { return b[:len(b)-1] }, []string{"last", "new"}},
		{func(b []byte) []byte { return b[:len(magic)+3] }, nil},
		{func(b []byte) []byte { b = slices.Clone(b); b[0] ^= 1; return b }, nil},
		{func(b []byte) []byte { return nil }, nil},
	} {
		os.WriteFile(c.file, tc.damage(b), 0o600)
		c := Open(dir, "validate", "build-1", "/src")
		var kept []string
		for _, k := range []string{"k", "last", "new"} {
			if c.Get([]byte(k)) != nil {
				kept = append(kept, k)
			}
		}
		if !slices.Equal(kept, tc.kept) {
			t.Errorf("damage %d: answered %q, want %q", i, kept, tc.kept)
		}
		// The next run that puts an answer writes the file anew.
		c.Put([]byte("k"), []byte("answer"))
		c.Close()
		if got := Open(dir, "validate", "build-1", "/src").Get([]byte("k")); string(got) != "answer" {
			t.Errorf("damage %d, then a run: k %q", i, got)
		}
		b, _ = os.ReadFile(c.file)
	}
	os.RemoveAll(dir)
	c.Put([]byte("k"), []byte("again")) // the directory it made is gone
	c.Close()
	if got := Open(dir, "validate", "build-1", "/src").Get([]byte("k")); string(got) != "again" {
		t.Errorf("after removal: %q", got)
	}
}

// TestTrim fills a cache past its cap and checks that trimming keeps the
// files used most recently, within three quarters of the cap.
func TestTrim(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 1000)
	old := time.Now().Add(-48 * time.Hour)
	var files []string
	for i := range 80 {
		c := Open(dir, "validate", "b", fmt.Sprint(i))
		c.SetCap(1 << 30) // no trim yet
		c.Put([]byte("k"), data)
		c.Close()
		at := old.Add(time.Duration(i) * time.Minute)
		os.Chtimes(c.file, at, at)
		files = append(files, c.file)
	}
	Open(dir, "validate", "b", "0") // read again: its time is renewed
	// Trimming is due: the last was over an hour ago.
	hourAgo := time.Now().Add(-2 * time.Hour)
	os.Chtimes(filepath.Join(dir, "validate", "trimmed"), hourAgo, hourAgo)
	c := Open(dir, "validate", "b", "80")
	c.SetCap(40 << 10)
	c.Put([]byte("k"), data)
	c.Close()
	var total int64
	for _, f := range append(files, c.file) {
		if fi, err := os.Stat(f); err == nil {
			total += fi.Size()
		}
	}
	if total > 30<<10 {
		t.Errorf("after trimming: %d bytes; want at most 30 KiB", total)
	}
	exists := func(f string) bool { _, err := os.Stat(f); return err == nil }
	if !exists(files[0]) || exists(files[1]) || !exists(files[79]) || !exists(c.file) {
		t.Errorf("kept: used again %t, oldest %t, newest %t, just written %t; want true, false, true, true", exists(files[0]), exists(files[1]), exists(files[79]), exists(c.file))
	}
}

// BenchmarkRun is one run of vet with one package edited, as the cache
// sees it: open the answers of 4,000 entries (packages and the listings
// of their directories), ask for each, put one, close.
func BenchmarkRun(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "dalo")
	keys := make([][]byte, 4000)
	c := Open(dir, "validate", "build", "/src")
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "%032x", i*7919)
		c.Put(keys[i], make([]byte, 400))
	}
	c.Close()
	for b.Loop() {
		c := Open(dir, "validate", "build", "/src")
		for _, k := range keys {
			if c.Get(k) == nil {
				b.Fatal("miss")
			}
		}
		c.Put(keys[0], make([]byte, 401))
		c.Close()
	}
}
