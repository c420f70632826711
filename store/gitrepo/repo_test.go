package gitrepo

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitEnv makes the test's own git runs independent of the machine's
// configuration, and deterministic.
func gitEnv(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
		"GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
	} {
		t.Setenv(k, v)
	}
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, name, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

// upstream makes a repository with a package, a skill, files beside
// them, a symlink, a submodule, a large file and a filter its
// .gitattributes asks for, and returns it with its commit.
func upstream(t *testing.T) (dir, commit string) {
	t.Helper()
	gitEnv(t)
	dir = filepath.Join(t.TempDir(), "up")
	mustGit(t, "", "init", "-q", "-b", "main", dir)
	write(t, filepath.Join(dir, "plugins/kit/PLUGIN.toml"), "schema_version = 1\n", 0o644)
	write(t, filepath.Join(dir, "plugins/kit/tool.sh"), "#!/bin/sh\necho hi\n", 0o755)
	write(t, filepath.Join(dir, "plugins/kit/big.bin"), strings.Repeat("x", 100), 0o644)
	write(t, filepath.Join(dir, "skills/review/SKILL.md"), "---\nname: review\n---\n", 0o644)
	write(t, filepath.Join(dir, "README.md"), "not a package file\n", 0o644)
	write(t, filepath.Join(dir, "docs/x.md"), "docs\n", 0o644)
	// A filter that would run on checkout: dalo never checks out.
	write(t, filepath.Join(dir, ".gitattributes"), "* filter=evil\n", 0o644)
	mustGit(t, dir, "config", "filter.evil.smudge", "touch "+filepath.Join(dir, "SMUDGED")+"; cat")
	if err := os.Symlink("../../README.md", filepath.Join(dir, "plugins/kit/link")); err != nil {
		t.Fatal(err)
	}
	mustGit(t, dir, "add", "-A")
	// A submodule entry, as git records one: a commit in the tree.
	mustGit(t, dir, "update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,plugins/kit/vendored")
	mustGit(t, dir, "commit", "-q", "-m", "v1")
	return dir, mustGit(t, dir, "rev-parse", "HEAD")
}

// newRepo makes an empty bare repository, as the store keeps one.
func newRepo(t *testing.T) *Repo {
	t.Helper()
	g, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	r, err := g.Init(context.Background(), filepath.Join(t.TempDir(), "repo.git"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func fetchInto(t *testing.T, up string) (*Repo, string) {
	t.Helper()
	r := newRepo(t)
	u, ok, err := ParseURL("file://" + up)
	if !ok || err != nil {
		t.Fatalf("ParseURL: %v %v", ok, err)
	}
	c, err := r.FetchRef(context.Background(), u, "")
	if err != nil {
		t.Fatal(err)
	}
	return r, c
}

var testLimits = Limits{FileBytes: 64, Entries: 100, Bytes: 1 << 20}

func TestWriteTree(t *testing.T) {
	up, commit := upstream(t)
	r, got := fetchInto(t, up)
	if got != commit {
		t.Fatalf("fetched %s, want %s", got, commit)
	}
	dest := filepath.Join(t.TempDir(), "tree")
	os.Mkdir(dest, 0o700)
	if err := r.WriteTree(context.Background(), commit, []string{"plugins", "skills", "agents"}, dest, testLimits); err != nil {
		t.Fatal(err)
	}
	var paths []string
	filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dest, p)
		fi, _ := d.Info()
		paths = append(paths, rel+" "+fi.Mode().String())
		return nil
	})
	want := []string{
		". dr-xr-xr-x",
		"plugins dr-xr-xr-x",
		"plugins/kit dr-xr-xr-x",
		"plugins/kit/PLUGIN.toml -r--r--r--",
		"plugins/kit/big.bin -r--r--r--",
		"plugins/kit/link Lrwxrwxrwx",
		"plugins/kit/tool.sh -r-xr-xr-x",
		"skills dr-xr-xr-x",
		"skills/review dr-xr-xr-x",
		"skills/review/SKILL.md -r--r--r--",
	}
	if strings.Join(paths, "\n") != strings.Join(want, "\n") {
		t.Errorf("tree written:\n%s\nwant:\n%s", strings.Join(paths, "\n"), strings.Join(want, "\n"))
	}
	if data, _ := os.ReadFile(filepath.Join(dest, "plugins/kit/tool.sh")); string(data) != "#!/bin/sh\necho hi\n" {
		t.Errorf("tool.sh holds %q", data)
	}
	if target, _ := os.Readlink(filepath.Join(dest, "plugins/kit/link")); target != "../../README.md" {
		t.Errorf("link points to %q", target)
	}
	// Larger than the file limit: its size, and nothing of its bytes.
	if data, _ := os.ReadFile(filepath.Join(dest, "plugins/kit/big.bin")); len(data) != 100 || strings.Contains(string(data), "x") {
		t.Errorf("big.bin: %d bytes %q, want a hole of 100", len(data), data[:min(len(data), 8)])
	}
	if _, err := os.Stat(filepath.Join(up, "SMUDGED")); err == nil {
		t.Error("the smudge filter ran")
	}
}

