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
	c := New(dir, "validate", "build-1")
	if got := c.Get([]byte("k")); got != nil {
		t.Fatalf("empty cache answered %q", got)
	}
	c.Put([]byte("k"), []byte("answer"))
	if got := c.Get([]byte("k")); string(got) != "answer" {
		t.Fatalf("Get = %q, want answer", got)
	}
	if got := New(dir, "validate", "build-2").Get([]byte("k")); got != nil {
		t.Errorf("another build read %q", got)
	}
	for _, p := range []string{dir, filepath.Join(dir, "validate")} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a directory of mode 0700", p, fi.Mode(), err)
		}
	}
	_, file := c.name([]byte("k"))
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("entry: %v, %v; want mode 0600", fi.Mode(), err)
	}
	b, _ := os.ReadFile(file)
	b[len(b)-1] ^= 1
	os.WriteFile(file, b, 0o600)
	if got := c.Get([]byte("k")); got != nil {
		t.Errorf("a damaged entry answered %q", got)
	}
	os.RemoveAll(dir)
	c.Put([]byte("k"), []byte("again")) // the shard it made is gone
	if got := c.Get([]byte("k")); got != nil {
		t.Logf("written again after removal: %q", got)
	}
}

// TestTrim fills a cache past its cap and checks that trimming keeps the
// entries used most recently, within three quarters of the cap.
func TestTrim(t *testing.T) {
	c := New(t.TempDir(), "validate", "b")
	c.SetCap(40 << 10)
	data := make([]byte, 1000)
	old := time.Now().Add(-48 * time.Hour)
	for i := range 80 {
		key := []byte(fmt.Sprint(i))
		c.Put(key, data)
		_, file := c.name(key)
		at := old.Add(time.Duration(i) * time.Minute)
		os.Chtimes(file, at, at)
	}
	c.Get([]byte("0")) // used again: its time is renewed
	c.Close()
	var total int64
	kept := 0
	for i := range 80 {
		_, file := c.name([]byte(fmt.Sprint(i)))
		if fi, err := os.Stat(file); err == nil {
			total += fi.Size()
			kept++
		}
	}
	if total > 30<<10 || kept == 0 {
		t.Errorf("after trimming: %d entries, %d bytes; want at most 30 KiB", kept, total)
	}
	if c.Get([]byte("0")) == nil {
		t.Errorf("the entry used last was trimmed")
	}
	if c.Get([]byte("1")) != nil {
		t.Errorf("the oldest entry unused was kept")
	}
	if c.Get([]byte("79")) == nil {
		t.Errorf("the newest entry was trimmed")
	}
}
