package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"dalo/internal/termtext"
)

// Limits bound what WriteTree writes of a tree.
type Limits struct {
	// FileBytes: a file larger than this is written as a hole of its
	// size, never read out of git: a validator that reads the tree
	// refuses it by its size, as it would the file in a directory.
	FileBytes int64
	// Entries and Bytes bound the whole tree written: entries (files,
	// directories, symlinks) and the bytes read out of git.
	Entries int
	Bytes   int64
}

// maxLink bounds the target of a symlink, as the system's PATH_MAX does.
const maxLink = 4096

// An entry is one line of ls-tree.
type entry struct {
	mode, typ, oid string
	size           int64 // -1 for a tree or a submodule
	path           string
}

// WriteTree writes the entries of commit under the top-level directories
// dirs into dest, an empty directory: directories, regular files (mode
// 0444, or 0555 when git records them executable), symlinks as symlinks
// with their recorded target (a reader that follows none sees them for
// what they are). The bytes are the objects' own, read with cat-file: no
// checkout, so no smudge or text filter, attribute, or hook runs, and
// nothing outside dest is written. Submodules are left out. A path git
// itself would refuse to check out (an empty, "." or ".." component, a
// component named .git in any case) is an error, and so is a tree beyond
// lim. Every file and directory is synced, then made read-only; the
// caller renames dest into place.
func (r *Repo) WriteTree(ctx context.Context, commit string, dirs []string, dest string, lim Limits) error {
	if err := CheckCommit(commit); err != nil {
		return err
	}
	l := &lister{dirs: dirs, lim: lim}
	args := append([]string{"-r", "-t", "-l", "-z", commit, "--"}, dirs...)
	_, err := (&run{g: r.git, dir: r.Dir, op: "ls-tree", args: args, stdout: l}).do(ctx)
	if l.err != nil {
		return fmt.Errorf("commit %s: %w", commit, l.err)
	}
	if err != nil {
		return err
	}
	if err := l.flush(); err != nil {
		return fmt.Errorf("commit %s: %w", commit, err)
	}

	var made []string // directories, in the order made (parents first)
	var blobs []entry // what cat-file reads, in order
	for _, e := range l.entries {
		name := filepath.Join(dest, filepath.FromSlash(e.path))
		switch {
		case e.typ == "tree":
			if err := os.Mkdir(name, 0o700); err != nil {
				return fmt.Errorf("commit %s: %s: %w", commit, shown(e.path), escaped{err})
			}
			made = append(made, name)
		case e.typ == "commit":
			// A submodule: another repository, never fetched.
		case e.mode == "120000":
			if e.size > maxLink {
				return fmt.Errorf("commit %s: %s is a symlink to a target of %d bytes", commit, shown(e.path), e.size)
			}
			blobs = append(blobs, e)
		case e.size > lim.FileBytes:
			if err := writeHole(name, e.size, executable(e.mode)); err != nil {
				return fmt.Errorf("commit %s: %s: %w", commit, shown(e.path), escaped{err})
			}
		default:
			blobs = append(blobs, e)
		}
	}
	if err := r.catBlobs(ctx, dest, blobs); err != nil {
		return fmt.Errorf("commit %s: %w", commit, err)
	}
	// Each directory synced once its entries are written, deepest first,
	// then made read-only: the tree is whole on disk before the caller
	// renames it into place.
	made = append([]string{dest}, made...)
	for i := len(made) - 1; i >= 0; i-- {
		if err := syncDir(made[i]); err != nil {
			return escaped{err}
		}
		if err := os.Chmod(made[i], 0o555); err != nil {
			return escaped{err}
		}
	}
	return nil
}

func executable(mode string) bool { return mode == "100755" }

// lister parses ls-tree -z -l output as git writes it, checking each
// entry as it comes: a hostile tree costs at most lim.Entries entries.
type lister struct {
	dirs    []string
	lim     Limits
	buf     []byte
	entries []entry
	trees   map[string]bool
	bytes   int64
	err     error
}