// hostileTree makes a commit whose tree holds name under plugins/.
func hostileTree(t *testing.T, r *Repo, names ...string) string {
	t.Helper()
	c := exec.Command("git", "--git-dir="+r.Dir, "hash-object", "-w", "--stdin")
	c.Stdin = strings.NewReader("x\n")
	out, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	b := strings.TrimSpace(string(out))
	var lines string
	for _, n := range names {
		lines += "100644 blob " + b + "\t" + n + "\n"
	}
	mk := func(in string) string {
		c := exec.Command("git", "--git-dir="+r.Dir, "mktree")
		c.Stdin = strings.NewReader(in)
		out, err := c.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	inner := mk(lines)
	top := mk("040000 tree " + inner + "\tplugins\n")
	return mustGit(t, "", "--git-dir="+r.Dir, "commit-tree", top, "-m", "hostile")
}

func TestWriteTreeRefuses(t *testing.T) {
	up, _ := upstream(t)
	r, _ := fetchInto(t, up)
	for _, tc := range []struct {
		names []string
		lim   Limits
		err   string
	}{
		{[]string{".."}, testLimits, `path "plugins/..", which git would not check out`},
		{[]string{".git"}, testLimits, `inside a .git directory`},
		{[]string{".GIT"}, testLimits, `inside a .git directory`},
		{[]string{"a", "b", "c"}, Limits{FileBytes: 64, Entries: 3, Bytes: 1 << 20}, "more than 3 entries under plugins"},
		{[]string{"a", "b", "c"}, Limits{FileBytes: 64, Entries: 100, Bytes: 5}, "more than 5 bytes under plugins"},
	} {
		commit := hostileTree(t, r, tc.names...)
		dest := filepath.Join(t.TempDir(), "tree")
		os.Mkdir(dest, 0o700)
		err := r.WriteTree(context.Background(), commit, []string{"plugins"}, dest, tc.lim)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v: %v, want an error with %q", tc.names, err, tc.err)
		}
		if _, err := os.Lstat(filepath.Join(filepath.Dir(dest), "x")); err == nil {
			t.Errorf("%v: wrote outside dest", tc.names)
		}
	}
}

