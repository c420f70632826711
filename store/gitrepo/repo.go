package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"dalo/internal/lazyregexp"
)

// A Repo is a bare repository dalo keeps in the store: objects fetched
// from one URL, never a work tree.
type Repo struct {
	git *Git
	Dir string
	// FetchBytes bounds what one fetch brings (its pack); 0 leaves it
	// unbounded. A fetch over it fails with a *TooLargeError and leaves
	// the repository as it was.
	FetchBytes int64
}

// A TooLargeError is a fetch refused for its size.
type TooLargeError struct{ Limit int64 }

// Error names the limit the fetch went over.
func (e *TooLargeError) Error() string {
	size := fmt.Sprintf("%d bytes", e.Limit)
	if e.Limit%(1<<20) == 0 {
		size = fmt.Sprintf("%d MiB", e.Limit>>20)
	}
	return "the fetch is larger than " + size + ", the most dalo fetches of a source at once; nothing of it was kept"
}

// ErrShallow is a fetch from a shallow clone: git does not fetch from one
// into a repository of whole histories, which dalo keeps (a commit it
// pins has every parent, and whether an update descends from the pin is
// a question of history).
var ErrShallow = errors.New("the repository fetched from is a shallow clone")

// Init creates the bare repository dir, without templates (a user's
// init.templateDir might hold hooks), and returns it.
func (g *Git) Init(ctx context.Context, dir string) (*Repo, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("repository %s: not an absolute path", dir)
	}
	r := &run{g: g, op: "init", args: []string{"--bare", "--quiet", "--template=", dir}}
	if _, err := r.do(ctx); err != nil {
		return nil, err
	}
	return &Repo{git: g, Dir: dir}, nil
}

// Open returns the bare repository at dir.
func (g *Git) Open(dir string) *Repo { return &Repo{git: g, Dir: dir} }

// fetched is where a fetch of one ref puts the commit it names.
const fetched = "refs/dalo/fetched"

var refName = lazyregexp.New(`^[A-Za-z0-9._/-]+$`)

// CheckRef checks that ref is a branch or tag name (main, v1.2,
// refs/tags/v1.2) or HEAD: git's ref name rules, narrowed to what cannot
// be read as an option, a refspec or a revision expression.
func CheckRef(ref string) error {
	bad := func(why string) error { return fmt.Errorf("ref %q: %s", ref, why) }
	switch {
	case ref == "":
		return bad("is empty")
	case strings.HasPrefix(ref, "-"):
		return bad("starts with '-'")
	case !refName.MatchString(ref):
		return bad("a ref is letters, digits, '.', '_', '-' and '/'")
	case strings.Contains(ref, ".."), strings.Contains(ref, "//"), strings.HasPrefix(ref, "/"), strings.HasSuffix(ref, "/"),
		strings.HasSuffix(ref, "."), strings.HasSuffix(ref, ".lock"), strings.Contains(ref, "/."), strings.HasPrefix(ref, "."):
		return bad("is not a valid ref name")
	}
	return nil
}

var hexCommit = lazyregexp.New(`^[0-9a-f]{4,64}$`)

// CheckCommit checks that c is a commit id, whole or abbreviated to at
// least 4 hexadecimal digits.
func CheckCommit(c string) error {
	if !hexCommit.MatchString(c) {
		return fmt.Errorf("commit %q: want a commit id, 4 to 64 lowercase hexadecimal digits", c)
	}
	return nil
}

// credentials are the -c options and environment that give git the
// credentials of u for one fetch: a helper that answers only "get", from
// its environment, after clearing the user's helpers, which would
// otherwise be asked to store them.
func credentials(u URL) (pre, env []string) {
	if !u.HasCredentials() {
		return nil, nil
	}
	helper := `!f() { test "$1" = get || exit 0; printf 'username=%s\npassword=%s\n' "$DALO_GIT_USERNAME" "$DALO_GIT_PASSWORD"; }; f`
	return []string{"-c", "credential.helper=", "-c", "credential.helper=" + helper},
		[]string{"DALO_GIT_USERNAME=" + u.user, "DALO_GIT_PASSWORD=" + u.pass}
}