func (l *lister) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, 0)
		if i < 0 {
			break
		}
		if l.err = l.add(string(l.buf[:i])); l.err != nil {
			return 0, l.err
		}
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 2*maxLink+128 {
		l.err = errors.New("git ls-tree wrote a line longer than a path can be")
		return 0, l.err
	}
	return len(p), nil
}

func (l *lister) flush() error {
	if len(l.buf) > 0 {
		return fmt.Errorf("git ls-tree ended in the middle of an entry")
	}
	return nil
}

// add checks one entry: "<mode> <type> <oid> <size>\t<path>".
func (l *lister) add(line string) error {
	meta, p, ok := strings.Cut(line, "\t")
	f := strings.Fields(meta)
	if !ok || len(f) != 4 {
		return fmt.Errorf("git ls-tree wrote %q, not an entry", line)
	}
	e := entry{mode: f[0], typ: f[1], oid: f[2], size: -1, path: p}
	if !hexCommit.MatchString(e.oid) || len(e.oid) < 40 {
		return fmt.Errorf("git ls-tree wrote %q, not an object id", e.oid)
	}
	if err := checkPath(p); err != nil {
		return err
	}
	top, _, _ := strings.Cut(p, "/")
	if !slices.Contains(l.dirs, top) {
		return nil // a pathspec match beside the directories asked for
	}
	if dir := path.Dir(p); dir != "." && !l.trees[dir] {
		return fmt.Errorf("%s is listed before its directory", shown(p))
	}
	switch e.typ {
	case "tree":
		if l.trees == nil {
			l.trees = map[string]bool{}
		}
		l.trees[p] = true
	case "commit":
		return nil // a submodule: not written, not counted
	case "blob":
		n, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%s: git ls-tree gave size %q", shown(p), f[3])
		}
		e.size = n
		switch e.mode {
		case "100644", "100755", "100664", "120000":
		default:
			return fmt.Errorf("%s has mode %s, which git does not write", shown(p), termtext.Escape(e.mode))
		}
		if e.mode == "100664" {
			e.mode = "100644" // what git writes for it
		}
		if e.mode == "120000" || n <= l.lim.FileBytes {
			l.bytes += n
		}
	default:
		return fmt.Errorf("%s is a %s, which a tree does not hold", shown(p), termtext.Escape(e.typ))
	}
	if len(l.entries) >= l.lim.Entries {
		return fmt.Errorf("the tree holds more than %d entries under %s; dalo reads no more of a git source", l.lim.Entries, strings.Join(l.dirs, ", "))
	}
	if l.bytes > l.lim.Bytes {
		return fmt.Errorf("the tree holds more than %d bytes under %s; dalo reads no more of a git source", l.lim.Bytes, strings.Join(l.dirs, ", "))
	}
	l.entries = append(l.entries, e)
	return nil
}

// shown is a path or symlink target from a git tree as an error shows it.
// A tree's text is the repository's: a line break or a terminal control
// in it, shown raw, would let a hostile repository print a line of its
// own after dalo's ("added source ..."), so each is written as an escape
// (termtext). Everything from a tree that an error carries goes through
// it, or through escaped.
func shown(p string) string { return termtext.Escape(p) }

// escaped is an error of the system about a file of a tree, whose message
// repeats the file's path (or a symlink's target): shown escaped, and
// still matching what it wraps.
type escaped struct{ err error }

func (e escaped) Error() string { return termtext.Escape(e.err.Error()) }
func (e escaped) Unwrap() error { return e.err }

// checkPath refuses a path that git would not check out, or that would
// leave dest: an empty, "." or ".." component, or one named .git.
func checkPath(p string) error {
	for _, c := range strings.Split(p, "/") {
		switch {
		case c == "", c == ".", c == "..":
			return fmt.Errorf("the tree has a path %q, which git would not check out", p) // %q escapes
		case strings.EqualFold(c, ".git"):
			return fmt.Errorf("the tree has a path %q inside a .git directory, which git would not check out", p)
		}
	}
	return nil
}

