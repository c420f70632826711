package store

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitIn runs git in dir with a fixed identity and no user configuration.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	home := t.TempDir()
	c.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@example.com")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// repoFiles lists the files of a git source's repository.
func repoFiles(t *testing.T, s *Store, id string) []string {
	t.Helper()
	var files []string
	root := repoDir(s.sourceDir(id))
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, strings.TrimPrefix(p, root))
		}
		return nil
	})
	return files
}

// TestUpdateSourceFetchBounded: an update whose fetch is over the bound is
// refused and changes nothing, the pin or the repository; one under it
// moves the pin, and the repository keeps one pack of what the pins
// reach.
func TestUpdateSourceFetchBounded(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	os.MkdirAll(filepath.Join(work, "plugins/kit"), 0o755)
	os.WriteFile(filepath.Join(work, "plugins/kit/PLUGIN.toml"), []byte("schema_version = 1\n\n[plugin]\nname = \"kit\"\ndescription = \"A kit.\"\n"), 0o644)
	gitIn(t, dir, "init", "-q", "-b", "main", "work")
	gitIn(t, work, "add", "-A")
	gitIn(t, work, "commit", "-q", "-m", "v1")
	s, err := Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := s.AddSource("team", "file://"+work, "main")
	if err != nil {
		t.Fatal(err)
	}
	noise := make([]byte, 256<<10)
	rand.Read(noise)
	os.WriteFile(filepath.Join(work, "plugins/kit/noise.bin"), noise, 0o644)
	gitIn(t, work, "add", "-A")
	gitIn(t, work, "commit", "-q", "-m", "v2")
	before := repoFiles(t, s, "team")
	defer func(old int64) { fetchBytes = old }(fetchBytes)
	fetchBytes = 64 << 10
	if _, err := s.UpdateSource("team", ""); err == nil || !strings.Contains(err.Error(), "the fetch is larger than 65536 bytes") {
		t.Fatalf("an update over the bound: %v", err)
	}
	if now, err := s.LookupSource("team"); err != nil || *now.Git != *src.Git {
		t.Errorf("the refused update moved the pin: %+v, %v", now.Git, err)
	}
	if after := repoFiles(t, s, "team"); !slices.Equal(after, before) {
		t.Errorf("the refused update changed the repository:\n%q\nbefore\n%q", after, before)
	}
	fetchBytes = 1 << 20
	up, err := s.UpdateSource("team", "")
	if err != nil || up.Source.Git.Commit == src.Git.Commit {
		t.Fatalf("an update under the bound: %v", err)
	}
	var packs []string
	for _, f := range repoFiles(t, s, "team") {
		if strings.HasSuffix(f, ".pack") {
			packs = append(packs, f)
		}
	}
	if len(packs) != 1 {
		t.Errorf("after the update the repository holds packs %q; want one, collected", packs)
	}
}

// TestUpdateSourceToFetched: --to a commit the source's repository does
// not hold yet (upstream moved since it was added) fetches it and moves
// the pin there. The error of the first lookup once outlived the fetch
// that found the commit, and the update failed with "no such commit".
func TestUpdateSourceToFetched(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	os.MkdirAll(filepath.Join(work, "plugins/kit"), 0o755)
	manifest := filepath.Join(work, "plugins/kit/PLUGIN.toml")
	os.WriteFile(manifest, []byte("schema_version = 1\n\n[plugin]\nname = \"kit\"\ndescription = \"A kit.\"\n"), 0o644)
	gitIn(t, dir, "init", "-q", "-b", "main", "work")
	gitIn(t, work, "add", "-A")
	gitIn(t, work, "commit", "-q", "-m", "v1")
	s, err := Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSource("team", "file://"+work, "main"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(manifest, []byte("schema_version = 1\n\n[plugin]\nname = \"kit\"\ndescription = \"A kit, v2.\"\n"), 0o644)
	gitIn(t, work, "commit", "-q", "-am", "v2")
	v2 := gitIn(t, work, "rev-parse", "HEAD")
	up, err := s.UpdateSource("team", v2)
	if err != nil {
		t.Fatalf("UpdateSource --to %s: %v", v2, err)
	}
	if up.Source.Git.Commit != v2 {
		t.Errorf("pinned at %s, want %s", up.Source.Git.Commit, v2)
	}
}
