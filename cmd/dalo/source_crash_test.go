package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"dalo/plan"
	"dalo/store"
)

// updateFixture builds, in dir, what testdata/script/plugin_update.txtar
// starts from: a bare repository remote.git whose main holds version 1 of
// team:kit (work/), version 2 beside it (v2/), and the user's Claude Code
// settings.
func updateFixture(t *testing.T, dir string) {
	t.Helper()
	ar, err := txtar.ParseFile("../../testdata/script/plugin_update.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if !strings.HasPrefix(f.Name, "work/") && !strings.HasPrefix(f.Name, "v2/") {
			continue
		}
		name := filepath.Join(dir, f.Name)
		os.MkdirAll(filepath.Dir(name), 0o755)
		mode := os.FileMode(0o644)
		if strings.HasSuffix(f.Name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(name, f.Data, mode); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, "home/.claude"), 0o755)
	settings := `{"model": "opus", "statusLine": {"type": "command", "command": "echo hi"}}` + "\n"
	os.WriteFile(filepath.Join(dir, "user-settings.json"), []byte(settings), 0o644)
	os.WriteFile(filepath.Join(dir, "home/.claude/settings.json"), []byte(settings), 0o644)
	git(t, dir, "init", "-q", "--bare", "-b", "main", "remote.git")
	git(t, dir, "init", "-q", "-b", "main", "work")
	git(t, dir, "-C", "work", "add", "-A")
	git(t, dir, "-C", "work", "commit", "-q", "-m", "v1")
	git(t, dir, "-C", "work", "push", "-q", "../remote.git", "main")
}

// pushV2 commits and pushes version 2 of team:kit.
func pushV2(t *testing.T, dir string) {
	t.Helper()
	kit := filepath.Join(dir, "work/plugins/kit")
	for _, f := range []string{"PLUGIN.toml", "guard.sh", "audit.sh"} {
		data, err := os.ReadFile(filepath.Join(dir, "v2", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(kit, f), data, 0o755)
	}
	os.Remove(filepath.Join(kit, "notes.sh"))
	os.MkdirAll(filepath.Join(dir, "work/skills/lint"), 0o755)
	data, _ := os.ReadFile(filepath.Join(dir, "v2/SKILL.md"))
	os.WriteFile(filepath.Join(dir, "work/skills/lint/SKILL.md"), data, 0o644)
	git(t, dir, "-C", "work", "add", "-A")
	git(t, dir, "-C", "work", "commit", "-q", "-m", "v2")
	git(t, dir, "-C", "work", "push", "-q", "../remote.git", "main")
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = append(daloEnv(dir), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_AUTHOR_DATE=2026-11-02T10:00:00Z",
		"GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@example.com", "GIT_COMMITTER_DATE=2026-11-02T10:00:00Z")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// killedAt runs dalo args in dir and requires that it died at step.
func killedAt(t *testing.T, dir, step string, args ...string) {
	t.Helper()
	out, err := dalo(t, dir, step, args...)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("dalo %s was not killed at %s: %v\n%s", strings.Join(args, " "), step, err, out)
	}
}

// pin is the commit the registry pins source id to.
func pin(t *testing.T, dir, id string) string {
	t.Helper()
	s, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := s.LookupSource(id)
	if err != nil {
		t.Fatal(err)
	}
	return src.Git.Commit
}

// guardAnswers runs the PreToolUse dispatch a Bash call makes, as Claude
// Code does, and says what the installed guard answered: "allow" (version
// 1), "deny" (version 2's "not today"), or the failure dalo reports when
// the hook is not in force.
func guardAnswers(t *testing.T, dir string) string {
	t.Helper()
	payload, err := os.ReadFile("../../providers/testdata/recordings/claude/2.1.233/PreToolUse.json")
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command("dalo", "hook", "dispatch", "--provider", "claude", "--event", "PreToolUse")
	c.Dir, c.Env = dir, daloEnv(dir)
	c.Stdin = strings.NewReader(string(payload))
	out, err := c.Output()
	switch s := string(out); {
	case err != nil:
		return "exit: " + err.Error() + ": " + s
	case strings.Contains(s, "not run: "):
		return "not in force: " + s
	case strings.Contains(s, `"permissionDecisionReason":"[team:kit/guard] not today"`):
		return "deny"
	case !strings.Contains(s, "deny"):
		return "allow"
	default:
		return s
	}
}

// inForce requires that the hooks both versions of team:kit have, guard
// (PreToolUse) and ctx (UserPromptSubmit), are in force as the dispatcher
// itself judges them ('dispatch --check', what doctor runs: plan, grants
// and staged bytes agree), and that the guard answers as one of want. A
// hook only one version has is on an event only that version uses: the
// update adds its entry the step after the plan switch, or the switch
// leaves its entry nothing to run; either way it is as one version has it.
func inForce(t *testing.T, dir string, want ...string) {
	t.Helper()
	for ev, hook := range map[string]string{"PreToolUse": "guard", "UserPromptSubmit": "ctx"} {
		c := exec.Command("dalo", "hook", "dispatch", "--provider", "claude", "--event", ev, "--check")
		c.Dir, c.Env = dir, daloEnv(dir)
		out, err := c.Output()
		if err != nil {
			t.Errorf("dispatch --check on %s: %v\n%s", ev, err, out)
			continue
		}
		var checks []struct{ Package, Hook, Problem string }
		if err := json.Unmarshal(out, &checks); err != nil {
			t.Fatalf("dispatch --check on %s: %v\n%s", ev, err, out)
		}
		found := false
		for _, ch := range checks {
			if ch.Package == "team:kit" && ch.Hook == hook {
				found = true
				if ch.Problem != "" {
					t.Errorf("hook %s on %s is not in force: %s", hook, ev, ch.Problem)
				}
			}
		}
		if !found {
			t.Errorf("the dispatch plan of %s has no hook %s: %s", ev, hook, out)
		}
	}
	got := guardAnswers(t, dir)
	for _, w := range want {
		if got == w {
			return
		}
	}
	t.Errorf("the guard answered %s; want one of %v", got, want)
}

// allInForce requires that every installed hook is in force, as doctor and
// plugin status judge it.
func allInForce(t *testing.T, dir string) {
	t.Helper()
	s, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := s.Forces()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if !f.InForce {
			t.Errorf("%s/%s is not in force: %s", f.Package, f.Hook, f.Why)
		}
	}
}

