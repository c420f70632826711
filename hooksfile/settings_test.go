package hooksfile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"dalo/providers"
)

// shippedTable is the table dalo ships for harness@version.
func shippedTable(t *testing.T, harness, version string) *providers.Table {
	t.Helper()
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	tb, ok := ts.Lookup(harness, version)
	if !ok {
		t.Fatalf("no %s@%s", harness, version)
	}
	return tb
}

// TestSettingsDefaults: a switch in a file of defaults is set only while
// the hook file, which overrides it, does not set the key itself; and a
// value the harness reads by its truthiness is off for each false one.
func TestSettingsDefaults(t *testing.T) {
	g := shippedTable(t, "gemini", "0.61.0")
	tb := *g
	dir := t.TempDir()
	defaults := filepath.Join(dir, "defaults.json")
	tb.Config.Off = []providers.Switch{{
		Location: providers.Location{Root: "system", Path: "etc/defaults.json", Env: "DEFAULTS"},
		Key:      "hooksConfig.enabled", Values: []any{false, int64(0), ""}, Default: true, Means: "off",
	}}
	env := map[string]string{"DEFAULTS": defaults, "GEMINI_CLI_HOME": dir, "HOME": dir}
	user := filepath.Join(dir, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		defaults, user string
		off            bool
	}{
		{`{"hooksConfig": {"enabled": false}}`, `{}`, true},
		{`{"hooksConfig": {"enabled": 0}}`, `{"hooks": {}}`, true},
		{`{"hooksConfig": {"enabled": ""}}`, `// mine` + "\n" + `{}`, true},
		{`{"hooksConfig": {"enabled": false}}`, `{"hooksConfig": {"enabled": true}}`, false},
		{`{"hooksConfig": {"enabled": true}}`, `{}`, false},
		{`{"hooksConfig": {"enabled": 1}}`, `{}`, false},
		{`{}`, `{}`, false},
	} {
		for file, text := range map[string]string{defaults: c.defaults, user: c.user} {
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := &Settings{Table: &tb, Getenv: func(k string) string { return env[k] }}
		offs := r.Off()
		if got := len(offs) == 1; got != c.off || len(offs) > 1 {
			t.Errorf("defaults %s, user %s: %d settings off (%v), want off = %v", c.defaults, c.user, len(offs), offs, c.off)
		}
		if len(r.Warnings) > 0 {
			t.Errorf("defaults %s, user %s: warnings %v", c.defaults, c.user, r.Warnings)
		}
	}
}

// TestSettingsCopilotProject: GitHub Copilot CLI's disableAllHooks in the
// user's settings.json switches off that file's hooks only, so it turns
// dalo's entries off where they are there and not where they are in a
// project's settings.local.json; set in any of a project's settings files
// it switches off every hook, dalo's in the user's settings and in the
// project's alike, and doctor reads it only when run in that project. Of
// another type than boolean it loses the hooks of its own file only.
func TestSettingsCopilotProject(t *testing.T) {
	user := shippedTable(t, "copilot", "1.0.102")
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	inProject, err := user.InProject(proj)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": dir, "COPILOT_HOME": filepath.Join(dir, ".copilot")}
	userFile := filepath.Join(dir, ".copilot", "settings.json")
	for _, c := range []struct {
		file, text string
		// userOff, projectOff: it switches off the entries of the
		// user's install, of the project's; fromProject: it is the
		// project's own, read by doctor run in the project only.
		userOff, projectOff, fromProject bool
	}{
		{userFile, `{"disableAllHooks": true}`, true, false, false},
		{userFile, `{"disableAllHooks": false}`, false, false, false},
		{filepath.Join(proj, ".github/copilot/settings.json"), `{"disableAllHooks": true}`, true, true, true},
		{filepath.Join(proj, ".github/copilot/settings.local.json"), `{"disableAllHooks": true, "hooks": {}}`, true, true, true},
		{filepath.Join(proj, ".claude/settings.json"), `{"disableAllHooks": true}`, true, true, true},
		{filepath.Join(proj, ".claude/settings.local.json"), `{"disableAllHooks": true}`, true, true, true},
		{filepath.Join(proj, ".claude/settings.local.json"), `{"disableAllHooks": "true"}`, false, false, false},
		// Of another type: that file's hooks lost, and only those.
		{userFile, `{"disableAllHooks": "true"}`, true, false, false},
		{filepath.Join(proj, ".github/copilot/settings.local.json"), `{"disableAllHooks": null}`, false, true, true},
		{filepath.Join(proj, ".github/copilot/settings.json"), `{"disableAllHooks": 0}`, false, false, false},
		{filepath.Join(proj, ".github/hooks/mine.json"), `{"disableAllHooks": true}`, false, false, false},
	} {
		if err := os.MkdirAll(filepath.Dir(c.file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(c.file, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, s := range []struct {
			what string
			t    *providers.Table
			want bool
		}{
			{"the user's install", user, c.userOff},
			{"the project's install", inProject, c.projectOff},
		} {
			r := &Settings{Table: s.t, Getenv: func(k string) string { return env[k] }, Project: proj}
			offs := r.Off()
			if got := len(offs) > 0; got != s.want || len(offs) > 1 {
				t.Errorf("%s in %s: %d settings switch off %s (%+v), want off = %v", c.text, c.file, len(offs), s.what, offs, s.want)
			}
			if len(offs) == 1 && offs[0].Project != c.fromProject {
				t.Errorf("%s in %s: a project's own setting = %v, want %v", c.text, c.file, offs[0].Project, c.fromProject)
			}
		}
		// Doctor run outside the project reads none of its files.
		r := &Settings{Table: user, Getenv: func(k string) string { return env[k] }}
		if offs := r.Off(); c.fromProject && len(offs) > 0 {
			t.Errorf("%s in %s: read by doctor run outside the project: %+v", c.text, c.file, offs)
		}
		if err := os.Remove(c.file); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSettingsByteOrderMark: a config.toml that starts with a UTF-8 byte
// order mark, which Codex reads past, is read past too: its switch is
// found, and it is no file doctor cannot read.
func TestSettingsByteOrderMark(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	codex, ok := ts.Newest("codex")
	if !ok {
		t.Fatal("no codex table")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte("\ufeff[features]\ncodex_hooks = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CODEX_HOME": dir, "HOME": dir}
	r := &Settings{Table: codex, Getenv: func(k string) string { return env[k] }}
	if offs := r.Off(); len(offs) != 1 {
		t.Errorf("%d settings off (%v), want features.codex_hooks", len(offs), offs)
	}
	if len(r.Warnings) > 0 {
		t.Errorf("warnings %v, want none", r.Warnings)
	}
}

// TestSettingsOffInEventOrder: when a list of commands names several of
// dalo's entries, Off lists them in the order of their events' names, the
// same on every run (doctor prints them so), not in a map's order.
func TestSettingsOffInEventOrder(t *testing.T) {
	g := shippedTable(t, "gemini", "0.61.0")
	dir := t.TempDir()
	env := map[string]string{"GEMINI_CLI_HOME": dir, "HOME": dir}
	entries := map[string]Entry{}
	var commands, events []string
	for ev := range g.Events {
		command := "/bin/dalo-hook dispatch --provider gemini --event " + ev
		e, err := g.Entry(ev, command, 60)
		if err != nil {
			t.Fatal(err)
		}
		entries[ev] = Entry(e)
		commands = append(commands, command)
		events = append(events, ev)
	}
	if len(events) < 4 {
		t.Fatalf("gemini@0.61.0 has %d events; the test wants several", len(events))
	}
	slices.Sort(events)
	list, _ := json.Marshal(map[string]any{"hooksConfig": map[string]any{"disabled": commands}})
	user := filepath.Join(dir, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, list, 0o644); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		r := &Settings{Table: g, Getenv: func(k string) string { return env[k] }, Entries: entries}
		var got []string
		for _, o := range r.Off() {
			got = append(got, o.Event)
		}
		if !slices.Equal(got, events) {
			t.Fatalf("Off's events %v, want %v", got, events)
		}
	}
}