// fetch fetches refspecs of u.
func (r *Repo) fetch(ctx context.Context, u URL, refspecs ...string) error {
	for _, v := range []string{u.user, u.pass} {
		if strings.ContainsAny(v, "\n\x00") {
			return fmt.Errorf("git URL %s: its credentials hold a line break", u)
		}
	}
	pre, env := credentials(u)
	// Every fetch is one pack, never loose objects (the unpack limit):
	// one file, which FetchBytes bounds.
	pre = append(pre, "-c", "transfer.unpackLimit=1")
	args := append([]string{"--quiet", "--no-tags", "--no-recurse-submodules", "--", u.String()}, refspecs...)
	var said string
	_, err := (&run{g: r.git, dir: r.Dir, pre: pre, op: "fetch", args: args, extra: env, url: u, fileBytes: r.FetchBytes, stderr: &said}).do(ctx)
	if err != nil {
		if biggest := r.dropTempPacks(); r.FetchBytes > 0 && biggest >= r.FetchBytes/512*512 {
			return &TooLargeError{Limit: r.FetchBytes}
		}
		return err
	}
	// git fetches from a shallow clone, then refuses to update a ref to
	// what it fetched, and says so only as a warning.
	if strings.Contains(said, "shallow roots are not allowed to be updated") {
		return ErrShallow
	}
	return nil
}

// dropTempPacks removes the packs a fetch that failed was writing, and
// returns the size of the largest.
func (r *Repo) dropTempPacks() int64 {
	var biggest int64
	tmps, _ := filepath.Glob(filepath.Join(r.Dir, "objects", "pack", "tmp_*"))
	for _, p := range tmps {
		if fi, err := os.Lstat(p); err == nil {
			biggest = max(biggest, fi.Size())
		}
		os.Remove(p)
	}
	return biggest
}

// FetchRef fetches ref of u (a branch or tag; "" is the remote's HEAD,
// its default branch) and returns the commit it names there now.
func (r *Repo) FetchRef(ctx context.Context, u URL, ref string) (string, error) {
	src := ref
	if src == "" {
		src = "HEAD"
	}
	if err := CheckRef(src); err != nil {
		return "", err
	}
	if err := r.fetch(ctx, u, "+"+src+":"+fetched); err != nil {
		return "", err
	}
	c, _, err := r.Commit(ctx, fetched)
	return c, err
}

// FetchAll fetches every branch and tag of u: what a commit named by id
// may be reached from.
func (r *Repo) FetchAll(ctx context.Context, u URL) error {
	return r.fetch(ctx, u, "+refs/heads/*:refs/dalo/heads/*", "+refs/tags/*:refs/dalo/tags/*")
}

// ErrNoCommit is wrapped by Commit's error when the repository has no
// such commit.
var ErrNoCommit = errors.New("no such commit")

// Commit resolves rev (a commit id, whole or abbreviated, or one of
// dalo's refs) to the commit and its tree.
func (r *Repo) Commit(ctx context.Context, rev string) (commit, tree string, err error) {
	if commit, err = r.verify(ctx, rev+"^{commit}"); err != nil {
		return "", "", err
	}
	if tree, err = r.verify(ctx, commit+"^{tree}"); err != nil {
		return "", "", err
	}
	return commit, tree, nil
}

// verify resolves rev to an object id.
func (r *Repo) verify(ctx context.Context, rev string) (string, error) {
	out, err := (&run{g: r.git, dir: r.Dir, op: "rev-parse", args: []string{"--verify", "--quiet", rev}}).do(ctx)
	var ge *Error
	if errors.As(err, &ge) && ge.Status == 1 {
		return "", fmt.Errorf("%s: %w", strings.TrimSuffix(rev, "^{commit}"), ErrNoCommit)
	}
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(out))
	if !hexCommit.MatchString(id) {
		return "", fmt.Errorf("git rev-parse %s: unexpected answer %q", rev, out)
	}
	return id, nil
}