// catBlobs writes blobs, read with one cat-file --batch, under dest.
func (r *Repo) catBlobs(ctx context.Context, dest string, blobs []entry) error {
	if len(blobs) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	c := (&run{g: r.git, dir: r.Dir, op: "cat-file", args: []string{"--batch"}}).cmd(ctx)
	in, err := c.StdinPipe()
	if err != nil {
		return err
	}
	out, err := c.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	c.Stderr = &limited{w: &stderr, n: 64 << 10}
	if err := c.Start(); err != nil {
		return &Error{Op: "cat-file", Status: -1, Stderr: err.Error()}
	}
	go func() {
		w := bufio.NewWriter(in)
		for _, b := range blobs {
			fmt.Fprintln(w, b.oid)
		}
		w.Flush()
		in.Close()
	}()
	rd := bufio.NewReader(out)
	werr := func() error {
		for _, b := range blobs {
			if err := readBlob(rd, dest, b); err != nil {
				return err
			}
		}
		return nil
	}()
	if werr != nil {
		c.Cancel()
	}
	err = c.Wait()
	if werr != nil {
		if msg := gitMessage(stderr.String()); msg != "" {
			return fmt.Errorf("%w (git cat-file: %s)", werr, msg)
		}
		return werr
	}
	if err != nil {
		return &Error{Op: "cat-file", Status: -1, Stderr: stderr.String() + err.Error()}
	}
	return nil
}

// readBlob reads one answer of cat-file --batch, "<oid> blob <size>\n"
// then the bytes then "\n", and writes it where b goes.
func readBlob(rd *bufio.Reader, dest string, b entry) error {
	head, err := rd.ReadString('\n')
	if err != nil {
		return fmt.Errorf("%s: reading its object: %w", shown(b.path), err)
	}
	f := strings.Fields(head)
	if len(f) != 3 || f[0] != b.oid || f[1] != "blob" || f[2] != strconv.FormatInt(b.size, 10) {
		return fmt.Errorf("%s: git cat-file answered %q for blob %s of %d bytes", shown(b.path), strings.TrimSpace(head), b.oid, b.size)
	}
	name := filepath.Join(dest, filepath.FromSlash(b.path))
	if b.mode == "120000" {
		target := make([]byte, b.size)
		if _, err := io.ReadFull(rd, target); err != nil {
			return fmt.Errorf("%s: reading its object: %w", shown(b.path), err)
		}
		if bytes.IndexByte(target, 0) >= 0 || len(target) == 0 {
			return fmt.Errorf("%s is a symlink to %s, which no file system holds", shown(b.path), shown(string(target)))
		}
		if err := os.Symlink(string(target), name); err != nil {
			return fmt.Errorf("%s: %w", shown(b.path), escaped{err})
		}
	} else if err := writeFrom(name, io.LimitReader(rd, b.size), b.size, executable(b.mode)); err != nil {
		return fmt.Errorf("%s: %w", shown(b.path), escaped{err})
	}
	if c, err := rd.ReadByte(); err != nil || c != '\n' {
		return fmt.Errorf("%s: git cat-file wrote more than the object's %d bytes", shown(b.path), b.size)
	}
	return nil
}

// writeFrom creates name, which must not exist, with the size bytes of r,
// synced, then read-only.
func writeFrom(name string, r io.Reader, size int64, exec bool) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, r)
	if err == nil && n != size {
		err = fmt.Errorf("read %d of its %d bytes", n, size)
	}
	return finish(f, err, exec)
}

// writeHole creates name with size bytes that are a hole, never read.
func writeHole(name string, size int64, exec bool) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	return finish(f, f.Truncate(size), exec)
}

func finish(f *os.File, err error, exec bool) error {
	mode := os.FileMode(0o444)
	if exec {
		mode = 0o555
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}
