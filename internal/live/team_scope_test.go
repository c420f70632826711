//go:build unix

package live

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
	provtables "dalo/providers"
)

// teamProject writes the team's project into the world's work directory:
// the team's package as a path source, and dalo.toml naming it on the
// world's harness; the author then locks it with a store of their own.
func (w *world) teamProject(files map[string]string) string {
	w.t.Helper()
	proj := w.work
	writeSource(w.t, filepath.Join(proj, "agent-packages"), w.nativeShell(files))
	w.writeFile(filepath.Join(proj, "dalo.toml"), `[sources.team]
path = "agent-packages"

[[packages]]
ref = "team:team-kit"
providers = ["`+w.provider+`"]
`)
	w.daloEnv(proj, []string{"DALO_HOME=" + filepath.Join(w.root, "author-store")}, "lock")
	return proj
}

// table is the provider table the world proves.
func (w *world) table() *provtables.Table {
	w.t.Helper()
	ts, err := provtables.Load()
	if err != nil {
		w.t.Fatal(err)
	}
	tb, err := ts.Resolve(w.key)
	if err != nil {
		w.t.Fatal(err)
	}
	return tb
}

// teamSyncSkipped is a harness whose table states no project scope dalo
// installs into: sync skips it with the table's reason, writes nothing in
// the project nor in the user's settings, and a session in the project
// runs the command the team's gate would deny. Installing the package for
// oneself, as the reason says, makes the gate deny it in the project.
func teamSyncSkipped(t *testing.T) {
	t.Parallel()
	w := newWorld(t, t.Name()[strings.LastIndex(t.Name(), "/")+1:], fakemodel.Script{fakemodel.Run("touch denied"), fakemodel.Say("Done.")})
	p := w.table().Config.Project
	if p == nil || p.Status != provtables.Unsupported {
		t.Fatalf("%s states a project scope dalo installs into: this test proves one that does not", w.key)
	}
	// The team's gate and skill: an agent member would block the user's
	// own install on a harness that reads no agent files (Codex).
	k := teamKitSpec
	k.agents = nil
	proj := w.teamProject(k.files())
	before := listTree(t, proj)
	out := w.daloIn(proj, "sync", "--yes")
	want := "note: team:team-kit on " + w.provider + " skipped: " + w.key + " has no project scope dalo installs into: " + p.Reason
	if !strings.Contains(out, want) {
		t.Errorf("sync --yes does not say %q:\n%s", want, out)
	}
	if strings.Contains(out, "installed") || strings.Contains(out, "Approve") {
		t.Errorf("sync approved or installed for a harness it skips:\n%s", out)
	}
	if after := listTree(t, proj); !slices.Equal(before, after) {
		t.Errorf("sync wrote in the project:\nbefore %v\nafter  %v", before, after)
	}
	if b, err := os.ReadFile(w.hooksFile()); err == nil && strings.Contains(string(b), "dispatch") {
		t.Errorf("sync wrote the user's own %s:\n%s", w.hooksFile(), b)
	}

	// A session in the project: nothing of the team's holds there.
	s := w.run("Run the command you are given.")
	if !w.exists("denied") {
		w.failf(s, "in the project the command did not run, though sync installed nothing for %s", w.provider)
	}
	os.Remove(filepath.Join(proj, "denied"))
	n := len(w.server.Requests())

	// As the note says: the package installed for oneself holds in the
	// project too.
	ref := "team:team-kit"
	w.daloIn(proj, "plugin", "approve", ref, "--provider", w.key, "--all", "--yes")
	args := []string{"plugin", "install", ref, "--provider", w.key}
	if w.provider == "codex" {
		args = append(args, "--trust")
	}
	w.daloIn(proj, args...)
	w.daloIn(proj, "doctor")
	s = w.run("Run the command you are given.")
	if w.exists("denied") {
		w.failf(s, "with the package installed for the user, the command ran in the project")
	}
	denied := false
	for _, q := range w.server.Requests()[n:] {
		denied = denied || q.Contains(markTeamDenied)
	}
	if !denied {
		w.failf(s, "the gate's reason %s did not reach the model", markTeamDenied)
	}
	drove(t, w.key)
}

