package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/providers"
)

// With a version cache (VersionCacheEnv), a harness binary's --version runs
// once however many commands read it, and a binary the cache was seeded
// for (CacheVersion) is not run at all; another binary, or the same one
// rewritten, is run. Without one, every read runs it.
func TestVersionCache(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	bin := filepath.Join(dir, "bin", "qwen")
	script := func(version string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, []byte("#!/bin/sh\necho run >> '"+runs+"'\necho '"+version+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "run\n")
	}
	read := func(want string) {
		t.Helper()
		h, err := readHarness(ts, "qwen", bin)
		if err != nil {
			t.Fatal(err)
		}
		if h.Output != want {
			t.Errorf("version output %q, want %q", h.Output, want)
		}
	}
	script("0.25.0")

	read("0.25.0")
	read("0.25.0")
	if n := count(); n != 2 {
		t.Errorf("without a cache: %d runs, want 2", n)
	}

	cache := filepath.Join(dir, "cache")
	if err := os.Mkdir(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv(VersionCacheEnv, cache)
	read("0.25.0")
	read("0.25.0")
	if n := count(); n != 3 {
		t.Errorf("with a cache: %d runs in all, want 3 (one more)", n)
	}

	// Rewritten (another size): run again.
	script("0.25.10")
	read("0.25.10")
	if n := count(); n != 4 {
		t.Errorf("rewritten: %d runs in all, want 4", n)
	}

	// Seeded, through a link to it, as verify seeds what it read: not run.
	link := filepath.Join(dir, "link", "qwen")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	script("0.25.11")
	if err := CacheVersion(cache, link, "0.25.11"); err != nil {
		t.Fatal(err)
	}
	read("0.25.11")
	if n := count(); n != 4 {
		t.Errorf("seeded: %d runs in all, want 4 (none more)", n)
	}
}
