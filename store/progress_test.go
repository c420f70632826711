package store

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// A git fetch is work that can take seconds: the store tells Progress of
// it as it starts and when it ends, on add and on update.
func TestProgressOfFetch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	writeTestFile(t, filepath.Join(work, "plugins/kit/PLUGIN.toml"), "schema_version = 1\n[plugin]\nname = \"kit\"\ndescription = \"d\"\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main", work}, {"-C", work, "add", "-A"}, {"-C", work, "commit", "-q", "-m", "v1"}} {
		c := exec.Command("git", args...)
		c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@example.com")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	s, err := Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	s.Progress = func(what string) func() {
		events = append(events, "start "+what)
		return func() { events = append(events, "done "+what) }
	}
	url := "file://" + work
	if _, err := s.AddSource("team", url, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSource("team", ""); err != nil {
		t.Fatal(err)
	}
	want := []string{"start fetching " + url, "done fetching " + url, "start fetching " + url, "done fetching " + url}
	if !slices.Equal(events, want) {
		t.Errorf("progress:\n%q\nwant\n%q", events, want)
	}
}

func writeTestFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
