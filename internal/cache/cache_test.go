package cache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
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

// TestDirMade: a cache directory that is missing is made, with the
// directories above it that are, mode 0700 as the XDG Base Directory spec
// asks; a missing home is not.
func TestDirMade(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "x", "y"))
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(tmp, "x", "y", "dalo"); dir != want {
		t.Errorf("Dir() = %s, want %s", dir, want)
	}
	for _, d := range []string{"x", "x/y", "x/y/dalo"} {
		if fi, err := os.Stat(filepath.Join(tmp, d)); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a directory of mode 0700", d, fi, err)
		}
	}
	t.Setenv("XDG_CACHE_HOME", "relative/ignored")
	t.Setenv("HOME", filepath.Join(tmp, "home"))
	if dir, err := Dir(); err == nil {
		t.Errorf("without a home: Dir() = %s, want an error", dir)
	}
	if _, err := os.Stat(filepath.Join(tmp, "home")); err == nil {
		t.Error("Dir made a home")
	}
	os.Mkdir(filepath.Join(tmp, "home"), 0o755)
	if dir, err := Dir(); err != nil || dir != filepath.Join(tmp, "home", ".cache", "dalo") {
		t.Errorf("Dir() = %s, %v; want ~/.cache/dalo", dir, err)
	}
	if fi, err := os.Stat(filepath.Join(tmp, "home", ".cache")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("~/.cache: %v, %v; want mode 0700", fi, err)
	}
}

// TestDirUnsafe: a cache directory others could write is refused, with an
// *UnsafeError naming it, and so is one in a directory others could
// replace it in; /tmp's sticky bit makes a shared parent safe.
func TestDirUnsafe(t *testing.T) {
	const other = 65534 // nobody
	for _, tc := range []struct {
		name      string
		prepare   func(base, dir string) error
		root      bool // needs chown
		unsafeDir string
	}{
		{name: "safe", prepare: func(base, dir string) error { return nil }},
		{name: "group-writable", prepare: func(base, dir string) error { return os.Chmod(dir, 0o770) }, unsafeDir: "dalo"},
		{name: "world-writable", prepare: func(base, dir string) error { return os.Chmod(dir, 0o707) }, unsafeDir: "dalo"},
		{name: "parent world-writable", prepare: func(base, dir string) error { return os.Chmod(base, 0o777) }, unsafeDir: "base"},
		{name: "parent sticky", prepare: func(base, dir string) error { return os.Chmod(base, 0o777|os.ModeSticky) }},
		{name: "another user's", root: true, prepare: func(base, dir string) error { return os.Chown(dir, other, other) }, unsafeDir: "dalo"},
		{name: "parent another user's", root: true, prepare: func(base, dir string) error { return os.Chown(base, other, other) }, unsafeDir: "base"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				t.Skip("changing a directory's owner takes root")
			}
			base := filepath.Join(t.TempDir(), "cache")
			dir := filepath.Join(base, "dalo")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := tc.prepare(base, dir); err != nil {
				t.Fatal(err)
			}
			t.Setenv("XDG_CACHE_HOME", base)
			got, err := Dir()
			var ue *UnsafeError
			switch want := map[string]string{"base": base, "dalo": dir}[tc.unsafeDir]; {
			case want == "" && err != nil:
				t.Errorf("Dir() = %v, want %s", err, dir)
			case want != "" && (!errors.As(err, &ue) || ue.Path != want):
				t.Errorf("Dir() = %q, %v; want an UnsafeError of %s", got, err, want)
			}
		})
	}
}

// TestFileNotOurs: a cache file another user owns, or that others may
// write, is not read; the next run that puts an answer replaces it.
func TestFileNotOurs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dalo")
	c := Open(dir, "validate", "b", "/src")
	c.Put([]byte("k"), []byte("valid"))
	c.Close()
	for _, tc := range []struct {
		name   string
		change func(string) error
		root   bool
	}{
		{"group-writable", func(f string) error { return os.Chmod(f, 0o620) }, false},
		{"another user's", func(f string) error { return os.Chown(f, 65534, 65534) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				t.Skip("changing a file's owner takes root")
			}
			if err := tc.change(c.file); err != nil {
				t.Fatal(err)
			}
			c := Open(dir, "validate", "b", "/src")
			if got := c.Get([]byte("k")); got != nil {
				t.Errorf("read %q from it", got)
			}
			c.Put([]byte("k"), []byte("again"))
			c.Close()
			fi, err := os.Stat(c.file)
			if err != nil || !ours(fi) || fi.Mode().Perm() != 0o600 {
				t.Errorf("after a run: %v, %v; want this user's, mode 0600", fi, err)
			}
			if got := Open(dir, "validate", "b", "/src").Get([]byte("k")); string(got) != "again" {
				t.Errorf("after a run: %q", got)
			}
		})
	}
}

// TestOldFormat: a file of the format before sha256 (records checked by
// CRC-32C alone) reads as empty and is written anew by the next run that
// puts an answer.
func TestOldFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dalo")
	c := Open(dir, "validate", "b", "/src")
	rec := []byte("\x01k\x05valid")
	old := binary.LittleEndian.AppendUint32(append([]byte("dalo cache 3\n"), rec...), crc32.Checksum(rec, crc32.MakeTable(crc32.Castagnoli)))
	if err := os.MkdirAll(filepath.Dir(c.file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.file, old, 0o600); err != nil {
		t.Fatal(err)
	}
	c = Open(dir, "validate", "b", "/src")
	if got := c.Get([]byte("k")); got != nil {
		t.Errorf("an old file answered %q", got)
	}
	c.Put([]byte("k2"), []byte("x"))
	c.Close()
	b, _ := os.ReadFile(c.file)
	if !bytes.HasPrefix(b, []byte(magic)) || bytes.Contains(b, []byte("valid")) {
		t.Errorf("after a run the file holds %q; want the new format alone", b)
	}
}
