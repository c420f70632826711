package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dalo/bench/sourcegen"
)

// TestCacheKeysWhatWasRead swaps a file an answer depends on between two
// contents of the same size after each of the first two reads validation
// makes of it (B is read, then A is there, then B again), as a user
// saving twice, or another process, may while a run goes on. Whatever the
// run answered, the cache must hold no answer for bytes it was not
// computed from: a later run, with the file as B, reports what a run
// without the cache does. The swap is made through afterRead, between the
// reads, not by timing.
func TestCacheKeysWhatWasRead(t *testing.T) {
	defer func(old func() time.Time) { clock = old }(clock)
	clock = func() time.Time { return time.Now().Add(time.Hour) }
	for _, tc := range []struct {
		name, file, valid, invalid string
	}{
		// A skill's or agent's check is never kept: each run checks
		// them afresh.
		{"manifest", "plugins/pkg-0000/PLUGIN.toml", `schema_version = 1`, `schema_version = 7`},
	} {
		for _, trusted := range []bool{true, false} {
			name := tc.name
			if !trusted {
				name += "/stats untrusted"
			}
			t.Run(name, func(t *testing.T) {
				defer func(old func(string) bool) { trustStats = old }(trustStats)
				trustStats = func(string) bool { return trusted }
				dir := filepath.Join(t.TempDir(), "src")
				if err := sourcegen.Write(dir, 1, 0); err != nil {
					t.Fatal(err)
				}
				f := filepath.Join(dir, filepath.FromSlash(tc.file))
				a, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(a, []byte(tc.valid)) {
					t.Fatalf("%s holds no %q", tc.file, tc.valid)
				}
				b := bytes.Replace(a, []byte(tc.valid), []byte(tc.invalid), 1)
				write := func(data []byte) {
					if err := os.WriteFile(f, data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				write(b)
				want := reportJSON(t, dir, Options{})
				write(a)
				if reportJSON(t, dir, Options{}) == want {
					t.Fatalf("%s: the two contents give the same report", tc.file)
				}
				write(b)
				c := &memCache{m: map[string][]byte{}}
				reads := 0
				defer func(old func(string)) { afterRead = old }(afterRead)
				afterRead = func(name string) {
					if name != f {
						return
					}
					switch reads++; reads {
					case 1:
						write(a)
					case 2:
						write(b)
					}
				}
				reportJSON(t, dir, Options{Cache: c})
				afterRead = func(string) {}
				write(b)
				if got := reportJSON(t, dir, Options{Cache: c}); got != want {
					t.Errorf("%s swapped B, A, B during a run (%d reads): the next run through the cache reports\n%s\nwithout the cache\n%s", tc.file, reads, got, want)
				}
			})
		}
	}
}

// TestCacheStatsDuringCheck puts a symlink into a package's directory
// while it is checked and removes it before the walk that follows the
// check (through checkSeam): the tree after the check is the tree of the
// key, and the answer, which warns of the symlink, must not be kept under
// it.
func TestCacheStatsDuringCheck(t *testing.T) {
	defer func(old func() time.Time) { clock = old }(clock)
	clock = func() time.Time { return time.Now().Add(time.Hour) }
	for _, tc := range []struct{ seam, dir string }{
		{"plugins/pkg-0000", "plugins/pkg-0000"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "src")
			if err := sourcegen.Write(dir, 1, 0); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(dir, filepath.FromSlash(tc.dir), "link")
			want := reportJSON(t, dir, Options{})
			c := &memCache{m: map[string][]byte{}}
			changed := 0
			defer func(old func(string, string)) { checkSeam = old }(checkSeam)
			checkSeam = func(phase, d string) {
				if d != tc.seam {
					return
				}
				var err error
				if phase == "check" {
					err = os.Symlink("elsewhere", link)
				} else {
					err = os.Remove(link)
				}
				if err != nil {
					t.Fatal(err)
				}
				changed++
			}
			if got := reportJSON(t, dir, Options{Cache: c}); !strings.Contains(got, "W064") {
				t.Fatalf("the run with the symlink during its check did not see it: %s", got)
			}
			checkSeam = func(string, string) {}
			if changed != 2 {
				t.Fatalf("the seam changed the directory %d times, want 2", changed)
			}
			if got := reportJSON(t, dir, Options{Cache: c}); got != want {
				t.Errorf("a symlink in %s during the check: the next run through the cache reports\n%s\nwithout the cache\n%s", tc.dir, got, want)
			}
		})
	}
}
