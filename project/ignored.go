package project

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ErrNotIgnored is wrapped by CheckIgnored's error when git would commit
// the file: it is tracked, or no ignore rule covers it.
var ErrNotIgnored = errors.New("not ignored by git")

// ErrNoGit is wrapped by CheckIgnored's error when the project is not in
// a git work tree dalo could ask: git is not on PATH.
var ErrNoGit = errors.New("git is not on PATH")

// CheckIgnored says whether git keeps file, a file of the project at root
// each user keeps for themselves (a table's config.project hooks file, such
// as Claude Code's .claude/settings.local.json),
// out of the project's commits: nil when root is not in a git work tree, or
// git ignores file there (an ignore rule of the project, of this clone's
// .git/info/exclude or of the user's core.excludesFile) and does not track
// it. dalo's entries in such a file name a dispatcher in one user's store,
// a path of one machine: committed, they would run, or fail, on every
// teammate's machine. It asks the user's own git, with the user's own
// configuration, since their ignore rules are what decide.
func CheckIgnored(root, file string) error {
	rel, err := filepath.Rel(root, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is not a file of the project %s", file, root)
	}
	rel = filepath.ToSlash(rel)
	git, err := exec.LookPath("git")
	if err != nil {
		return fmt.Errorf("cannot tell whether %s is ignored: %w", rel, ErrNoGit)
	}
	run := func(args ...string) (status int, stderr string, err error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, git, append([]string{"-C", root}, args...)...)
		var errb strings.Builder
		cmd.Stderr = &errb
		err = cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), strings.TrimSpace(errb.String()), nil
		}
		if err != nil {
			return -1, "", fmt.Errorf("git %s in %s: %w", args[0], root, err)
		}
		return 0, "", nil
	}
	switch st, _, err := run("rev-parse", "--is-inside-work-tree"); {
	case err != nil:
		return err
	case st != 0:
		return nil // not a git work tree: nothing commits the file
	}
	// The file's path from the top of the work tree: what a pattern of
	// .git/info/exclude matches, when the project is a directory of it.
	top := rel
	if prefix, err := exec.Command(git, "-C", root, "rev-parse", "--show-prefix").Output(); err == nil {
		top = strings.TrimSpace(string(prefix)) + rel
	}
	notIgnored := &IgnoreError{Rel: rel, Root: root, fix: []string{
		fmt.Sprintf("for this clone only: echo '/%s' >> \"$(git rev-parse --git-path info/exclude)\"", top),
		fmt.Sprintf("for every teammate: add '/%s' to the project's .gitignore and commit it", rel),
	}}
	switch st, msg, err := run("ls-files", "--error-unmatch", "--", rel); {
	case err != nil:
		return err
	case st == 0:
		notIgnored.Tracked = true
		notIgnored.fix = append([]string{fmt.Sprintf("untrack it: git rm --cached '%s', and commit that", rel)}, notIgnored.fix...)
		return notIgnored
	case st != 1:
		return fmt.Errorf("git ls-files in %s: %s", root, msg)
	}
	switch st, msg, err := run("check-ignore", "-q", "--", rel); {
	case err != nil:
		return err
	case st == 1:
		return notIgnored
	case st != 0:
		return fmt.Errorf("git check-ignore in %s: %s", root, msg)
	}
	return nil
}

// An IgnoreError says git would commit a per-user file of the project: it
// is tracked, or no ignore rule covers it. It wraps ErrNotIgnored.
type IgnoreError struct {
	Rel, Root string // the file, slash-separated from Root, the project
	Tracked   bool
	fix       []string
}

// Error says what git would commit, and why it must not.
func (e *IgnoreError) Error() string {
	state := "is not ignored by git"
	if e.Tracked {
		state = "is tracked by git"
	}
	return fmt.Sprintf("%s %s in %s: dalo's entries there name a dispatcher in your store, a path of this machine, which must never be committed", e.Rel, state, e.Root)
}

// Unwrap is ErrNotIgnored.
func (e *IgnoreError) Unwrap() error { return ErrNotIgnored }

// Fix is what makes git keep the file out of the project's commits, a
// line each.
func (e *IgnoreError) Fix() []string { return e.fix }
