package gitrepo

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// objectFiles lists the files under r's objects directory: what a fetch
// left there.
func objectFiles(t *testing.T, r *Repo) []string {
	t.Helper()
	var files []string
	filepath.WalkDir(filepath.Join(r.Dir, "objects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, strings.TrimPrefix(p, r.Dir))
		}
		return nil
	})
	return files
}

// has reports whether r holds the object rev names.
func has(r *Repo, rev string) bool {
	return exec.Command("git", "--git-dir="+r.Dir, "cat-file", "-e", rev).Run() == nil
}

// TestFetchShallow: a shallow clone as the upstream is named as such; it
// once failed as "no such commit".
func TestFetchShallow(t *testing.T) {
	up, _ := upstream(t)
	mustGit(t, up, "commit", "-q", "--allow-empty", "-m", "v2")
	shallow := filepath.Join(t.TempDir(), "shallow.git")
	mustGit(t, "", "clone", "-q", "--bare", "--depth", "1", "file://"+up, shallow)
	r := newRepo(t)
	u, _, _ := ParseURL("file://" + shallow)
	if _, err := r.FetchRef(context.Background(), u, "main"); !errors.Is(err, ErrShallow) {
		t.Errorf("FetchRef from a shallow clone: %v, want ErrShallow", err)
	}
	if err := r.FetchAll(context.Background(), u); !errors.Is(err, ErrShallow) {
		t.Errorf("FetchAll from a shallow clone: %v, want ErrShallow", err)
	}
}

// TestFetchBytes: a fetch larger than FetchBytes is refused and leaves
// the repository as it was; under it, it is fetched.
func TestFetchBytes(t *testing.T) {
	up, _ := upstream(t)
	r, first := fetchInto(t, up)
	big := make([]byte, 256<<10) // random: it does not compress
	rand.Read(big)
	write(t, filepath.Join(up, "plugins/kit/noise.bin"), string(big), 0o644)
	mustGit(t, up, "add", "-A")
	mustGit(t, up, "commit", "-q", "-m", "noise")
	u, _, _ := ParseURL("file://" + up)
	before := objectFiles(t, r)
	r.FetchBytes = 64 << 10
	_, err := r.FetchRef(context.Background(), u, "main")
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 64<<10 {
		t.Fatalf("a fetch of 256 KiB with a bound of 64 KiB: %v, want a TooLargeError", err)
	}
	if after := objectFiles(t, r); !slices.Equal(after, before) {
		t.Errorf("the refused fetch left objects: %q, before %q", after, before)
	}
	if c, _, err := r.Commit(context.Background(), fetched); err != nil || c != first {
		t.Errorf("after the refused fetch, %s is %s (%v), want %s", fetched, c, err, first)
	}
	r.FetchBytes = 1 << 20
	if c, err := r.FetchRef(context.Background(), u, "main"); err != nil || c == first {
		t.Errorf("a fetch under the bound: %s, %v", c, err)
	}
}

// TestKeep: the repository keeps what the pin and the previous pin reach,
// and collects the rest a fetch brought: another branch's objects, and a
// commit two force-pushes back.
func TestKeep(t *testing.T) {
	up, _ := upstream(t)
	r, first := fetchInto(t, up)
	ctx := context.Background()
	u, _, _ := ParseURL("file://" + up)
	mustGit(t, up, "checkout", "-q", "-b", "other")
	write(t, filepath.Join(up, "plugins/kit/other.txt"), "only on another branch\n", 0o644)
	mustGit(t, up, "add", "-A")
	mustGit(t, up, "commit", "-q", "-m", "other")
	other := mustGit(t, up, "rev-parse", "HEAD")
	otherBlob := mustGit(t, up, "rev-parse", "HEAD:plugins/kit/other.txt")
	mustGit(t, up, "checkout", "-q", "main")
	if err := r.FetchAll(ctx, u); err != nil {
		t.Fatal(err)
	}
	if !has(r, other) {
		t.Fatal("FetchAll did not fetch the other branch")
	}
	if err := r.Keep(ctx, first, ""); err != nil {
		t.Fatal(err)
	}
	if has(r, other) || has(r, otherBlob) {
		t.Error("Keep left the other branch's commit or blob")
	}
	if !has(r, first) {
		t.Error("Keep collected the pin")
	}
	// Two force-pushes: the pin before the last stays, the one before it goes.
	amend := func(msg string) string {
		mustGit(t, up, "commit", "-q", "--amend", "--allow-empty", "-m", msg)
		c, err := r.FetchRef(ctx, u, "main")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	second := amend("rewritten once")
	if err := r.Keep(ctx, second, first); err != nil {
		t.Fatal(err)
	}
	third := amend("rewritten twice")
	if err := r.Keep(ctx, third, second); err != nil {
		t.Fatal(err)
	}
	if !has(r, third) || !has(r, second) || has(r, first) {
		t.Errorf("after two force-pushes: pin %t, previous %t, the one before %t; want true, true, false", has(r, third), has(r, second), has(r, first))
	}
	refs := mustGit(t, "", "--git-dir="+r.Dir, "for-each-ref", "--format=%(refname)")
	if refs != "refs/dalo/pin\nrefs/dalo/previous" {
		t.Errorf("refs after Keep: %q", refs)
	}
	// A Keep without a previous pin leaves the one kept before.
	if err := r.Keep(ctx, third, ""); err != nil || !has(r, second) {
		t.Errorf("Keep(pin, \"\") dropped the previous pin (%v)", err)
	}
}
