//go:build unix

package live

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
)

// The team's package: a gate on the shell that denies "touch denied", a
// skill and an agent, each with a marker the model sees when the harness
// reads it.
const (
	teamKit        = "team-kit"
	markTeamSkill  = "TEAM-SKILL-DESC-3b9e"
	markTeamAgent  = "TEAM-AGENT-DESC-71d0"
	markTeamDenied = "TEAM-DENY-REASON-5a2c"
)

var teamKitSpec = kit{
	name: teamKit, description: "The team's gate, skill and agent.",
	hooks: []kitHook{{
		id: "guard", subject: "tool_call", phase: "before", effect: "gate", policy: "fail_closed",
		tools: []string{"Bash"}, env: []string{"PATH"},
		handler: "#!/bin/sh\nin=$(cat)\ncase \"$in\" in\n*\"touch denied\"*) echo '{\"kind\":\"deny\",\"reason\":\"" + markTeamDenied + "\"}' ;;\n*) echo '{\"kind\":\"abstain\"}' ;;\nesac\n",
	}},
	skills: map[string]string{"team-skill": "---\nname: team-skill\ndescription: " + markTeamSkill + " a skill of the team.\n---\nUse it when asked.\n"},
	agents: map[string]string{"team-agent": "---\nname: team-agent\ndescription: " + markTeamAgent + " an agent of the team.\n---\nYou are the team's agent.\n"},
}

var teamFiles = teamKitSpec.files()

// TestTeamSync is a team as the issue tells it: one person writes
// dalo.toml and locks it; a teammate with a fresh home runs 'dalo sync
// --yes' in the project, and a real headless session in the project is
// denied by the team's gate, sees the team's skill and agent, with no
// workspace trust given, while a session outside the project runs the
// command and sees neither. dalo's entries are in the project's
// .claude/settings.local.json, none in the user's own settings. Then the
// team changes the gate's tool and locks again: the teammate's sync
// --check exits 1, sync asks again for the tool and its hook alone, and
// the changed gate denies in the project.
//
// The run is the subtest claude, the name the tables' claims cite. The
// subtest copilot is the same team on GitHub Copilot CLI, whose per-user
// project file is .github/copilot/settings.local.json and which runs a
// project's hooks only in a folder its user trusted: the gate does not
// hold in the project until the user trusts it, which dalo never does.
// The subtest copilot_hooks_off sets, in that trusted project, each
// switch of the copilot table's off list: each of the project's own turns
// the team's gate off, and doctor run there says so; the user's own, which
// switches off only the hooks of the user's settings.json, leaves it in
// force.
// The subtest copilot_claude_entries syncs the team's gate for Claude
// Code only, then for both: GitHub Copilot CLI, in the trusted project,
// runs dalo's Claude Code entries of .claude/settings.local.json too, and
// synced for both it runs the gate twice on one call.
// The subtests codex, gemini and qwen are harnesses with no per-user
// project file: sync skips them with the table's reason and writes
// nothing in the project, a session there runs the command, and doing
// what the reason says (installing the package for oneself) makes the
// gate hold there.
func TestTeamSync(t *testing.T) {
	for _, c := range []struct {
		name, harness string
		run           func(*testing.T)
	}{
		{"claude", "claude", teamSyncClaude},
		{"codex", "codex", teamSyncSkipped},
		{"copilot", "copilot", teamSyncCopilot},
		{"copilot_hooks_off", "copilot", teamSyncCopilotOff},
		{"copilot_claude_entries", "copilot", teamSyncCopilotClaude},
		{"gemini", "gemini", teamSyncSkipped},
		{"qwen", "qwen", teamSyncSkipped},
	} {
		t.Run(c.name, func(t *testing.T) {
			needs(t, c.harness)
			c.run(t)
		})
	}
}