func TestFetchRefs(t *testing.T) {
	up, v1 := upstream(t)
	mustGit(t, up, "tag", "v1")
	write(t, filepath.Join(up, "plugins/kit/PLUGIN.toml"), "schema_version = 1\n# v2\n", 0o644)
	mustGit(t, up, "commit", "-q", "-am", "v2")
	v2 := mustGit(t, up, "rev-parse", "HEAD")
	mustGit(t, up, "branch", "old", v1)
	r, head := fetchInto(t, up)
	if head != v2 {
		t.Errorf("HEAD fetched %s, want %s", head, v2)
	}
	u, _, _ := ParseURL("file://" + up)
	ctx := context.Background()
	for ref, want := range map[string]string{"main": v2, "v1": v1, "old": v1, "refs/tags/v1": v1} {
		if got, err := r.FetchRef(ctx, u, ref); err != nil || got != want {
			t.Errorf("FetchRef(%s) = %s, %v; want %s", ref, got, err, want)
		}
	}
	_, err := r.FetchRef(ctx, u, "nosuch")
	if !IsMissingRef(err) {
		t.Errorf("FetchRef(nosuch): %v, want a missing ref", err)
	}
	if c, tree, err := r.Commit(ctx, v1[:7]); err != nil || c != v1 || len(tree) != 40 {
		t.Errorf("Commit(%s) = %s %s %v", v1[:7], c, tree, err)
	}
	if _, _, err := r.Commit(ctx, "0000000"); !errors.Is(err, ErrNoCommit) {
		t.Errorf("Commit(0000000): %v, want ErrNoCommit", err)
	}
	if ok, err := r.IsAncestor(ctx, v1, v2); !ok || err != nil {
		t.Errorf("IsAncestor(v1, v2) = %v, %v", ok, err)
	}
	if ok, err := r.IsAncestor(ctx, v2, v1); ok || err != nil {
		t.Errorf("IsAncestor(v2, v1) = %v, %v", ok, err)
	}
	// A variable that would point git at another repository is not
	// passed on: the fetch still goes into r.
	t.Setenv("GIT_DIR", t.TempDir())
	if got, err := r.FetchRef(ctx, u, "v1"); err != nil || got != v1 {
		t.Errorf("FetchRef with GIT_DIR set = %s, %v", got, err)
	}
}

// TestSSHBatchMode runs an ssh URL through the user's GIT_SSH_COMMAND, a
// stand-in that records how git started it, then serves the repository
// locally: dalo adds BatchMode and nothing replaces the user's command.
func TestSSHBatchMode(t *testing.T) {
	up, v1 := upstream(t)
	dir := t.TempDir()
	args := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "fake ssh")
	write(t, fake, "#!/bin/sh\nprintf '%s\\n' \"$@\" > '"+args+"'\nfor last; do :; done\nexec sh -c \"$last\"\n", 0o755)
	t.Setenv("GIT_SSH_COMMAND", "'"+fake+"' -o User=me")
	g, _ := Find()
	r, err := g.Init(context.Background(), filepath.Join(dir, "repo.git"))
	if err != nil {
		t.Fatal(err)
	}
	u, _, err := ParseURL("git@example.invalid:" + up)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.FetchRef(context.Background(), u, "main"); err != nil || got != v1 {
		t.Fatalf("FetchRef over ssh = %s, %v", got, err)
	}
	data, _ := os.ReadFile(args)
	got := strings.Fields(string(data))
	if strings.Join(got[:4], " ") != "-o User=me -o BatchMode=yes" || !strings.Contains(string(data), "git@example.invalid") {
		t.Errorf("the ssh command was started with:\n%s", data)
	}
}

