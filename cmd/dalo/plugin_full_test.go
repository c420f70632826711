package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"dalo/codexapp"
	"dalo/store"
)

// The file size limit exists only in the test binary: with it a test makes
// every write past a size fail half way through, as a full disk does
// (write returns EFBIG where a full disk returns ENOSPC). Go ignores the
// SIGXFSZ that comes with it.
func init() {
	// A test need not wait a minute for a harness that never answers.
	if v := os.Getenv("DALO_TEST_LIST_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			panic(err)
		}
		codexapp.ListTimeout = d
	}
	if v := os.Getenv("DALO_TEST_VERSION_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			panic(err)
		}
		store.VersionTimeout = d
	}
	if v := os.Getenv("DALO_TEST_FSIZE"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			panic(err)
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
			panic(err)
		}
	}
}

// TestFullDisk runs install, instruction enable and remove with every file
// larger than a limit failing half way, for limits that stop install at
// different writes (the copy of the dispatcher, the tool bytes being
// staged, the install record, the whole plan, the user's settings.json:
// the user's files are grown past the store's, so that theirs can be the
// write that fails), enable at the user's CLAUDE.md and remove at
// settings.json, and one that stops none. The dispatcher is larger than
// any limit but the last: for the others the store already holds its
// copy, as after an earlier install, so that the later writes are reached.
// Each failure is exit 1 naming the file; nothing half-written is left, the
// store reads whole, the user's files hold their bytes or dalo's whole
// edit, and the same command then completes. The lifecycle ends with the
// user's files byte for byte. TestCrashAtEveryStep kills dalo between the
// writes.
func TestFullDisk(t *testing.T) {
	const pkg = "company:review-kit"
	user := strings.Repeat("The user's own notes. ", 600) // 13 kB
	for _, tc := range []struct {
		limit  uint64
		placed bool // the store holds the dispatcher's copy already
	}{{0, false}, {1000, true}, {8000, true}, {12000, true}, {1 << 20, false}, {1 << 30, false}} {
		limit := tc.limit
		t.Run(fmt.Sprintf("%d/placed=%v", limit, tc.placed), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			lifecycleFixture(t, dir)
			if tc.placed {
				placeDispatcher(t, filepath.Join(dir, "store"))
			}
			// The user's files are larger than any the store holds.
			settings := `{"model": "opus", "notes": "` + user + `", "statusLine": {"type": "command", "command": "echo hi"}}` + "\n"
			claudeMD := "# Mine\n\n" + user + "\n"
			for name, data := range map[string]string{"user-settings.json": settings, "home/.claude/settings.json": settings, "home/.claude/CLAUDE.md": claudeMD} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			mustDalo(t, dir, "source", "add", "company", "src")
			mustDalo(t, dir, "plugin", "approve", pkg, "--provider", "claude", "--all", "--yes")
			for _, args := range [][]string{
				{"plugin", "install", pkg, "--provider", "claude"},
				{"instruction", "enable", pkg, "instruction:design-context", "--target", "claude"},
				{"plugin", "remove", pkg, "--provider", "claude"},
			} {
				cmd := exec.Command("dalo", args...)
				cmd.Dir = dir
				cmd.Env = append(daloEnv(dir), "DALO_TEST_FSIZE="+strconv.FormatUint(limit, 10))
				out, err := cmd.CombinedOutput()
				// dalo's error is its last line, but for what a test
				// binary built with -cover writes after it: its coverage
				// data, which fails under the same limit.
				prefix := "dalo " + args[0] + " " + args[1] + ": "
				var last string
				for _, line := range strings.Split(string(out), "\n") {
					if strings.HasPrefix(line, prefix) {
						last = line
					}
				}
				var ee *exec.ExitError
				switch {
				case err == nil:
					t.Logf("dalo %s: completed under the limit", args[1])
				case errors.As(err, &ee) && ee.ExitCode() == 1 && last != "" &&
					strings.Contains(last, dir) && strings.HasSuffix(last, ": file too large"):
					t.Logf("dalo %s: %s", args[1], last)
				default:
					t.Fatalf("dalo %s under a %d-byte file limit: %v, want success or exit 1 naming the file\n%s", strings.Join(args, " "), limit, err, out)
				}
				noTemp(t, dir)
				checkConsistent(t, dir)
				if md, rerr := os.ReadFile(filepath.Join(dir, "home/.claude/CLAUDE.md")); rerr != nil || !strings.HasPrefix(string(md), claudeMD) {
					t.Fatalf("CLAUDE.md lost the user's text (%v)", rerr)
				}
				if err != nil {
					mustDalo(t, dir, args...)
					checkConsistent(t, dir)
				}
			}
			mustDalo(t, dir, "instruction", "disable", pkg, "instruction:design-context", "--target", "claude")
			mustDalo(t, dir, "plugin", "revoke", pkg)
			assertClean(t, dir)
			if md, _ := os.ReadFile(filepath.Join(dir, "home/.claude/CLAUDE.md")); string(md) != claudeMD {
				t.Errorf("CLAUDE.md differs from the user's:\n%s", md)
			}
		})
	}
}

// placeDispatcher copies the dalo-hook on PATH into the store at home as
// install would: dispatchers/<sha256>/dalo-hook, read-only.
func placeDispatcher(t *testing.T, home string) {
	t.Helper()
	exe, err := exec.LookPath("dalo-hook")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	dir := filepath.Join(home, "dispatchers", hex.EncodeToString(sum[:]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dalo-hook"), data, 0o555); err != nil {
		t.Fatal(err)
	}
}

// noTemp fails when a temporary file or directory of dalo's is left in the
// store or the harness home.
func noTemp(t *testing.T, dir string) {
	t.Helper()
	for _, root := range []string{"store", "home"} {
		filepath.WalkDir(filepath.Join(dir, root), func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), "dalo-tmp") {
				t.Errorf("left behind: %s", p)
			}
			return nil
		})
	}
}