// teamSyncCopilot syncs the team's project for GitHub Copilot CLI: dalo's
// entries go into .github/copilot/settings.local.json, the skill and the
// agent into .github/skills and .github/agents. In the project not yet
// trusted the command runs (Copilot CLI reads no project hook there, and
// doctor says so); once the user trusts the folder, as Copilot CLI's trust
// prompt records it, the gate denies and the skill and agent reach the
// model; outside the project none of it does.
func teamSyncCopilot(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "copilot", fakemodel.Script{fakemodel.Run("touch denied"), fakemodel.Say("Done.")})
	proj := w.teamProject(teamFiles)
	out := w.daloIn(proj, "sync", "--yes")
	for _, want := range []string{"Approve for team:team-kit on copilot", "installed team:team-kit on copilot@"} {
		if !strings.Contains(out, want) {
			t.Errorf("sync --yes says no %q:\n%s", want, out)
		}
	}
	w.daloIn(proj, "sync", "--check")
	local := filepath.Join(proj, ".github", "copilot", "settings.local.json")
	if b, err := os.ReadFile(local); err != nil || !strings.Contains(string(b), " --project ") {
		t.Fatalf("%s holds no entry of dalo's project scope (err %v):\n%s", local, err, b)
	}
	if _, err := os.Stat(filepath.Join(proj, ".github", "copilot", "settings.json")); err == nil {
		t.Errorf("sync wrote the project's shared .github/copilot/settings.json")
	}
	if b, err := os.ReadFile(w.hooksFile()); err == nil && strings.Contains(string(b), "dispatch") {
		t.Errorf("sync wrote the user's own %s:\n%s", w.hooksFile(), b)
	}
	config := filepath.Join(w.configHome(), "config.json")
	if b, err := os.ReadFile(config); err == nil && strings.Contains(string(b), proj) {
		t.Errorf("dalo recorded the project's folder in %s:\n%s", config, b)
	}
	if doc := w.daloIn(proj, "doctor"); !strings.Contains(doc, w.table().Config.Project.Trust.How) {
		t.Errorf("doctor in the project does not say that Copilot CLI reads its hooks only in a trusted folder:\n%s", doc)
	}

	// Not trusted yet: Copilot CLI reads none of the project's hooks.
	s := w.run("Run the command you are given.")
	if !w.exists("denied") {
		w.failf(s, "in the project not trusted the command did not run: Copilot CLI ran the project's gate there")
	}
	os.Remove(filepath.Join(proj, "denied"))
	untrusted := len(w.server.Requests())

	// Trusted, as Copilot CLI's trust prompt records it.
	w.trustCopilotFolder(proj)
	s = w.run("Run the command you are given.")
	if w.exists("denied") {
		w.failf(s, "in the trusted project the command ran: the team's gate did not deny it")
	}
	for _, m := range []string{markTeamDenied, markTeamSkill, markTeamAgent} {
		found := false
		for _, q := range w.server.Requests()[untrusted:] {
			found = found || q.Contains(m)
		}
		if !found {
			w.failf(s, "in the trusted project %s did not reach the model", m)
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
	drove(t, w.key)
}

// trustProject has the world's user trust the world's project as its
// harness's own trust prompt records it, for a harness that reads a
// project's settings only in a trusted folder. The worlds of Gemini CLI
// and Qwen Code trust every folder already (a trustedFolders.json entry;
// folder trust off, Qwen Code's default).
func (w *world) trustProject() {
	w.t.Helper()
	switch w.provider {
	case "copilot":
		w.trustCopilotFolder(w.work)
	case "gemini", "qwen":
	default:
		w.t.Fatalf("the live tests know no way to trust a folder for %s", w.provider)
	}
}

// trustCopilotFolder adds dir to trusted_folders of Copilot CLI's
// config.json, keeping what else Copilot CLI keeps there, as its trust
// prompt does. Copilot CLI heads the file with // comment lines, which
// it drops.
func (w *world) trustCopilotFolder(dir string) {
	w.t.Helper()
	file := filepath.Join(w.configHome(), "config.json")
	cfg := map[string]any{}
	if b, err := os.ReadFile(file); err == nil {
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "//") {
				lines = append(lines, l)
			}
		}
		if err := json.Unmarshal([]byte(strings.Join(lines, "\n")), &cfg); err != nil {
			w.t.Fatalf("%s: %v", file, err)
		}
	}
	folders, _ := cfg["trusted_folders"].([]any)
	cfg["trusted_folders"] = append(folders, dir)
	b, err := json.Marshal(cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	w.writeFile(file, string(b))
}

