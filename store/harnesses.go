package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"dalo/providers"
)

// dalo promises nothing about a harness version it has no table for, so
// install and doctor find the harness the user runs and read its version,
// never assuming it: the binary named for the provider on PATH (claude,
// codex), or the one the user named once with `dalo providers use`, kept
// in the store (harnesses.json).

// A Harness is the harness binary dalo found for a provider, and what it
// is.
type Harness struct {
	Name string // the provider table's name: claude, codex, gemini...
	Path string // the executable
	// Chosen says the path was named with `dalo providers use`, not found
	// on PATH.
	Chosen  bool
	Output  string           // what --version printed, trimmed
	Version string           // the version in Output
	Table   *providers.Table // the table of exactly that version; nil when dalo has none
}

// VersionTimeout bounds a run of a harness's --version (a variable only so
// that a test need not wait for it). A first start may unpack the harness
// before it answers: GitHub Copilot CLI 1.0.102 writes 235 MB into its
// cache, 3 s on an idle 2-core machine, several times that on a loaded one.
var VersionTimeout = 30 * time.Second

// versionPattern finds a version in what --version prints.
var versionPattern = regexp.MustCompile(`[0-9]+\.[0-9]+\.[0-9]+`)

// harnessesFile is what `dalo providers use` records.
type harnessesFile struct {
	Schema    int               `json:"schema"`
	Harnesses map[string]string `json:"harnesses"` // provider → executable
}

func (s *Store) harnessesPath() string { return s.path("harnesses.json") }

// UsedHarnesses reads the paths `dalo providers use` recorded, by provider.
func (s *Store) UsedHarnesses() (map[string]string, error) {
	var f harnessesFile
	err := readJSON(s.harnessesPath(), &f)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	if f.Harnesses == nil {
		f.Harnesses = map[string]string{}
	}
	return f.Harnesses, nil
}

// UseHarness records path as the harness binary of provider name, after
// reading its version (FindHarness does): install and doctor use it from
// then on, wherever PATH points. An empty path removes the record.
func (s *Store) UseHarness(ts *providers.Tables, name, path string) (*Harness, error) {
	if _, ok := ts.Newest(name); !ok {
		return nil, fmt.Errorf("unknown provider %q: dalo has provider tables for %s", name, strings.Join(Providers(), ", "))
	}
	var h *Harness
	if path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		if h, err = readHarness(ts, name, abs); err != nil {
			return nil, err
		}
		h.Chosen = true
		path = abs
	}
	l, err := s.Lock()
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	used, err := s.UsedHarnesses()
	if err != nil {
		return nil, err
	}
	if path == "" {
		delete(used, name)
	} else {
		used[name] = path
	}
	if len(used) == 0 {
		if err := os.Remove(s.harnessesPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return h, nil
	}
	return h, writeJSON(s.harnessesPath(), harnessesFile{Schema: 1, Harnesses: used})
}

// FindHarness finds the harness of provider name: the binary `dalo
// providers use` recorded, else the one named for the provider on PATH;
// and reads its version (readHarness). It is an error when there is none,
// or its version cannot be read.
func (s *Store) FindHarness(ts *providers.Tables, name string) (*Harness, error) {
	used, err := s.UsedHarnesses()
	if err != nil {
		return nil, err
	}
	if p, ok := used[name]; ok {
		h, err := readHarness(ts, name, p)
		if err != nil {
			return nil, fmt.Errorf("%v (named with 'dalo providers use %s')", err, name)
		}
		h.Chosen = true
		return h, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
				return nil, fmt.Errorf("no %s that runs: %s is not executable (mode %v)", harnessName(ts, name), filepath.Join(dir, name), fi.Mode().Perm())
			}
		}
		return nil, fmt.Errorf("no %s found: there is no %s on PATH, and none was named with 'dalo providers use %s PATH'", harnessName(ts, name), name, name)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return readHarness(ts, name, p)
}

// harnessName is the product name of provider name (Claude Code).
func harnessName(ts *providers.Tables, name string) string {
	if t, ok := ts.Newest(name); ok {
		return t.Harness
	}
	return name
}

// readHarness runs `path --version` (versionOutput) and finds the table
// whose version_output is exactly what it printed.
func readHarness(ts *providers.Tables, name, path string) (*Harness, error) {
	out, err := versionOutput(ts, name, path)
	if err != nil {
		return nil, err
	}
	h := &Harness{Name: name, Path: path, Output: out, Version: versionPattern.FindString(out)}
	for _, t := range ts.All() {
		if t.Name == name && t.VersionOutput.Text == out {
			h.Table, h.Version = t, t.Version
		}
	}
	if h.Table == nil && h.Version == "" {
		return nil, fmt.Errorf("%s --version printed %q, in which dalo finds no version", path, truncate(out, 80))
	}
	return h, nil
}

// VersionCacheEnv names a directory where dalo keeps what each harness
// binary's --version printed, keyed by the binary (CacheVersion). dalo
// providers verify sets it for the dalo commands of its scenarios, which
// install, approve and run doctor against one binary it already asked:
// Gemini CLI takes seconds to print its version on a loaded machine, and
// would be asked again by every one of those commands. Unset, as for a
// user's commands, every read runs the binary.
const VersionCacheEnv = "DALO_VERSION_CACHE"