// TestCrashDuringSourceAdd kills 'dalo source add' at each step of a git
// source's fetch, while git runs too: the registry is as it was, and
// adding again works and leaves nothing of the killed run.
func TestCrashDuringSourceAdd(t *testing.T) {
	for _, at := range []string{"source:fetching", "source:fetched", "source:tree-written", "source:in-place"} {
		t.Run(at, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			updateFixture(t, dir)
			url := "file://" + filepath.Join(dir, "remote.git")
			killedAt(t, dir, at, "source", "add", "team", url)
			if out := mustDalo(t, dir, "source", "list"); !strings.HasPrefix(out, "no sources") {
				t.Errorf("after a killed add the registry lists:\n%s", out)
			}
			mustDalo(t, dir, "source", "add", "team", url)
			ents, _ := os.ReadDir(filepath.Join(dir, "store/git"))
			if len(ents) != 1 || ents[0].Name() != "team" {
				t.Errorf("store/git holds %v, want only team", ents)
			}
			trees, _ := os.ReadDir(filepath.Join(dir, "store/git/team/trees"))
			if len(trees) != 1 {
				t.Errorf("store/git/team/trees holds %v, want the pinned tree alone", trees)
			}
			if out := mustDalo(t, dir, "plugin", "list"); !strings.Contains(out, "team:kit") {
				t.Errorf("plugin list after the add:\n%s", out)
			}
		})
	}
}