// listTree lists every path below dir, relative to it.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// teamSyncCopilotOff syncs the team's gate for GitHub Copilot CLI into a
// trusted project and then sets, one at a time and as its user would,
// each switch of the table's off list to the value that switches hooks
// off, and each setting its drop list checks to a value of a type it
// does not accept, keeping what else the file holds and restoring its
// bytes after. A switch of the project's own settings, or a dropped
// .github/copilot/settings.local.json (where dalo's entries are), turns
// the team's gate off in the project: the denied command runs, and doctor
// run in the project exits 1 naming the key and saying the gate is not in
// force. One that turns off only the hooks of its own file (own_file: the
// user's settings.json) leaves the project's entries running: the gate
// denies, and doctor says it is in force.
func teamSyncCopilotOff(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "copilot", fakemodel.Script{fakemodel.Run("touch denied"), fakemodel.Say("Done.")})
	proj := w.teamProject(teamFiles)
	w.daloIn(proj, "sync", "--yes")
	w.trustCopilotFolder(proj)
	tb := w.table()
	local := filepath.Join(proj, filepath.FromSlash(tb.Config.Project.Hooks.Path))
	type setting struct {
		loc     provtables.Location
		key     string
		value   any
		ownFile bool
	}
	var settings []setting
	for _, sw := range tb.Config.Off {
		settings = append(settings, setting{sw.Location, sw.Key, sw.Value, sw.OwnFile})
	}
	for _, d := range tb.Config.Drop {
		for _, c := range d.Checks {
			v, ok := otherType(c.Types)
			if !ok || strings.Contains(c.Path, "*") {
				t.Fatalf("%s: drop check %s: the test sets no value of a type it rejects", tb.Key(), c.Path)
			}
			settings = append(settings, setting{d.Location, c.Path, v, d.OwnFile})
		}
	}
	subject := "project " + proj + " copilot team:team-kit/guard on PreToolUse"
	n := 0
	for _, st := range settings {
		file := filepath.Join(proj, filepath.FromSlash(st.loc.Path))
		if st.loc.Root != "project" {
			var err error
			if file, err = tb.Path(st.loc, w.getenv); err != nil {
				t.Fatal(err)
			}
		}
		old, err := os.ReadFile(file)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		m := map[string]any{}
		if len(old) > 0 {
			if err := json.Unmarshal(old, &m); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
		}
		setDotted(m, st.key, st.value)
		w.writeJSON(file, m)
		out, code := w.daloExitIn(proj, "doctor")
		s := w.run("Run the command you are given.")
		ran := w.exists("denied")
		reason := false
		for _, q := range w.server.Requests()[n:] {
			reason = reason || q.Contains(markTeamDenied)
		}
		n = len(w.server.Requests())
		value, _ := json.Marshal(st.value)
		t.Logf("%s = %s in %s: doctor exit %d, the denied command ran %v", st.key, value, file, code, ran)
		if st.ownFile && file != local {
			if code != 0 || !strings.Contains(out, "in force   "+subject+": required") {
				t.Errorf("%s = %s in %s, which turns off that file's hooks only: doctor in the project exit %d, want 0 saying %q:\n%s", st.key, value, file, code, subject, out)
			}
			if ran || !reason {
				w.failf(s, "%s = %s in %s: the denied command ran = %v, the gate's reason reached the model = %v; want false, true (the project's hooks still run)", st.key, value, file, ran, reason)
			}
		} else {
			if code != 1 || !strings.Contains(out, st.key) || !strings.Contains(out, subject+": required, NOT in force") {
				t.Errorf("%s = %s in %s: doctor in the project exit %d, want 1 naming the key and saying %q is NOT in force:\n%s", st.key, value, file, code, subject, out)
			}
			if !ran || reason {
				w.failf(s, "%s = %s in %s: the denied command ran = %v, the gate's reason reached the model = %v; want true, false (Copilot CLI runs none of dalo's project entries)", st.key, value, file, ran, reason)
			}
		}
		os.Remove(filepath.Join(proj, "denied"))
		if old == nil {
			os.Remove(file)
		} else {
			w.writeFile(file, string(old))
		}
	}
	drove(t, w.key)
}

// otherType returns a JSON value of none of the types a drop check
// accepts.
func otherType(types []string) (any, bool) {
	for _, c := range []struct {
		typ string
		v   any
	}{{"string", "true"}, {"number", 1}, {"boolean", true}, {"null", nil}, {"array", []any{}}, {"object", map[string]any{}}} {
		if !slices.Contains(types, c.typ) {
			return c.v, true
		}
	}
	return nil, false
}

