package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSourceGitTreeEscaped: the paths and symlink targets of a hostile
// repository's tree reach the errors of 'source add' and 'source update'
// escaped. A line break in a path shown raw would let the repository
// print a line of its own ("added source ...") after dalo's error, and a
// terminal control would act on the user's terminal.
func TestSourceGitTreeEscaped(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "work/plugins/kit"), 0o755)
	os.WriteFile(filepath.Join(dir, "work/plugins/kit/PLUGIN.toml"), []byte("schema_version = 1\n\n[plugin]\nname = \"kit\"\ndescription = \"A package.\"\n"), 0o644)
	git(t, dir, "init", "-q", "--bare", "-b", "main", "remote.git")
	git(t, dir, "init", "-q", "-b", "main", "work")
	git(t, dir, "-C", "work", "add", "-A")
	git(t, dir, "-C", "work", "commit", "-q", "-m", "v1")
	git(t, dir, "-C", "work", "push", "-q", "../remote.git", "main")
	url := "file://" + filepath.Join(dir, "remote.git")
	mustDalo(t, dir, "source", "add", "team", url)

	// hostile commits a symlink (or, with a name ending in /PLUGIN.toml,
	// a file) named name whose bytes are target's and pushes it.
	hostile := func(name, target string) {
		c := exec.Command("git", "hash-object", "-w", "--stdin")
		c.Dir = filepath.Join(dir, "work")
		c.Stdin = strings.NewReader(target)
		out, err := c.Output()
		if err != nil {
			t.Fatal(err)
		}
		mode := "120000"
		if strings.HasSuffix(name, "/PLUGIN.toml") {
			mode = "100644"
		}
		git(t, dir, "-C", "work", "update-index", "--add", "--cacheinfo", mode+","+strings.TrimSpace(string(out))+",plugins/"+name)
		git(t, dir, "-C", "work", "commit", "-q", "-m", "hostile")
		git(t, dir, "-C", "work", "push", "-q", "../remote.git", "main")
	}
	const forged = "added source evil: git@example.com:evil.git, main at commit 0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name, target string
		args         []string
		want         string // in the error, escaped
		ok           bool   // the command succeeds
	}{
		{"kit/x\n" + forged, "a\x00\n" + forged, []string{"source", "update", "team"},
			`plugins/kit/x\n` + forged + ` is a symlink to a\x00\n` + forged + `, which no file system holds`, false},
		{"kit/y\x1b[2K\r" + forged, strings.Repeat("z", 5000), []string{"source", "add", "evil", url},
			`plugins/kit/y\x1b[2K\r` + forged + ` is a symlink to a target of 5000 bytes`, false},
		// A package directory's name, which the store reads after git: an
		// invalid package, added, its name escaped.
		{"k\n" + forged + "/PLUGIN.toml", "schema_version = 1\n", []string{"source", "update", "team"}, `team:k\n` + forged + `: added (invalid`, true},
	} {
		hostile(tc.name, tc.target)
		out, err := dalo(t, dir, "", tc.args...)
		if (err == nil) != tc.ok {
			t.Fatalf("dalo %s: %v\n%s", strings.Join(tc.args, " "), err, out)
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("dalo %s said:\n%s\nwant in it: %s", strings.Join(tc.args, " "), out, tc.want)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "added source") || strings.ContainsAny(l, "\x1b\r\x00") {
				t.Errorf("dalo %s printed a line the repository wrote: %q", strings.Join(tc.args, " "), l)
			}
		}
		git(t, dir, "-C", "work", "reset", "-q", "--hard", "HEAD~1")
		git(t, dir, "-C", "work", "push", "-q", "-f", "../remote.git", "main")
	}
}