// TestCrashDuringSourceUpdate kills 'dalo source update' at each step,
// with a package of the source installed: the previous pin stays in force
// (until the step that moves it), the installed hooks keep running their
// approved bytes, and updating again, over what a git killed mid-fetch
// leaves in the repository, completes.
func TestCrashDuringSourceUpdate(t *testing.T) {
	for _, at := range []string{"source:fetching", "source:fetched", "source:tree-written", "source:pinned"} {
		t.Run(at, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			updateFixture(t, dir)
			mustDalo(t, dir, "source", "add", "team", "file://"+filepath.Join(dir, "remote.git"))
			mustDalo(t, dir, "plugin", "approve", "team:kit", "--provider", "claude", "--all", "--yes")
			mustDalo(t, dir, "plugin", "install", "team:kit", "--provider", "claude")
			allInForce(t, dir)
			v1 := pin(t, dir, "team")
			pushV2(t, dir)
			v2 := git(t, dir, "-C", "work", "rev-parse", "HEAD")

			killedAt(t, dir, at, "source", "update", "team")
			want := v1
			if at == "source:pinned" {
				want = v2 // the pin moved: the update is done
			}
			if got := pin(t, dir, "team"); got != want {
				t.Errorf("pinned to %s after the kill, want %s", got, want)
			}
			if out := mustDalo(t, dir, "plugin", "review", "team:kit"); !strings.Contains(out, "commit "+want+" of ") {
				t.Errorf("review after the kill does not show commit %s:\n%s", want, out)
			}
			inForce(t, dir, "allow")
			checkConsistent(t, dir)

			// What a git killed mid-fetch may leave: a ref lock and a
			// temporary pack. The next fetch is not stopped by them.
			repo := filepath.Join(dir, "store/git/team/repo.git")
			os.WriteFile(filepath.Join(repo, "refs/dalo/fetched.lock"), []byte("0000\n"), 0o644)
			os.WriteFile(filepath.Join(repo, "objects/pack/tmp_pack_x"), []byte("PACK"), 0o644)
			mustDalo(t, dir, "source", "update", "team")
			allInForce(t, dir)
			if got := pin(t, dir, "team"); got != v2 {
				t.Errorf("pinned to %s after updating again, want %s", got, v2)
			}
			trees, _ := os.ReadDir(filepath.Join(dir, "store/git/team/trees"))
			if len(trees) != 1 {
				t.Errorf("store/git/team/trees holds %v, want the pinned tree alone", trees)
			}
			inForce(t, dir, "allow")
		})
	}
}

// TestCrashDuringPluginUpdate kills 'dalo plugin update' at each step:
// its own (pending grants written, installed, grants moved into the
// ledger, grants revoked) and install's. After every kill the previous
// install or the new one is in force, never neither: every hook in force
// and the guard answering as version 1 or 2 does, never with a failure.
// The next dalo command that writes settles the update (finishes or
// undoes it), and running the update again completes it.
func TestCrashDuringPluginUpdate(t *testing.T) {
	const pkg = "team:kit"
	update := []string{"plugin", "update", pkg, "--provider", "claude", "--yes"}
	for _, at := range []string{
		"update:pending",
		"install:staging-built", "install:staged", "install:dispatcher", "install:recorded", "install:members",
		"install:plan-generation", "install:plan", "install:config",
		"update:installed", "update:first-promoted", "update:promoted", "revoke:first-grant",
	} {
		t.Run(at, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			updateFixture(t, dir)
			mustDalo(t, dir, "source", "add", "team", "file://"+filepath.Join(dir, "remote.git"))
			mustDalo(t, dir, "plugin", "approve", pkg, "--provider", "claude", "--all", "--yes")
			mustDalo(t, dir, "plugin", "install", pkg, "--provider", "claude")
			pushV2(t, dir)
			mustDalo(t, dir, "source", "update", "team")
			inForce(t, dir, "allow")

			killedAt(t, dir, at, update...)
			inForce(t, dir, "allow", "deny")
			checkConsistent(t, dir)

			// A writer settles it; what is in force stays in force.
			mustDalo(t, dir, "plugin", "approve", pkg, "--provider", "codex", "--all", "--yes")
			if _, err := os.Stat(filepath.Join(dir, "store", plan.PendingDir)); err == nil {
				t.Errorf("pending grants left after the next writer")
			}
			inForce(t, dir, "allow", "deny")
			checkConsistent(t, dir)

			mustDalo(t, dir, update...)
			inForce(t, dir, "deny")
			allInForce(t, dir)
			if out := mustDalo(t, dir, update...); !strings.Contains(out, "is current") {
				t.Errorf("a second update:\n%s", out)
			}
			for _, g := range []string{"claude+team+kit+tool+notes", "claude+team+kit+hook+notes"} {
				if _, err := os.Stat(filepath.Join(dir, "store/grants", g+".json")); err == nil {
					t.Errorf("grant %s of the dropped hook is still in the ledger", g)
				}
			}
			if out, err := dalo(t, dir, "", "doctor"); err != nil {
				t.Errorf("doctor after the completed update: %v\n%s", err, out)
			}
		})
	}
}