// versionCacheFile is the file of dir that holds the --version output of
// the binary path: named for the file path resolves to, its size and its
// modification time, so that another binary, or this one rewritten, is
// never answered from it.
func versionCacheFile(dir, path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", real, fi.Size(), fi.ModTime().UnixNano())))
	return filepath.Join(dir, hex.EncodeToString(sum[:16])+".version"), nil
}

// CacheVersion records, in the version cache dir (VersionCacheEnv), that
// the binary path prints output (trimmed) for --version.
func CacheVersion(dir, path, output string) error {
	file, err := versionCacheFile(dir, path)
	if err != nil {
		return err
	}
	return writeFile(file, []byte(output), 0o600)
}

// versionOutput returns what `path --version` printed, trimmed: from the
// version cache when VersionCacheEnv names one that holds it, else by
// running it, in its own process group killed after VersionTimeout (and
// recording it in that cache).
func versionOutput(ts *providers.Tables, name, path string) (string, error) {
	cache := os.Getenv(VersionCacheEnv)
	var cached string
	if cache != "" {
		if f, err := versionCacheFile(cache, path); err == nil {
			cached = f
			if b, err := os.ReadFile(f); err == nil {
				return string(b), nil
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), VersionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	// The harness's configuration home is an empty scratch directory
	// while it prints its version: Gemini CLI 0.61.0 leaves temporary
	// files in its home at every start, and refuses to start on settings
	// it cannot parse, and reading a version must neither change the
	// user's files nor depend on them.
	if t, ok := ts.Newest(name); ok {
		scratch, err := os.MkdirTemp("", "dalo-version-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(scratch)
		cmd.Env = append(os.Environ(), t.Config.Home.Env+"="+scratch)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("%s --version gave no answer within %v", path, VersionTimeout)
	case err != nil:
		msg := firstLine(stderr.String())
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			msg = unwrapPath(err).Error()
		}
		return "", fmt.Errorf("cannot read the version of %s: %s --version: %v (%s)", harnessName(ts, name), path, unwrapPath(err), msg)
	}
	out := strings.TrimSpace(stdout.String())
	if cached != "" {
		// A cache that cannot be written only costs another run.
		_ = writeFile(cached, []byte(out), 0o600)
	}
	return out, nil
}

// Versions lists the versions of provider name dalo has a table for, in
// the tables' order (providers.CompareVersions: 2.1.233 before 2.1.1000).
func Versions(ts *providers.Tables, name string) []string {
	var out []string
	for _, t := range ts.All() {
		if t.Name == name {
			out = append(out, t.Version)
		}
	}
	return out
}

// A NoTableError says the harness found has a version dalo has no table
// (no evidence) for: none shipped, none verified on this machine, or a
// local one it cannot use (Broken).
type NoTableError struct {
	Harness  *Harness
	Versions []string
	Broken   *providers.LocalError
}

// Error names the version found and the versions with evidence, and the
// ways on: prove the version on this machine with 'dalo providers verify',
// install one of those, or name a table as the user's choice.
func (e *NoTableError) Error() string {
	return e.found() + fmt.Sprintf(": prove this version on this machine with 'dalo providers verify %s', install one of those, or name a table with --provider %s@VERSION, which dalo records as your choice, not as evidence", e.Harness.Name, e.Harness.Name)
}

// NoChoice is the error without the way of naming a table, for a command
// that has no --provider to name one with (dalo sync).
func (e *NoTableError) NoChoice() string {
	return e.found() + fmt.Sprintf(": prove this version on this machine with 'dalo providers verify %s', or install one of those", e.Harness.Name)
}

func (e *NoTableError) found() string {
	h := e.Harness
	msg := fmt.Sprintf("%s %s is installed (%s), and dalo has evidence only for %s %s", h.Name, orVersion(h), h.Path, h.Name, strings.Join(e.Versions, ", "))
	if e.Broken != nil {
		msg += fmt.Sprintf("; the local table of %s cannot be used: %v", e.Broken.Key, e.Broken.Err)
	}
	return msg
}

// A NoHarnessError says no harness of provider Name was found (Err says
// where dalo looked), and that a table can be named instead.
type NoHarnessError struct {
	Err      error
	Name     string
	Versions []string
}

// Error says where dalo looked and that a table can be named instead.
func (e *NoHarnessError) Error() string {
	return fmt.Sprintf("%v; or name a table with --provider %s@VERSION (dalo has evidence for %s)", e.Err, e.Name, strings.Join(e.Versions, ", "))
}

// NoChoice is the error without the way of naming a table, as
// NoTableError's.
func (e *NoHarnessError) NoChoice() string { return e.Err.Error() }

// Unwrap is the error of the search for the harness.
func (e *NoHarnessError) Unwrap() error { return e.Err }

// HarnessTable is the table install uses for the harness of provider
// name: the table of exactly the version found, shipped or verified on this
// machine. No harness found, or one whose version dalo has no table for,
// is an error (*NoTableError for the latter).
func (s *Store) HarnessTable(ts *providers.Tables, name string) (*providers.Table, *Harness, error) {
	h, err := s.FindHarness(ts, name)
	if err != nil {
		return nil, nil, &NoHarnessError{Err: err, Name: name, Versions: Versions(ts, name)}
	}
	if h.Table == nil {
		return nil, h, &NoTableError{Harness: h, Versions: Versions(ts, name), Broken: ts.BrokenFor(name, h.Version)}
	}
	return h.Table, h, nil
}

// firstLine is the first line of s, cut to 200 bytes: what an error
// quotes of a harness's stderr.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "nothing on stderr"
	}
	return truncate(s, 200)
}