// teamSyncCopilotClaude syncs a team's gate for Claude Code alone into a
// project, with the Claude Code the live run proves named to dalo, and
// runs GitHub Copilot CLI there, the folder trusted: Copilot CLI runs
// dalo's Claude Code entry of .claude/settings.local.json with its own
// payload (no tool_use_id, transcript_path or permission_mode), and the
// gate's deny, in Claude Code's shape, denies the call; doctor run in the
// project says so. Synced for both harnesses, one call Copilot CLI makes
// runs the gate twice, once from each harness's entries, and doctor warns
// of it.
func teamSyncCopilotClaude(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "copilot", fakemodel.Script{fakemodel.Run("touch probed"), fakemodel.Say("Done.")})
	// The gate logs each payload, and denies while $LIVE_OUT/deny exists.
	k := teamKitSpec
	k.skills, k.agents = nil, nil
	h := k.hooks[0]
	h.env = []string{"PATH", "LIVE_OUT"}
	h.handler = "#!/bin/sh\nin=$(cat)\necho \"$in\" >> \"$LIVE_OUT/gate.ran\"\nif [ -e \"$LIVE_OUT/deny\" ]; then echo '{\"kind\":\"deny\",\"reason\":\"" + markTeamDenied + "\"}'; else echo '{\"kind\":\"abstain\"}'; fi\n"
	k.hooks = []kitHook{h}
	proj := w.work
	writeSource(t, filepath.Join(proj, "agent-packages"), w.nativeShell(k.files()))
	lock := func(providers string) {
		w.writeFile(filepath.Join(proj, "dalo.toml"), "[sources.team]\npath = \"agent-packages\"\n\n[[packages]]\nref = \"team:team-kit\"\nproviders = ["+providers+"]\n")
		w.daloEnv(proj, []string{"DALO_HOME=" + filepath.Join(w.root, "author-store")}, "lock")
	}
	lock(`"claude"`)
	w.daloIn(proj, "providers", "use", "claude", helperHarness(t, "claude"))
	if out := w.daloIn(proj, "sync", "--yes"); !strings.Contains(out, "installed team:team-kit on claude@") || strings.Contains(out, "on copilot") {
		t.Fatalf("sync for Claude Code alone:\n%s", out)
	}
	others := w.table().Config.Project.Others
	if len(others) != 1 || others[0].Harness != "claude" {
		t.Fatalf("the copilot table's project.others is %+v, want Claude Code's file", others)
	}
	if doc := w.daloIn(proj, "doctor"); !strings.Contains(doc, "note       project "+proj+" claude: "+others[0].Means) {
		t.Errorf("doctor in the project does not say Copilot CLI runs dalo's Claude Code entries:\n%s", doc)
	}
	w.trustCopilotFolder(proj)
	ran := func() []string {
		b, _ := os.ReadFile(filepath.Join(w.out, "gate.ran"))
		os.Remove(filepath.Join(w.out, "gate.ran"))
		if len(b) == 0 {
			return nil
		}
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}

	// Synced for Claude Code alone: its entry runs in Copilot CLI.
	w.writeFile(filepath.Join(w.out, "deny"), "")
	s := w.run("Run the command you are given.")
	payloads := ran()
	if w.exists("probed") || !w.server.Contains(markTeamDenied) || len(payloads) != 1 {
		w.failf(s, "synced for Claude Code: the command ran = %v, the gate's reason reached the model = %v, the gate ran %d times; want false, true, 1", w.exists("probed"), w.server.Contains(markTeamDenied), len(payloads))
	}
	for _, p := range payloads {
		var m map[string]any
		if err := json.Unmarshal([]byte(p), &m); err != nil {
			t.Fatalf("the gate's payload %q: %v", p, err)
		}
		for _, k := range []string{"tool_use_id", "transcript_path", "permission_mode"} {
			if _, ok := m[k]; ok {
				t.Errorf("Copilot CLI's payload to dalo's Claude Code entry holds %s: %s", k, p)
			}
		}
		if m["hook_event_name"] != "PreToolUse" || m["tool_name"] != "Bash" {
			t.Errorf("Copilot CLI's payload to dalo's Claude Code entry: %s", p)
		}
	}
	os.Remove(filepath.Join(w.out, "deny"))

	// Synced for both: one call, the gate twice.
	lock(`"claude", "copilot"`)
	w.daloIn(proj, "sync", "--yes")
	if doc := w.daloIn(proj, "doctor"); !strings.Contains(doc, "warning    project "+proj+" claude: ") || !strings.Contains(doc, "each hook runs twice") {
		t.Errorf("doctor in the project synced for both does not warn that each hook runs twice:\n%s", doc)
	}
	s = w.run("Run the command you are given.")
	if n := len(ran()); !w.exists("probed") || n != 2 {
		w.failf(s, "synced for both: the command ran = %v, the gate ran %d times on its one call; want true, 2", w.exists("probed"), n)
	}
	drove(t, w.key)
}
