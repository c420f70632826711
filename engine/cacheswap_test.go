package engine

import (
	"bytes"
	"os"
	"path/filepath"
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
		{"manifest", "plugins/pkg-0000/PLUGIN.toml", `schema_version = 1`, `schema_version = 7`},
		{"skill", "skills/skill-0/SKILL.md", "name: skill-0\n", "name: skill-9\n"},
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