func teamSyncClaude(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "claude", fakemodel.Script{fakemodel.Run("touch denied"), fakemodel.Say("Done.")})
	proj := w.work
	writeSource(t, filepath.Join(proj, "agent-packages"), teamFiles)
	w.writeFile(filepath.Join(proj, "dalo.toml"), `[sources.team]
path = "agent-packages"

[[packages]]
ref = "team:team-kit"
providers = ["claude"]
`)
	// The author locks it, with a store of their own.
	w.daloEnv(proj, []string{"DALO_HOME=" + filepath.Join(w.root, "author-store")}, "lock")

	// The teammate: a fresh store, the project as cloned.
	out := w.daloIn(proj, "sync", "--yes")
	for _, want := range []string{"The lock of " + proj + " uses sources you have not registered:", "Approve for team:team-kit on claude", "installed team:team-kit on claude@"} {
		if !strings.Contains(out, want) {
			t.Errorf("sync --yes says no %q:\n%s", want, out)
		}
	}
	w.daloIn(proj, "sync", "--check")
	local := filepath.Join(proj, ".claude", "settings.local.json")
	if b, err := os.ReadFile(local); err != nil || !strings.Contains(string(b), " --project ") {
		t.Fatalf("%s holds no entry of dalo's project scope (err %v):\n%s", local, err, b)
	}
	if b, err := os.ReadFile(w.hooksFile()); err == nil && strings.Contains(string(b), "dispatch") {
		t.Errorf("sync wrote the user's own %s:\n%s", w.hooksFile(), b)
	}
	w.daloIn(proj, "doctor")

	// In the project: the gate denies, the skill and the agent are read.
	w.AllowedTools = "Bash"
	s := w.run("Run the command you are given.")
	if w.exists("denied") {
		w.failf(s, "in the project the command ran: the team's gate did not deny it")
	}
	for _, m := range []string{markTeamDenied, markTeamSkill, markTeamAgent} {
		if !w.server.Contains(m) {
			w.failf(s, "in the project %s did not reach the model", m)
		}
	}
	inProject := len(w.server.Requests())

	// Outside the project: none of it.
	outside := filepath.Join(w.root, "elsewhere")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	w.work, w.Work = outside, outside // where the harness runs, and where exists looks
	s = w.run("Run the command you are given.")
	if !w.exists("denied") {
		w.failf(s, "outside the project the command did not run: the project's gate denied it there")
	}
	for _, q := range w.server.Requests()[inProject:] {
		for _, m := range []string{markTeamDenied, markTeamSkill, markTeamAgent} {
			if q.Contains(m) {
				w.failf(s, "outside the project %s reached the model", m)
			}
		}
	}

	// Upstream, the team changes the gate's tool and locks again: the
	// teammate's project no longer matches the lock, and sync asks again
	// for that tool and the hook that runs it, not for the members, whose
	// bytes did not change. The changed gate denies as before.
	w.work, w.Work = proj, proj
	guard := filepath.Join(proj, "agent-packages", "plugins", teamKit, "guard.sh")
	b, err := os.ReadFile(guard)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(guard, append(b, "# reviewed by the team\n"...), 0o755); err != nil {
		t.Fatal(err)
	}
	w.daloEnv(proj, []string{"DALO_HOME=" + filepath.Join(w.root, "author-store")}, "lock")
	if out, code := w.daloExitIn(proj, "sync", "--check"); code != 1 {
		t.Errorf("sync --check after the lock moved exits %d, want 1:\n%s", code, out)
	}
	out = w.daloIn(proj, "sync", "--yes")
	for _, want := range []string{"tool guard of team:" + teamKit, "hook guard of team:" + teamKit, "installed team:" + teamKit + " on claude@"} {
		if !strings.Contains(out, want) {
			t.Errorf("sync --yes after the tool changed says no %q:\n%s", want, out)
		}
	}
	for _, asked := range []string{"skill team-skill of", "agent team-agent of"} {
		if strings.Contains(out, asked) {
			t.Errorf("sync --yes after the tool changed asks again for %q, which did not change:\n%s", asked, out)
		}
	}
	w.daloIn(proj, "sync", "--check")
	s = w.run("Run the command you are given.")
	if w.exists("denied") {
		w.failf(s, "in the project, after the tool changed and sync, the command ran: the gate did not deny it")
	}
	drove(t, w.key)
}

// daloIn runs dalo in dir and fails the test unless it exits 0; it
// returns stdout.
func (w *world) daloIn(dir string, args ...string) string {
	w.t.Helper()
	return w.daloEnv(dir, nil, args...)
}

// daloEnv is daloIn with env added to the world's environment.
func (w *world) daloEnv(dir string, env []string, args ...string) string {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), daloTimeout)
	defer cancel()
	cmd := w.DaloCommand(ctx, dir, env, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		w.t.Fatalf("dalo %s in %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), dir, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
