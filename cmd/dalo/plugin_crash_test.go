package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"dalo/plan"
	"dalo/store"
)

// The crash hook exists only in the test binary: production dalo has no
// way to be told to die.
func init() {
	store.CrashHook = func(step string) {
		if os.Getenv("DALO_TEST_CRASH_AT") == step {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
}

// lifecycleFixture is the package the lifecycle scripts use.
func lifecycleFixture(t *testing.T, dir string) {
	t.Helper()
	ar, err := txtar.ParseFile("../../testdata/script/lifecycle_claude.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if !strings.HasPrefix(f.Name, "src/") && f.Name != "user-settings.json" {
			continue
		}
		name := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(f.Name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(name, f.Data, mode); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, "home/.claude"), 0o755)
	data, _ := os.ReadFile(filepath.Join(dir, "user-settings.json"))
	os.WriteFile(filepath.Join(dir, "home/.claude/settings.json"), data, 0o644)
}

// daloEnv is the environment of a dalo run in dir: its own home, store
// and harness homes, and the harnesses on PATH as a user has them
// (fakeharness, as in the conformance suite).
func daloEnv(dir string) []string {
	bin := filepath.Join(dir, ".harnesses")
	if _, err := os.Stat(bin); err != nil {
		os.MkdirAll(bin, 0o755)
		for _, name := range []string{"claude", "codex"} {
			os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\nexec fakeharness "+name+" \"$@\"\n"), 0o755)
		}
	}
	return append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+filepath.Join(dir, "home"),
		"CLAUDE_CONFIG_DIR="+filepath.Join(dir, "home/.claude"),
		"CODEX_HOME="+filepath.Join(dir, "home/.codex"),
		"DALO_HOME="+filepath.Join(dir, "store"),
	)
}

