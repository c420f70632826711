package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/providers"
)

// TestProjectScope installs a package into a project's scope and removes
// it: the entries go into the project's per-user settings file, with the
// user's own bytes kept, calling the dispatcher with the project's scope;
// the records and plans are the project's, the user's scope untouched;
// doctor run in the project finds them in force; remove restores the
// file byte for byte.
func TestProjectScope(t *testing.T) {
	s, _, _ := approvedKit(t)
	home := filepath.Dir(s.Dir)
	proj := filepath.Join(home, "proj")
	local := filepath.Join(proj, ".claude", "settings.local.json")
	const mine = "{\n  \"permissions\" :  {\"allow\": [\"Bash(ls)\"]}\n}\n"
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := s.InProject(proj)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := ps.Select("company:kit", "claude@2.1.332")
	if err != nil {
		t.Fatal(err)
	}
	// The grants approved on claude@2.1.233 are the provider's: the
	// project's install uses them, asking nothing again.
	if sel.Table, err = sel.Table.InProject(ps.Project()); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	res, err := ps.Install(sel, Dispatcher{Exe: exe}, InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Config != local {
		t.Errorf("install wrote %s, want the project's %s", res.Config, local)
	}
	b, _ := os.ReadFile(local)
	id := ProjectID(proj)
	if !strings.Contains(string(b), "--project "+id+" --provider claude --event PostToolUse") {
		t.Errorf("%s has no entry calling the project's scope:\n%s", local, b)
	}
	if !strings.HasPrefix(string(b), "{\n  \"permissions\" :  {\"allow\": [\"Bash(ls)\"]}") {
		t.Errorf("the user's bytes were not kept:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(home, "claude", "settings.json")); err == nil {
		t.Errorf("the project's install wrote the user's own settings")
	}
	for _, p := range []string{"projects/" + id + "/installs/claude.json", "projects/" + id + "/plans/claude.json", "projects/" + id + "/project.json"} {
		if _, err := os.Stat(filepath.Join(s.Dir, p)); err != nil {
			t.Errorf("the project's scope has no %s: %v", p, err)
		}
	}
	if in, err := s.Installed("claude"); err != nil || len(in.Packages) != 0 {
		t.Errorf("the user's scope holds %+v (%v), want nothing", in, err)
	}
	checkProjectDoctor(t, s, ps, proj)
	// Approving or revoking a grant the project's hooks run with warns of
	// them: GrantUses, asked of the user's store, finds them and names
	// the project.
	pin, err := ps.Installed("claude")
	if err != nil || len(pin.Packages) == 0 || len(pin.Packages[0].Hooks) == 0 {
		t.Fatalf("the project's install record: %+v (%v)", pin, err)
	}
	uses, err := s.GrantUses(pin.Packages[0].Hooks[0].Hook.ToolGrant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(uses) == 0 || uses[0].Project != ps.Project() {
		t.Errorf("GrantUses of the project's tool grant: %+v, want its hooks, in %s", uses, ps.Project())
	}
	// A writer of the user's scope collects nothing the project uses.
	l, err := s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	for _, d := range res.Staged {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("staged tree %s the project runs was collected: %v", d, err)
		}
	}
	if _, err := ps.Remove(sel.Table, []string{"company:kit"}, Dispatcher{Exe: exe}, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(local); string(b) != mine {
		t.Errorf("after remove %s is\n%s\nwant the user's own bytes\n%s", local, b, mine)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "projects", id)); err == nil {
		t.Error("removing the project's last package left its scope in the store")
	}
}

// checkProjectDoctor: doctor in the project finds no problem, and doctor
// of the user's, run in the project (a directory below it), checks the
// project's installs too, naming the project.
func checkProjectDoctor(t *testing.T, s *Store, ps *Store, proj string) {
	t.Helper()
	fs, err := ps.Doctor(DoctorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Status == StatusProblem {
			t.Errorf("doctor in the project: %s: %s", f.Subject, f.Message)
		}
	}
	sub := filepath.Join(proj, "src")
	os.MkdirAll(sub, 0o755)
	fs, err = s.Doctor(DoctorOptions{Project: sub})
	if err != nil {
		t.Fatal(err)
	}
	inForce, trustNoted := false, false
	for _, f := range fs {
		if f.Status == StatusProblem {
			t.Errorf("doctor in the project: %s: %s", f.Subject, f.Message)
		}
		if f.Status == StatusInForce && f.Subject == "project "+ps.Project()+" claude company:kit/A on PostToolUse" {
			inForce = true
		}
		if f.Status == StatusNote && f.Subject == "project "+ps.Project()+" claude" && strings.Contains(f.Message, "trust a folder") {
			trustNoted = true
		}
	}
	if !inForce {
		t.Errorf("doctor run in the project does not say the project's hook is in force: %+v", fs)
	}
	if !trustNoted {
		t.Errorf("doctor run in the project does not say how Claude Code trusts a folder: %+v", fs)
	}
}

// TestProjectScopeNeedsTable: a table that states no project scope, or
// one without a place dalo may write, is refused by name.
func TestProjectScopeNeedsTable(t *testing.T) {
	_, _, sel := approvedKit(t)
	none := *sel.Table
	none.Config.Project = nil
	if _, err := none.InProject(t.TempDir()); err == nil || !strings.Contains(err.Error(), "claude@2.1.233: its table states no project scope") {
		t.Errorf("InProject on a table without a project scope: %v", err)
	}
	unsupported := *sel.Table
	unsupported.Config.Project = &providers.Project{Status: providers.Unsupported, Reason: "its project settings are committed"}
	if _, err := unsupported.InProject(t.TempDir()); err == nil || err.Error() != "claude@2.1.233 has no project scope dalo installs into: its project settings are committed" {
		t.Errorf("InProject on a table whose project scope is unsupported: %v", err)
	}
	if _, err := sel.Table.InProject("relative"); err == nil {
		t.Error("InProject took a relative directory")
	}
}
