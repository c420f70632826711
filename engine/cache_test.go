package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"dalo/bench/sourcegen"
	"dalo/internal/cache"
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

// reportJSON validates dir and returns the report as JSON.
func reportJSON(t *testing.T, dir string, opts Options) string {
	t.Helper()
	rep, err := Validate(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep)
	return string(b)
}

// TestValidateCacheChecksOnlyWhatChanged validates a source twice through
// a cache, then after editing one manifest: the second run checks no
// package, the third only the edited package, and every report is the
// one validating without a cache gives. Skills and agents are checked
// afresh each run: their keys cost more than their checks.
func TestValidateCacheChecksOnlyWhatChanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "src")
	if err := sourcegen.Write(dir, 30, 0); err != nil {
		t.Fatal(err)
	}
	// The counts are of checks: the clock stays within listingAge of
	// the writes, so that no listing or digest is kept however long a
	// run takes (on a loaded machine the first took longer, and the
	// second kept them all).
	defer func(old func() time.Time) { clock = old }(clock)
	made := time.Now()
	clock = func() time.Time { return made.Add(listingAge / 2) }
	c := &memCache{m: map[string][]byte{}}
	report := func(opts Options) string { return reportJSON(t, dir, opts) }
	// The rules' answers are one entry beside the 30 packages', put when
	// a run asked new ones and read when a check runs.
	for i, want := range []struct{ hits, puts int }{{0, 30 + 1}, {30, 0}, {29 + 1, 1}} {
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

// TestOneCheckCompilesRulesOnce edits one package of a source whose
// other answers are cached: the rules are compiled once, for the source,
// and the worker that checks the package uses them, whichever it is.
func TestOneCheckCompilesRulesOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	dir := filepath.Join(t.TempDir(), "src")
	if err := sourcegen.Write(dir, 30, 0); err != nil {
		t.Fatal(err)
	}
	c := &memCache{m: map[string][]byte{}}
	if _, err := Validate(dir, Options{Cache: c}); err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"pkg-0003", "pkg-0011", "pkg-0029"} {
		f := filepath.Join(dir, "plugins", pkg, "PLUGIN.toml")
		b, _ := os.ReadFile(f)
		if err := os.WriteFile(f, append(b, "\n# edited\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		before := rulesCompiled.Load()
		if _, err := Validate(dir, Options{Cache: c}); err != nil {
			t.Fatal(err)
		}
		if n := rulesCompiled.Load() - before; n != 1 {
			t.Errorf("after editing %s: the rules were compiled %d times", pkg, n)
		}
	}
}

// TestListingsFollowChanges validates a source through a cache whose
// directory listings are all old enough to keep, then changes its tree in
// each way that changes a directory's names: a run with nothing changed
// reads no directory, and after each change the report is the one
// validating without a cache gives.
func TestListingsFollowChanges(t *testing.T) {
	defer func(old func() time.Time) { clock = old }(clock)
	clock = func() time.Time { return time.Now().Add(time.Hour) }
	defer func(old func(string) bool) { trustStats = old }(trustStats)
	trustStats = func(string) bool { return true } // whatever the test's file system
	dir := filepath.Join(t.TempDir(), "src")
	if err := sourcegen.Write(dir, 7, 0); err != nil {
		t.Fatal(err)
	}
	c := &memCache{m: map[string][]byte{}}
	report := func(opts Options) string { return reportJSON(t, dir, opts) }
	pkg := func(n int, rel string) string {
		return filepath.Join(dir, "plugins", fmt.Sprintf("pkg-%04d", n), rel)
	}
	// A symlink in a package is a warning (W064): each change below
	// changes the answer, and a listing kept too long would hide it.
	if err := os.Symlink("lib", pkg(2, "link")); err != nil {
		t.Fatal(err)
	}
	report(Options{Cache: c})
	before, manifests := dirsRead.Load(), manifestsRead.Load()
	report(Options{Cache: c})
	if n := dirsRead.Load() - before; n != 0 {
		t.Errorf("nothing changed, and %d directories were read", n)
	}
	if n := manifestsRead.Load() - manifests; n != 0 {
		t.Errorf("nothing changed, and %d manifests were read for their keys", n)
	}
	// An edit that keeps a manifest's size: its times tell it.
	edit := func(n int, old, new string) func() error {
		return func() error {
			f := pkg(n, "PLUGIN.toml")
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if !bytes.Contains(b, []byte(old)) || len(old) != len(new) {
				return fmt.Errorf("%s: cannot replace %q by %q", f, old, new)
			}
			return os.WriteFile(f, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
		}
	}
	for _, tc := range []struct {
		name   string
		change func() error
	}{
		{"symlink added", func() error { return os.Symlink("lib", pkg(0, "link")) }},
		{"symlink added in a subdirectory", func() error { return os.Symlink("x", pkg(1, "lib/link")) }},
		{"symlink removed", func() error { return os.Remove(pkg(2, "link")) }},
		{"directory renamed", func() error { return os.Rename(pkg(3, "lib"), pkg(3, "lib2")) }},
		{"directory made a symlink", func() error {
			if err := os.Rename(pkg(4, "lib"), pkg(4, "lib-real")); err != nil {
				return err
			}
			return os.Symlink("lib-real", pkg(4, "lib"))
		}},
		{"directories nested too deep", func() error {
			return os.MkdirAll(pkg(5, strings.Repeat("d/", 40)), 0o755)
		}},
		{"manifest edited, same size", edit(0, `schema_version = 1`, `schema_version = 7`)},
		{"manifest edited, same size and modification time", func() error {
			f := pkg(6, "PLUGIN.toml")
			fi, err := os.Stat(f)
			if err != nil {
				return err
			}
			if err := edit(6, `schema_version = 1`, `schema_version = 9`)(); err != nil {
				return err
			}
			return os.Chtimes(f, fi.ModTime(), fi.ModTime()) // the change time moves all the same
		}},
		{"manifest replaced, same size", func() error {
			f := pkg(1, "PLUGIN.toml")
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			b = bytes.Replace(b, []byte(`schema_version = 1`), []byte(`schema_version = 8`), 1)
			if err := os.WriteFile(f+".new", b, 0o644); err != nil {
				return err
			}
			return os.Rename(f+".new", f)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.change(); err != nil {
				t.Fatal(err)
			}
			if got, want := report(Options{Cache: c}), report(Options{}); got != want {
				t.Errorf("the report through the cache differs:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestRecentListingsNotKept validates a source made just now twice: its
// directories changed within listingAge, when another change could leave
// the same times, so no listing is kept and each run reads them all.
func TestRecentListingsNotKept(t *testing.T) {
	defer func(old func(string) bool) { trustStats = old }(trustStats)
	trustStats = func(string) bool { return true }
	dir := filepath.Join(t.TempDir(), "src")
	if err := sourcegen.Write(dir, 3, 0); err != nil {
		t.Fatal(err)
	}
	// However long the runs take, they run within listingAge of the
	// last change.
	defer func(old func() time.Time) { clock = old }(clock)
	made := time.Now()
	clock = func() time.Time { return made.Add(listingAge / 2) }
	c := &memCache{m: map[string][]byte{}}
	for run := 1; run <= 2; run++ {
		before, manifests := dirsRead.Load(), manifestsRead.Load()
		if _, err := Validate(dir, Options{Cache: c}); err != nil {
			t.Fatal(err)
		}
		if n := dirsRead.Load() - before; n == 0 {
			t.Errorf("run %d read no directory", run)
		}
		if n := manifestsRead.Load() - manifests; n < 3 {
			t.Errorf("run %d read %d manifests for their keys, want each of 3", run, n)
		}
	}
}

// FuzzDecoderInt holds the decoder's varints to binary.Varint's, on
// encodings and on bytes that are none.
func FuzzDecoderInt(f *testing.F) {
	for _, n := range []int64{0, 1, -1, 63, -64, 64, 1 << 40, math.MaxInt64, math.MinInt64} {
		f.Add(binary.AppendVarint(nil, n))
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02})
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := newDecoder(b)
		got := d.int()
		want, w := binary.Varint(b)
		if w <= 0 {
			if !d.bad {
				t.Fatalf("% x: read %d, binary.Varint fails", b, got)
			}
			return
		}
		if d.bad || int64(got) != want || len(d.b) != len(b)-w {
			t.Fatalf("% x: read %d (bad %t, %d left), want %d (%d left)", b, got, d.bad, len(d.b), want, len(b)-w)
		}
	})
}

// TestEditedPackageAsksLittle: what the rules answered is kept in the
// cache, so that checking an edited package in a new process asks CUE
// only what no earlier run asked. A new process is played by forgetting
// every answer the process holds.
func TestEditedPackageAsksLittle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "src")
	if err := sourcegen.Write(dir, 20, 0); err != nil {
		t.Fatal(err)
	}
	forget := forgetAnswers
	c := &memCache{m: map[string][]byte{}}
	forget()
	want := reportJSON(t, dir, Options{Cache: c})
	asked := questionsAsked.Load()
	f := filepath.Join(dir, "plugins/pkg-0007/PLUGIN.toml")
	b, _ := os.ReadFile(f)
	if err := os.WriteFile(f, append(b, "\n# edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	forget()
	if got := reportJSON(t, dir, Options{Cache: c}); got != want {
		t.Errorf("the report after the edit differs")
	}
	if n := questionsAsked.Load() - asked; n != 0 {
		t.Errorf("checking the edited package asked CUE %d questions an earlier run had asked", n)
	}
}

// TestStatsUntrusted: on a file system whose stats dalo does not trust (a
// network or FUSE one), every run reads each directory and manifest, old
// as they may be, and still restores the packages' answers.
func TestStatsUntrusted(t *testing.T) {
	defer func(old func() time.Time) { clock = old }(clock)
	clock = func() time.Time { return time.Now().Add(time.Hour) }
	defer func(old func(string) bool) { trustStats = old }(trustStats)
	trustStats = func(string) bool { return false }
	dir := filepath.Join(t.TempDir(), "src")
	if err := sourcegen.Write(dir, 3, 0); err != nil {
		t.Fatal(err)
	}
	c := &memCache{m: map[string][]byte{}}
	want := reportJSON(t, dir, Options{})
	for run := 1; run <= 2; run++ {
		before, manifests := dirsRead.Load(), manifestsRead.Load()
		c.hits = 0
		if got := reportJSON(t, dir, Options{Cache: c}); got != want {
			t.Errorf("run %d: the report through the cache differs", run)
		}
		if dirsRead.Load() == before || manifestsRead.Load()-manifests < 3 {
			t.Errorf("run %d read %d directories and %d manifests; want all of them", run, dirsRead.Load()-before, manifestsRead.Load()-manifests)
		}
		if run == 2 && c.hits == 0 {
			t.Error("the second run restored no answer")
		}
	}
}

// TestLocalFS: the file systems whose stats the cache trusts are local
// ones; a path that is not there is none.
func TestLocalFS(t *testing.T) {
	if localFS(filepath.Join(t.TempDir(), "missing")) {
		t.Error("a missing directory is on a local file system")
	}
	if runtime.GOOS == "linux" && !localFS("/dev/shm") && !localFS(t.TempDir()) {
		t.Error("neither /dev/shm nor the test's temporary directory is on a local file system")
	}
}

// TestOnDiskCache runs validations as the command does, each with the
// cache opened from its file and closed, so that what one run appends is
// what the next reads: with nothing changed a run reads no directory and
// no manifest, and after an edit the report is the one without a cache.
func TestOnDiskCache(t *testing.T) {
	defer func(old func() time.Time) { clock = old }(clock)
	clock = func() time.Time { return time.Now().Add(time.Hour) }
	defer func(old func(string) bool) { trustStats = old }(trustStats)
	trustStats = func(string) bool { return true }
	dir := filepath.Join(t.TempDir(), "src")
	if err := sourcegen.Write(dir, 12, 0); err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(t.TempDir(), "dalo")
	run := func() string {
		c := cache.Open(cacheDir, "validate", "test build", dir)
		defer c.Close()
		return reportJSON(t, dir, Options{Cache: c})
	}
	want := reportJSON(t, dir, Options{})
	if run() != want {
		t.Fatal("the first run's report differs")
	}
	before, manifests := dirsRead.Load(), manifestsRead.Load()
	if run() != want {
		t.Error("the report of a run with nothing changed differs")
	}
	if d, m := dirsRead.Load()-before, manifestsRead.Load()-manifests; d != 0 || m != 0 {
		t.Errorf("nothing changed, and %d directories and %d manifests were read", d, m)
	}
	f := filepath.Join(dir, "plugins/pkg-0003/PLUGIN.toml")
	b, _ := os.ReadFile(f)
	if err := os.WriteFile(f, bytes.Replace(b, []byte("schema_version = 1"), []byte("schema_version = 2"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if got, want := run(), reportJSON(t, dir, Options{}); got != want {
			t.Errorf("run %d after the edit: the report through the cache differs", i+1)
		}
	}
}

// TestStatKeyFields: a listing or a manifest's digest kept in the cache is
// used only for a stat equal in each field of its key. On a local file
// system the change time alone moves with every change; on others, and
// for a stat that names another file, each field counts: a test passes the
// stat in, with one field changed at a time.
func TestStatKeyFields(t *testing.T) {
	defer func(old func() time.Time) { clock = old }(clock)
	clock = func() time.Time { return time.Now().Add(time.Hour) }
	dir := t.TempDir()
	manifest := filepath.Join(dir, "PLUGIN.toml")
	if err := os.WriteFile(manifest, []byte("schema_version = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &memCache{m: map[string][]byte{}}
	dst, mst := readThrough(t, c, dir, manifest)
	if c.puts != 2 {
		t.Fatalf("%d entries put, want the listing and the digest", c.puts)
	}
	for _, f := range []struct {
		name   string
		change func(st *unix.Stat_t)
	}{
		{"device", func(st *unix.Stat_t) { st.Dev++ }},
		{"inode", func(st *unix.Stat_t) { st.Ino++ }},
		{"size", func(st *unix.Stat_t) { st.Size++ }},
		{"mtime", func(st *unix.Stat_t) { st.Mtim.Nsec = (st.Mtim.Nsec + 1) % 1e9 }},
		{"ctime", func(st *unix.Stat_t) { st.Ctim.Nsec = (st.Ctim.Nsec + 1) % 1e9 }},
	} {
		// The stat is not the file's now: without the cache the read
		// notices; with an entry kept under another stat, none may be
		// used.
		d, m := dst, mst
		f.change(&d)
		f.change(&m)
		if names, ok := listing(dir, &d, c); ok {
			t.Errorf("%s changed: the listing %q kept for the old stat was used", f.name, names)
		}
		var buf []byte
		if _, _, ok := manifestDigest(manifest, &m, 1<<20, c, &buf); ok {
			t.Errorf("%s changed: the digest kept for the old stat was used", f.name)
		}
	}
}

// readThrough reads the listing of dir and the digest of manifest through
// c, and returns their stats.
func readThrough(t *testing.T, c Cache, dir, manifest string) (dst, mst unix.Stat_t) {
	t.Helper()
	if unix.Lstat(dir, &dst) != nil || unix.Lstat(manifest, &mst) != nil {
		t.Fatal("lstat")
	}
	if _, ok := listing(dir, &dst, c); !ok {
		t.Fatal("listing: not read")
	}
	var buf []byte
	if _, _, ok := manifestDigest(manifest, &mst, 1<<20, c, &buf); !ok {
		t.Fatal("manifestDigest: not read")
	}
	return dst, mst
}

// TestBackdatedNotKept: a directory or manifest whose modification time
// was set back (touch -d, tar, rsync -t) changed recently all the same,
// as its change time says: what was read of it is not kept.
func TestBackdatedNotKept(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "PLUGIN.toml")
	if err := os.WriteFile(manifest, []byte("schema_version = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{manifest, dir} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	c := &memCache{m: map[string][]byte{}}
	readThrough(t, c, dir, manifest)
	if c.puts != 0 {
		t.Errorf("%d entries kept of a directory and a manifest changed just now with old modification times", c.puts)
	}
}

// TestAppendStatFields: what a package's key holds of each entry of its
// tree (name, type and permissions, size, owner and group) each changes
// the key.
func TestAppendStatFields(t *testing.T) {
	base := unix.Stat_t{Mode: unix.S_IFREG | 0o644, Size: 10, Uid: 1000, Gid: 1000}
	want := string(appendStat(nil, "./a", &base))
	for _, f := range []struct {
		name   string
		change func(st *unix.Stat_t) string
	}{
		{"name", func(st *unix.Stat_t) string { return "./b" }},
		{"permissions", func(st *unix.Stat_t) string { st.Mode |= 0o100; return "./a" }},
		{"type", func(st *unix.Stat_t) string { st.Mode = unix.S_IFLNK | 0o644; return "./a" }},
		{"size", func(st *unix.Stat_t) string { st.Size++; return "./a" }},
		{"owner", func(st *unix.Stat_t) string { st.Uid++; return "./a" }},
		{"group", func(st *unix.Stat_t) string { st.Gid++; return "./a" }},
	} {
		st := base
		name := f.change(&st)
		if string(appendStat(nil, name, &st)) == want {
			t.Errorf("%s changed, and the key did not", f.name)
		}
	}
}

// TestPackageKeyUser: a package's answer is kept for the user who checked
// it (whose permissions the check read with): another user's run checks
// every package afresh.
func TestPackageKeyUser(t *testing.T) {
	defer func(old func() time.Time) { clock = old }(clock)
	clock = func() time.Time { return time.Now().Add(time.Hour) }
	defer func(old func(string) bool) { trustStats = old }(trustStats)
	trustStats = func(string) bool { return true }
	defer func(old func() string) { user = old }(user)
	dir := filepath.Join(t.TempDir(), "src")
	if err := sourcegen.Write(dir, 3, 0); err != nil {
		t.Fatal(err)
	}
	c := &memCache{m: map[string][]byte{}}
	user = func() string { return "1000 1000 [1000]" }
	reportJSON(t, dir, Options{Cache: c})
	// Another user, the same listings and digests (kept as if for
	// them): only the package keys tell the users apart.
	for k, v := range c.m {
		if strings.HasPrefix(k, listingKeyVersion+"\x00") || strings.HasPrefix(k, digestKeyVersion+"\x00") {
			c.m[strings.Replace(k, "\x001000 1000 [1000]\x00", "\x001001 1001 [1001]\x00", 1)] = v
		}
	}
	user = func() string { return "1001 1001 [1001]" }
	hits := &keyHits{memCache: c}
	reportJSON(t, dir, Options{Cache: hits})
	if hits.checks != 0 {
		t.Errorf("another user's run restored %d answers of checks the first user's run kept", hits.checks)
	}
}

// keyHits counts the hits on keys of checks (sha256 sums), not of
// listings or digests.
type keyHits struct {
	*memCache
	checks int
}

func (c *keyHits) Get(key []byte) []byte {
	d := c.memCache.Get(key)
	if d != nil && len(key) == 32 {
		c.checks++
	}
	return d
}

// TestInstructionChecksCached: an instruction's check is kept with the
// stat of the file it read. A run with every answer cached reads no
// instruction; after one is edited, the next run reads that one only and
// reports what a run without a cache reports. A file changed too recently
// to trust its stat (settled) is read again each run.
func TestInstructionChecksCached(t *testing.T) {
	defer func(old func() time.Time) { clock = old }(clock)
	clock = func() time.Time { return time.Now().Add(time.Hour) }
	dir := filepath.Join(t.TempDir(), "src")
	if err := sourcegen.WriteDocs(dir, 3); err != nil {
		t.Fatal(err)
	}
	const instructions = 3 * 4
	c := &memCache{m: map[string][]byte{}}
	run := func() (string, int64) {
		before := instructionsRead.Load()
		got := reportJSON(t, dir, Options{Cache: c})
		return got, instructionsRead.Load() - before
	}
	want := reportJSON(t, dir, Options{})
	for i, reads := range []int64{instructions, 0} {
		got, n := run()
		if n != reads {
			t.Errorf("run %d read %d instructions, want %d", i+1, n, reads)
		}
		if got != want {
			t.Errorf("run %d through the cache:\n%s\nwithout:\n%s", i+1, got, want)
		}
	}
	f := filepath.Join(dir, "instructions", "doc-0001-guide-2.md")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, append(b, "a NUL \x00 byte\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	want = reportJSON(t, dir, Options{})
	if !strings.Contains(want, "E091 NUL byte") {
		t.Fatalf("no E091 for an instruction holding NUL: %s", want)
	}
	for i, reads := range []int64{1, 0} {
		got, n := run()
		if n != reads {
			t.Errorf("after the edit, run %d read %d instructions, want %d", i+1, n, reads)
		}
		if got != want {
			t.Errorf("after the edit, run %d through the cache:\n%s\nwithout:\n%s", i+1, got, want)
		}
	}
	// A file written while its check runs is not kept: the next run reads
	// it again and reports what it holds now.
	c = &memCache{m: map[string][]byte{}}
	seam := "instructions/doc-0002-guide-0.md"
	defer func(old func(string, string)) { checkSeam = old }(checkSeam)
	checkSeam = func(phase, rel string) {
		if phase != "check" || rel != seam {
			return
		}
		f, err := os.OpenFile(filepath.Join(dir, seam), os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString("\xff\n")
			f.Close()
		}
		if err != nil {
			t.Error(err)
		}
	}
	run()
	checkSeam = func(string, string) {}
	want = reportJSON(t, dir, Options{})
	if got, n := run(); n != 1 || got != want {
		t.Errorf("after a write during its check, the run read %d instructions (want 1) and reported:\n%s\nwithout a cache:\n%s", n, got, want)
	}
	clock = time.Now
	c = &memCache{m: map[string][]byte{}}
	for i := range 2 {
		if _, n := run(); n != instructions {
			t.Errorf("files just written, run %d read %d instructions, want %d", i+1, n, instructions)
		}
	}
}
