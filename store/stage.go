package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"dalo/internal/regular"
	"dalo/internal/termtext"
	"dalo/plan"
)

// hashFile reads a regular file without following a symlink and returns its
// digest. Validation has already bounded the package's files.
func hashFile(name string) (plan.FileDigest, error) {
	f, fi, err := regular.Open(name)
	if err != nil {
		return plan.FileDigest{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return plan.FileDigest{}, fmt.Errorf("reading %s: %w", name, err)
	}
	return plan.FileDigest{SHA256: hex.EncodeToString(h.Sum(nil)), Size: n, Executable: fi.Mode().Perm()&0o100 != 0}, nil
}

// sha256Hex is the sha256 of data, in hex.
func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// hashFiles digests the files rel (slash-separated, relative to root).
func hashFiles(root string, rel []string) (map[string]plan.FileDigest, error) {
	out := make(map[string]plan.FileDigest, len(rel))
	for _, r := range rel {
		d, err := hashFile(filepath.Join(root, filepath.FromSlash(r)))
		if err != nil {
			return nil, err
		}
		out[r] = d
	}
	return out, nil
}

// changedFiles lists the files whose digest differs between two listings,
// with what happened to each, sorted.
func changedFiles(approved, now map[string]plan.FileDigest) []string {
	var out []string
	for p, a := range approved {
		n, ok := now[p]
		p := termtext.Escape(p) // a line of its own in a refusal
		switch {
		case !ok:
			out = append(out, p+" (removed)")
		case n.SHA256 != a.SHA256:
			out = append(out, fmt.Sprintf("%s (sha256 %s, approved %s)", p, short(n.SHA256), short(a.SHA256)))
		case n.Executable != a.Executable:
			out = append(out, p+" (executable bit changed)")
		}
	}
	for p := range now {
		if _, ok := approved[p]; !ok {
			out = append(out, termtext.Escape(p)+" (added)")
		}
	}
	sort.Strings(out)
	return out
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// StagedDir is the staged directory of a tree digest.
func (s *Store) StagedDir(digest string) string { return s.path("staged", digest) }

// Stage copies the files of root that files lists into the read-only,
// content-addressed directory staged/<digest>/ and returns it. Each copy is
// checked against files as it is written, so what is staged is exactly
// what was approved even if the source changes meanwhile. The directory
// appears whole or not at all: it is built under a temporary name and
// renamed.
func (s *Store) Stage(root string, files map[string]plan.FileDigest) (string, error) {
	digest := plan.TreeDigest(files)
	final := s.StagedDir(digest)
	if _, err := os.Stat(final); err == nil {
		if bad := verifyStaged(final, files, true); len(bad) == 0 {
			return final, nil
		}
		// A staged tree was altered behind dalo's back (a file changed,
		// its mode, or one planted beside them): stage it again.
		if err := removeTree(final); err != nil {
			return "", fmt.Errorf("restaging %s: %w", final, err)
		}
	}
	if err := os.MkdirAll(s.path("staged"), 0o700); err != nil {
		return "", fmt.Errorf("staging: %w", err)
	}
	tmp, err := os.MkdirTemp(s.path("staged"), plan.TempMark)
	if err != nil {
		return "", fmt.Errorf("staging: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			removeTree(tmp)
		}
	}()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := copyChecked(filepath.Join(root, filepath.FromSlash(p)), filepath.Join(tmp, filepath.FromSlash(p)), files[p]); err != nil {
			return "", fmt.Errorf("staging %s: %w", p, err)
		}
	}
	// Directories read-only, deepest first, then the root.
	var dirs []string
	filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := plan.SyncDir(dirs[i]); err != nil {
			return "", err
		}
		if err := os.Chmod(dirs[i], 0o555); err != nil {
			return "", fmt.Errorf("staging: %w", err)
		}
	}
	step("install:staging-built")
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("staging %s: %w", final, err)
	}
	ok = true
	if err := plan.SyncDir(s.path("staged")); err != nil {
		return "", err
	}
	return final, nil
}

// openRegular opens name for reading if it is a regular file (see
// package regular), with errors that name it.
func openRegular(name string) (*os.File, error) {
	f, _, err := regular.Open(name)
	switch {
	case errors.Is(err, regular.ErrSymlink):
		return nil, fmt.Errorf("%s is a symlink, not a regular file", name)
	case err != nil:
		return nil, err
	}
	return f, nil
}

// readChecked reads the regular file name and fails unless its bytes have
// the digest want. It reads at most one byte more than want.Size: a file
// replaced after it was digested (by a FIFO, a symlink to a device, a
// larger file) can neither block dalo nor make it read without bound while
// it holds the store lock.
func readChecked(name string, want plan.FileDigest) ([]byte, error) {
	f, err := openRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, want.Size+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(data)) != want.Size || sha256Hex(data) != want.SHA256 {
		return nil, fmt.Errorf("%s changed since it was digested; run dalo again", name)
	}
	return data, nil
}

// copyChecked copies src to dst, read-only, and fails unless the bytes
// copied have the digest want. Like readChecked it copies at most one byte
// more than the approved size.
func copyChecked(src, dst string, want plan.FileDigest) error {
	in, err := openRegular(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	mode := os.FileMode(0o444)
	if want.Executable {
		mode = 0o555
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(in, want.Size+1))
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want.SHA256 || n != want.Size {
		return fmt.Errorf("%s changed while it was staged: sha256 %s, approved %s; review and approve it again", src, short(got), short(want.SHA256))
	}
	return os.Chmod(dst, mode)
}

// VerifyStaged lists what is wrong with a staged tree: its files that are
// missing or no longer have their digest, and anything it holds besides
// them (see plan.CheckTree). Stage reuses a tree only when the list is
// empty (and the executable bits are as approved), so that a file planted
// beside the approved ones (a module the entry imports, a __pycache__)
// does not survive a reinstall.
func VerifyStaged(dir string, files map[string]plan.FileDigest) []string {
	return verifyStaged(dir, files, false)
}

// verifyStaged is VerifyStaged, also checking each file's executable bit
// against files when modes is set (callers that have the full digests).
func verifyStaged(dir string, files map[string]plan.FileDigest, modes bool) []string {
	var bad []string
	for p, want := range files {
		got, err := hashFile(filepath.Join(dir, filepath.FromSlash(p)))
		switch {
		case err != nil:
			bad = append(bad, p+" (missing)")
		case got.SHA256 != want.SHA256:
			bad = append(bad, p+" (digest differs)")
		case modes && got.Executable != want.Executable:
			bad = append(bad, p+" (executable bit changed)")
		}
	}
	sort.Strings(bad)
	if err := plan.CheckTree(dir, files); err != nil {
		bad = append(bad, err.Error())
	}
	return bad
}

// unstage removes staged trees no longer referenced.
func (s *Store) unstage(digests []string) error {
	for _, d := range digests {
		if strings.ContainsAny(d, `/\.`) || d == "" {
			continue
		}
		if err := removeTree(s.StagedDir(d)); err != nil {
			return fmt.Errorf("unstaging %s: %w", s.StagedDir(d), err)
		}
	}
	return plan.SyncDir(s.path("staged"))
}