// dalo runs the dalo command (testscript.Main put it on PATH) in dir.
func dalo(t *testing.T, dir, crashAt string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("dalo", args...)
	cmd.Dir = dir
	cmd.Env = daloEnv(dir)
	if crashAt != "" {
		cmd.Env = append(cmd.Env, "DALO_TEST_CRASH_AT="+crashAt)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustDalo(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := dalo(t, dir, "", args...)
	if err != nil {
		t.Fatalf("dalo %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TestCrashAtEveryStep kills dalo with SIGKILL at each step of approve,
// install, remove and revoke, then checks that what a dispatch reads is
// whole and consistent, that running the command again completes it, and
// that the lifecycle still ends with nothing of dalo's left and the user's
// settings.json byte for byte.
func TestCrashAtEveryStep(t *testing.T) {
	const pkg = "company:review-kit"
	approve := []string{"plugin", "approve", pkg, "--provider", "claude", "--all", "--yes"}
	install := []string{"plugin", "install", pkg, "--provider", "claude"}
	remove := []string{"plugin", "remove", pkg, "--provider", "claude"}
	revoke := []string{"plugin", "revoke", pkg}
	lifecycle := [][]string{approve, install, remove, revoke}
	steps := []struct {
		step string
		at   int // index in lifecycle of the command that dies
	}{
		{"approve:first-grant", 0},
		{"install:staging-built", 1},
		{"install:staged", 1},
		{"install:dispatcher", 1},
		{"install:recorded", 1},
		{"install:members", 1},
		{"install:plan-generation", 1},
		{"install:plan", 1},
		{"install:config", 1},
		{"remove:config", 2},
		{"remove:plan-generation", 2},
		{"remove:plan", 2},
		{"remove:members", 2},
		{"remove:recorded", 2},
		{"revoke:first-grant", 3},
	}
	for _, tc := range steps {
		t.Run(tc.step, func(t *testing.T) {
			dir := t.TempDir()
			lifecycleFixture(t, dir)
			mustDalo(t, dir, "source", "add", "company", "src")
			for i, args := range lifecycle {
				if i == tc.at {
					out, err := dalo(t, dir, tc.step, args...)
					var ee *exec.ExitError
					if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
						t.Fatalf("dalo %s was not killed at %s: %v\n%s", strings.Join(args, " "), tc.step, err, out)
					}
					checkConsistent(t, dir)
					if tc.step == "remove:recorded" {
						// Killed after the removal was recorded: it is done.
						if out, _ := dalo(t, dir, "", args...); !strings.Contains(out, "is not installed on claude") {
							t.Fatalf("remove again: %s", out)
						}
						continue
					}
				}
				mustDalo(t, dir, args...)
				checkConsistent(t, dir)
				if i == 1 {
					if out, err := dalo(t, dir, "", "doctor"); err != nil {
						t.Fatalf("doctor after a completed install: %v\n%s", err, out)
					}
				}
			}
			assertClean(t, dir)
		})
	}
}

// checkConsistent reads the store the way a dispatch does: every grant and
// plan is whole, every planned hook's grants exist with the plan's digests
// and its staged bytes verify, and the harness configuration is JSON that
// still holds the user's settings.
func checkConsistent(t *testing.T, dir string) {
	t.Helper()
	s, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Grants(); err != nil {
		t.Fatalf("ledger: %v", err)
	}
	if _, err := s.Installed("claude"); err != nil {
		t.Fatalf("installs: %v", err)
	}
	// Every staged root a plan or index of any provider names is there:
	// the collector never deletes what dispatch may still run.
	roots, err := plan.Roots(filepath.Join(dir, "store", "plans"))
	if err != nil {
		t.Fatalf("staged roots of the plans: %v", err)
	}
	for _, r := range roots {
		if _, err := os.Stat(r); err != nil {
			t.Errorf("a dispatch plan names a staged root that is gone: %v", err)
		}
	}
	if p, err := s.ReadPlan("claude"); err == nil {
		for ev, hs := range p.Events {
			for _, h := range hs {
				if bad := store.VerifyStaged(h.Tool.Root, digests(h.Tool.Files)); len(bad) > 0 {
					t.Errorf("plan %s %s: staged tool does not verify: %v", ev, h.Hook, bad)
				}
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("plan: %v", err)
	}
	// What dispatch reads: every event of the current index generation
	// loads whole, of the current schema, its hooks' staged bytes verify.
	plans := filepath.Join(dir, "store", "plans")
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"} {
		ef, err := plan.Load(plans, "claude", ev, func(*plan.Native) (string, bool) { return "", true })
		if errors.Is(err, plan.ErrNotInstalled) {
			break
		}
		if err != nil {
			t.Fatalf("dispatch index %s: %v", ev, err)
		}
		if ef == nil {
			continue
		}
		for _, h := range ef.Hooks {
			if bad := store.VerifyStaged(h.Tool.Root, digests(h.Tool.Files)); len(bad) > 0 {
				t.Errorf("dispatch index %s %s: staged tool does not verify: %v", ev, h.Hook, bad)
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "home/.claude/settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("settings.json is not JSON: %v\n%s", err, data)
	}
	if cfg["model"] != "opus" || cfg["statusLine"] == nil {
		t.Fatalf("settings.json lost the user's settings:\n%s", data)
	}
	// An entry that blocks without a plan has one: removing the last
	// package drops the entries before the plan, so that a crash between
	// never leaves a fail_closed entry blocking every action.
	hooks, _ := cfg["hooks"].(map[string]any)
	for ev, entries := range hooks {
		b, _ := json.Marshal(entries)
		if !strings.Contains(string(b), "--fail-closed") {
			continue
		}
		if _, err := plan.Load(plans, "claude", ev, func(*plan.Native) (string, bool) { return "", true }); errors.Is(err, plan.ErrNotInstalled) {
			t.Errorf("settings.json has a fail_closed entry for %s, and the store no dispatch plan: the entry blocks every action", ev)
		}
	}
}

func digests(files map[string]string) map[string]plan.FileDigest {
	out := map[string]plan.FileDigest{}
	for p, d := range files {
		out[p] = plan.FileDigest{SHA256: d}
	}
	return out
}

// assertClean checks that the finished lifecycle left nothing behind.
func assertClean(t *testing.T, dir string) {
	t.Helper()
	got, _ := os.ReadFile(filepath.Join(dir, "home/.claude/settings.json"))
	want, _ := os.ReadFile(filepath.Join(dir, "user-settings.json"))
	if string(got) != string(want) {
		t.Errorf("settings.json differs from the user's:\n%s", got)
	}
	var left []string
	filepath.WalkDir(filepath.Join(dir, "store"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			if rel != "store/lock" && rel != "store/dispatch.lock" && rel != "store/sources.json" {
				left = append(left, rel)
			}
		}
		return nil
	})
	for _, p := range []string{"home/.claude/skills", "home/.claude/agents"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			left = append(left, p)
		}
	}
	if len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// dropGuard rewrites the fixture's package without the guard tool and the
// hooks that run it, and changes the words of its skill.
func dropGuard(t *testing.T, dir string) {
	t.Helper()
	name := filepath.Join(dir, "src/plugins/review-kit/PLUGIN.toml")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(data), "\n[[")
	out := blocks[:1]
	for _, b := range blocks[1:] {
		if (strings.HasPrefix(b, "tool]]") || strings.HasPrefix(b, "hook]]")) &&
			(strings.Contains(b, "\nid = \"guard\"") || strings.Contains(b, "\nid = \"failure-context\"")) {
			continue
		}
		out = append(out, b)
	}
	if len(out) != len(blocks)-3 {
		t.Fatalf("the fixture's manifest changed: dropped %d blocks, want 3", len(blocks)-len(out))
	}
	if err := os.WriteFile(name, []byte(strings.Join(out, "\n[[")), 0o644); err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(dir, "src/skills/design-review/SKILL.md")
	data, _ = os.ReadFile(skill)
	if err := os.WriteFile(skill, append(data, "Check the contrast too.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// installedFixture is a new directory holding the lifecycle fixture, its
// package company:review-kit approved and installed on claude.
func installedFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	lifecycleFixture(t, dir)
	mustDalo(t, dir, "source", "add", "company", "src")
	mustDalo(t, dir, "plugin", "approve", "company:review-kit", "--provider", "claude", "--all", "--yes")
	mustDalo(t, dir, "plugin", "install", "company:review-kit", "--provider", "claude")
	return dir
}

// TestCrashDuringReinstall kills, at each step, a reinstall that drops a
// tool (and its fail_closed hook) and changes a skill; then an unrelated
// writer takes the store lock (approving for codex), which collects staged
// trees and sweeps temporary files. What dispatch reads must stay whole and
// runnable, and installing again must complete: the skill's old bytes are
// still dalo's, the dropped tree is collected once the plan moved on.
func TestCrashDuringReinstall(t *testing.T) {
	const pkg = "company:review-kit"
	install := []string{"plugin", "install", pkg, "--provider", "claude"}
	for _, at := range []string{"install:staged", "install:recorded", "install:members", "install:plan-generation", "install:plan", "install:config"} {
		t.Run(at, func(t *testing.T) {
			t.Parallel()
			dir := installedFixture(t)
			s, err := store.Open(filepath.Join(dir, "store"))
			if err != nil {
				t.Fatal(err)
			}
			before, err := plan.Roots(filepath.Join(dir, "store", "plans"))
			if err != nil || len(before) != 2 {
				t.Fatalf("staged roots after the first install: %v, %v; want 2", before, err)
			}
			dropGuard(t, dir)
			mustDalo(t, dir, "plugin", "approve", pkg, "--provider", "claude", "--member", "skill:design-review", "--yes")
			out, err := dalo(t, dir, at, install...)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("dalo install was not killed at %s: %v\n%s", at, err, out)
			}
			checkConsistent(t, dir)
			// What a writer killed mid-copy leaves in the harness's
			// directories, beside a file of the user's with the mark
			// but not a name dalo writes there.
			home := filepath.Join(dir, "home/.claude")
			litter := []string{"skills/.design-review.dalo-tmp-123/SKILL.md", "agents/.reviewer.md.dalo-tmp-9", ".settings.json.dalo-tmp-77"}
			for _, p := range append(litter, ".notes.dalo-tmp-1") {
				os.MkdirAll(filepath.Dir(filepath.Join(home, p)), 0o755)
				if err := os.WriteFile(filepath.Join(home, p), []byte("partial"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			mustDalo(t, dir, "plugin", "approve", pkg, "--provider", "codex", "--all", "--yes")
			checkConsistent(t, dir)
			for _, p := range litter {
				if i := strings.Index(p, plan.TempMark); strings.Contains(p[i:], "/") {
					p = p[:i+strings.Index(p[i:], "/")] // the directory
				}
				if _, err := os.Lstat(filepath.Join(home, p)); err == nil {
					t.Errorf("%s is still there after the next writer took the lock", p)
				}
			}
			if _, err := os.Stat(filepath.Join(home, ".notes.dalo-tmp-1")); err != nil {
				t.Errorf("the user's .notes.dalo-tmp-1 was removed: %v", err)
			}

			mustDalo(t, dir, install...)
			checkConsistent(t, dir)
			got, _ := os.ReadFile(filepath.Join(home, "skills/design-review/SKILL.md"))
			want, _ := os.ReadFile(filepath.Join(dir, "src/skills/design-review/SKILL.md"))
			if string(got) != string(want) {
				t.Errorf("installed SKILL.md is not the source's:\n%s", got)
			}
			after, err := plan.Roots(filepath.Join(dir, "store", "plans"))
			if err != nil || len(after) != 1 {
				t.Fatalf("staged roots after the completed reinstall: %v, %v; want 1", after, err)
			}
			ents, _ := os.ReadDir(filepath.Join(dir, "store", "staged"))
			if len(ents) != 1 || filepath.Join(dir, "store", "staged", ents[0].Name()) != after[0] {
				t.Errorf("staged trees after the completed reinstall: %v; want only %s", ents, after[0])
			}
			in, err := s.Installed("claude")
			if err != nil {
				t.Fatal(err)
			}
			if ip := in.Find(pkg); ip == nil || len(ip.Staged) != 1 || len(ip.Skills) != 1 || len(ip.Skills[0].Earlier) != 0 {
				t.Errorf("install record after the completed reinstall: %+v", ip)
			}
			if out, err := dalo(t, dir, "", "doctor"); err != nil {
				t.Fatalf("doctor after the completed reinstall: %v\n%s", err, out)
			}
			mustDalo(t, dir, "plugin", "remove", pkg, "--provider", "claude")
			mustDalo(t, dir, "plugin", "revoke", pkg)
			os.Remove(filepath.Join(home, ".notes.dalo-tmp-1"))
			assertClean(t, dir)
		})
	}
}

// TestConcurrentWritersAndReaders runs approvals, revocations and installs
// while other dalo processes read the ledger and plans: no reader ever sees
// a half-written file and every writer succeeds.
func TestConcurrentWritersAndReaders(t *testing.T) {
	dir := t.TempDir()
	lifecycleFixture(t, dir)
	mustDalo(t, dir, "source", "add", "company", "src")
	mustDalo(t, dir, "plugin", "approve", "company:review-kit", "--provider", "claude", "--all", "--yes")
	mustDalo(t, dir, "plugin", "install", "company:review-kit", "--provider", "claude")
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	run := func(args ...string) {
		defer wg.Done()
		for i := 0; i < 3; i++ {
			if out, err := dalo(t, dir, "", args...); err != nil {
				errs <- strings.Join(args, " ") + ": " + err.Error() + "\n" + out
			}
		}
	}
	for i := 0; i < 2; i++ {
		wg.Add(4)
		go run("plugin", "approve", "company:review-kit", "--provider", "codex", "--all", "--yes")
		go run("plugin", "install", "company:review-kit", "--provider", "claude")
		go run("plugin", "status")
		go run("doctor")
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestCrashDuringMemberUpdate kills, at each step, an update that changes
// only a skill; then the next writer takes the store lock and settles what
// the update left. The ledger, the install record and the bytes where the
// harness reads the skill must agree (doctor finds nothing wrong with the
// skill: no grant that approves other bytes than those installed), and
// running the update again completes it without asking for more.
func TestCrashDuringMemberUpdate(t *testing.T) {
	const pkg = "company:review-kit"
	update := []string{"plugin", "update", pkg, "--provider", "claude", "--yes"}
	for _, at := range []string{"update:pending", "install:staged", "install:recorded", "install:members", "install:plan-generation", "install:plan", "install:config", "update:installed", "update:first-promoted", "update:promoted"} {
		t.Run(at, func(t *testing.T) {
			t.Parallel()
			dir := installedFixture(t)
			skill := filepath.Join(dir, "src/skills/design-review/SKILL.md")
			data, _ := os.ReadFile(skill)
			if err := os.WriteFile(skill, append(data, "Check the contrast too.\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := dalo(t, dir, at, update...)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("dalo plugin update was not killed at %s: %v\n%s", at, err, out)
			}
			checkConsistent(t, dir)
			// The next writer settles the update.
			mustDalo(t, dir, "plugin", "approve", pkg, "--provider", "codex", "--all", "--yes")
			checkConsistent(t, dir)
			out, _ = dalo(t, dir, "", "doctor")
			for _, l := range strings.Split(out, "\n") {
				// What it may say: the install did not complete, and
				// the update completes it.
				if strings.Contains(l, "skill") && strings.HasPrefix(l, "problem") && !strings.Contains(l, "its install did not complete") {
					t.Errorf("doctor after the kill at %s: %s", at, l)
				}
			}

			out = mustDalo(t, dir, update...)
			if strings.Contains(out, "approved skill") && (at == "update:installed" || at == "update:first-promoted" || at == "update:promoted") {
				t.Errorf("the update approved and installed before the kill asked again:\n%s", out)
			}
			checkConsistent(t, dir)
			home := filepath.Join(dir, "home/.claude")
			got, _ := os.ReadFile(filepath.Join(home, "skills/design-review/SKILL.md"))
			want, _ := os.ReadFile(skill)
			if string(got) != string(want) {
				t.Errorf("installed SKILL.md is not the source's:\n%s", got)
			}
			if out, err := dalo(t, dir, "", "doctor"); err != nil {
				t.Fatalf("doctor after the completed update: %v\n%s", err, out)
			}
		})
	}
}