// IsAncestor says whether commit a is an ancestor of commit b (or b).
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := (&run{g: r.git, dir: r.Dir, op: "merge-base", args: []string{"--is-ancestor", a, b}}).do(ctx)
	var ge *Error
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ge) && ge.Status == 1:
		return false, nil
	}
	return false, err
}

// The refs that hold what a source's repository keeps: the commit the
// registry pins, and the one pinned before it, to go back to after a
// force-push replaced it upstream.
const (
	pinRef      = "refs/dalo/pin"
	previousRef = "refs/dalo/previous"
)

// Keep makes pin, and previous unless it is "" (then the previous pin
// kept before stays), the only refs of the repository, and collects every
// object they do not reach: what fetches brought that no pin holds (other
// branches and tags, a commit a force-push replaced, a fetch whose update
// failed). A previous pin the repository does not hold is dropped. The
// caller holds the repository's lock: no other git is at work in it.
func (r *Repo) Keep(ctx context.Context, pin, previous string) error {
	var in strings.Builder
	fmt.Fprintf(&in, "update %s %s\n", pinRef, pin)
	switch _, _, err := r.Commit(ctx, previous); {
	case previous == "":
	case err == nil:
		fmt.Fprintf(&in, "update %s %s\n", previousRef, previous)
	case errors.Is(err, ErrNoCommit):
		fmt.Fprintf(&in, "delete %s\n", previousRef)
	default:
		return err
	}
	out, err := (&run{g: r.git, dir: r.Dir, op: "for-each-ref", args: []string{"--format=%(refname)"}}).do(ctx)
	if err != nil {
		return err
	}
	for _, ref := range strings.Fields(string(out)) {
		if ref != pinRef && ref != previousRef {
			fmt.Fprintf(&in, "delete %s\n", ref)
		}
	}
	if _, err := (&run{g: r.git, dir: r.Dir, op: "update-ref", args: []string{"--stdin"}, stdin: strings.NewReader(in.String())}).do(ctx); err != nil {
		return err
	}
	// A repository of one pack and no loose object holds nothing a fetch
	// added since the last collection: most updates change nothing.
	out, err = (&run{g: r.git, dir: r.Dir, op: "count-objects", args: []string{"-v"}}).do(ctx)
	if err != nil {
		return err
	}
	if counts := "\n" + string(out); !strings.Contains(counts, "\ncount: 0\n") || !strings.Contains(counts, "\npacks: 1\n") {
		_, err = (&run{g: r.git, dir: r.Dir, op: "gc", args: []string{"--prune=now", "--quiet"}}).do(ctx)
	}
	return err
}

// IsMissingRef says whether err is a fetch that found no such ref.
func IsMissingRef(err error) bool {
	var ge *Error
	return errors.As(err, &ge) && ge.Op == "fetch" && strings.Contains(ge.Stderr, "couldn't find remote ref")
}

// RemoveStaleLocks removes what a git killed half way leaves in the
// repository and would stop the next one: lock files of refs, of the
// packed refs, of the configuration and of shallow, and temporary packs.
// The caller holds the repository's lock, so no git is at work in it.
func (r *Repo) RemoveStaleLocks() error {
	for _, name := range []string{"packed-refs.lock", "config.lock", "shallow.lock", "HEAD.lock", "FETCH_HEAD.lock"} {
		if err := os.Remove(filepath.Join(r.Dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	err := filepath.WalkDir(filepath.Join(r.Dir, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".lock") {
			return os.Remove(p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	packs, _ := filepath.Glob(filepath.Join(r.Dir, "objects", "pack", "tmp_*"))
	for _, p := range packs {
		os.Remove(p)
	}
	return nil
}
