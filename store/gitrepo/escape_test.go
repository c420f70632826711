package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteTreeErrorsEscaped: every error of WriteTree about a tree's
// entry shows its path and symlink target escaped: a hostile repository
// cannot put a line break or a terminal control on the user's terminal.
func TestWriteTreeErrorsEscaped(t *testing.T) {
	up, _ := upstream(t)
	r, _ := fetchInto(t, up)
	gitIn := func(stdin string, args ...string) string {
		c := exec.Command("git", append([]string{"--git-dir=" + r.Dir}, args...)...)
		c.Stdin = strings.NewReader(stdin)
		out, err := c.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	const evil = "x\n\x1b[2Kadded source evil\r\u202e"
	for _, tc := range []struct {
		mode, target string
		want         string
	}{
		{"120000", "a\x00" + evil, `plugins/x\n\x1b[2Kadded source evil\r\u202e is a symlink to a\x00x\n\x1b[2Kadded source evil\r\u202e, which no file system holds`},
		{"120000", strings.Repeat("z", maxLink+1), `plugins/x\n\x1b[2Kadded source evil\r\u202e is a symlink to a target of 4097 bytes`},
	} {
		blob := gitIn(tc.target, "hash-object", "-w", "--stdin")
		inner := gitIn(tc.mode+" blob "+blob+"\t"+evil+"\x00", "mktree", "-z")
		commit := gitIn("", "commit-tree", gitIn("040000 tree "+inner+"\tplugins\n", "mktree"), "-m", "hostile")
		dest := filepath.Join(t.TempDir(), "tree")
		os.Mkdir(dest, 0o700)
		err := r.WriteTree(context.Background(), commit, []string{"plugins"}, dest, testLimits)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %.20q: %v\nwant an error with %s", tc.mode, tc.target, err, tc.want)
			continue
		}
		if i := strings.IndexFunc(err.Error(), func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\u202e' }); i >= 0 {
			t.Errorf("the error holds %q raw: %q", err.Error()[i], err)
		}
	}
}