func TestTimeout(t *testing.T) {
	up, _ := upstream(t)
	dir := t.TempDir()
	fake := filepath.Join(dir, "hang")
	write(t, fake, "#!/bin/sh\necho $$ > '"+filepath.Join(dir, "pid")+"'\nexec sleep 60\n", 0o755)
	t.Setenv("GIT_SSH_COMMAND", fake)
	defer func(d time.Duration) { Timeout = d }(Timeout)
	Timeout = time.Second
	g, _ := Find()
	r, err := g.Init(context.Background(), filepath.Join(dir, "repo.git"))
	if err != nil {
		t.Fatal(err)
	}
	u, _, _ := ParseURL("ssh://example.invalid" + up)
	start := time.Now()
	_, err = r.FetchRef(context.Background(), u, "main")
	if err == nil || !strings.Contains(err.Error(), "no answer within 1s") {
		t.Fatalf("FetchRef: %v, want a timeout", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the timeout took %v", d)
	}
	// The ssh command git started is gone with it (killed, then reaped
	// by whoever inherits it: give that a moment).
	pid, _ := os.ReadFile(filepath.Join(dir, "pid"))
	p := strings.TrimSpace(string(pid))
	if p == "" {
		t.Fatal("the ssh command never ran")
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		data, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil || strings.Contains(string(data), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ssh command %s still runs after the timeout: %s", p, data)
		}
	}
}

// TestCredentialsStayOffTheCommandLine checks what git is started with
// for a URL that carries credentials: they are in its environment, for
// the helper, and in none of its arguments, which any local user can
// read.
func TestCredentialsStayOffTheCommandLine(t *testing.T) {
	u, _, err := ParseURL("https://me:s3cret-pass@example.com/a.git")
	if err != nil {
		t.Fatal(err)
	}
	pre, env := credentials(u)
	c := (&run{g: &Git{Path: "git", ssh: "ssh"}, dir: "/r", pre: pre, op: "fetch", args: []string{"--", u.String()}, extra: env, url: u}).cmd(context.Background())
	if strings.Contains(strings.Join(c.Args, " "), "s3cret") || strings.Contains(strings.Join(c.Args, " "), "me@") {
		t.Errorf("git's arguments hold the credentials: %q", c.Args)
	}
	if !strings.Contains(strings.Join(c.Env, "\n"), "DALO_GIT_PASSWORD=s3cret-pass") {
		t.Errorf("the helper's environment lacks the password")
	}
	if got := u.redact("fatal: Authentication failed for me s3cret-pass"); strings.Contains(got, "s3cret") {
		t.Errorf("redact left the password: %s", got)
	}
}

// TestNoHooksOnFetch: the hooks a user's global core.hooksPath names (git
// runs reference-transaction on a fetch's ref updates) never run for
// dalo's git: a fetch runs no code from the configuration.
func TestNoHooksOnFetch(t *testing.T) {
	up, v1 := upstream(t)
	hooks := filepath.Join(t.TempDir(), "hooks")
	marker := filepath.Join(t.TempDir(), "ran")
	for _, h := range []string{"reference-transaction", "post-checkout", "post-merge"} {
		write(t, filepath.Join(hooks, h), "#!/bin/sh\necho "+h+" >> '"+marker+"'\n", 0o755)
	}
	write(t, filepath.Join(os.Getenv("HOME"), ".gitconfig"), "[core]\n\thooksPath = "+hooks+"\n", 0o644)
	// The hooks are ones git runs for this configuration.
	probe := filepath.Join(t.TempDir(), "probe")
	mustGit(t, "", "init", "-q", "--bare", probe)
	mustGit(t, probe, "fetch", "-q", up, "main:refs/heads/main")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the user's git ran no hook on its own fetch (%v): the test proves nothing", err)
	}
	os.Remove(marker)
	if _, got := fetchInto(t, up); got != v1 {
		t.Fatalf("fetched %s, want %s", got, v1)
	}
	if data, err := os.ReadFile(marker); err == nil {
		t.Errorf("dalo's fetch ran the user's hooks:\n%s", data)
	}
}

// TestNoRepositoryFromEnvironment: GIT_DIR in dalo's environment (a shell
// inside a repository, a harness started from a git hook) does not point
// the git dalo runs at that repository: its configuration, here an ssh
// command, is not read.
func TestNoRepositoryFromEnvironment(t *testing.T) {
	gitEnv(t)
	t.Setenv("GIT_SSH_COMMAND", "")
	t.Setenv("GIT_SSH", "")
	other := filepath.Join(t.TempDir(), "other.git")
	mustGit(t, "", "init", "-q", "--bare", other)
	mustGit(t, other, "config", "core.sshCommand", "/tmp/not-the-users-ssh")
	t.Setenv("GIT_DIR", other)
	g, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	if got := g.sshCommand(); got != "ssh -o BatchMode=yes" {
		t.Errorf("ssh command %q: read from the repository GIT_DIR names", got)
	}
}
