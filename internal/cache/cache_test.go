package cache

import (
	"fmt"
	"os"
	"path/filepath"
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
	// A run that puts something keeps what it used, and only that.
	c.Put([]byte("new"), []byte("n"))
	c.Close()
	c = Open(dir, "validate", "build-1", "/src")
	if c.Get([]byte("k")) == nil || c.Get([]byte("new")) == nil || c.Get([]byte("unused")) != nil {
		t.Errorf("after a second run: k %q, new %q, unused %q; want the first two alone", c.Get([]byte("k")), c.Get([]byte("new")), c.Get([]byte("unused")))
	}
	for _, p := range []string{dir, filepath.Join(dir, "validate"), filepath.Dir(c.file)} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a directory of mode 0700", p, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(c.file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file: %v, %v; want mode 0600", fi.Mode(), err)
	}
	b, _ := os.ReadFile(c.file)
	for i, damage := range []func([]byte) []byte{
		func(b []byte) []byte { b = append([]byte(nil), b...); b[len(b)-1] ^= 1; return b },
		func(b []byte) []byte { return b[:len(b)/2] },
		func(b []byte) []byte { return nil },
	} {
		os.WriteFile(c.file, damage(b), 0o600)
		if got := Open(dir, "validate", "build-1", "/src").Get([]byte("k")); got != nil {
			t.Errorf("damage %d: answered %q", i, got)
		}
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
