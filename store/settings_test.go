package store

import (
	"os"
	"path/filepath"
	"testing"

	"dalo/providers"
)

// TestSettingsDefaults: a switch in a file of defaults is set only while
// the hook file, which overrides it, does not set the key itself; and a
// value the harness reads by its truthiness is off for each false one.
func TestSettingsDefaults(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	g, ok := ts.Lookup("gemini", "0.61.0")
	if !ok {
		t.Fatal("no gemini@0.61.0")
	}
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
		r := &settingsReader{t: &tb, getenv: func(k string) string { return env[k] }}
		offs := r.offs()
		if got := len(offs) == 1; got != c.off || len(offs) > 1 {
			t.Errorf("defaults %s, user %s: %d settings off (%v), want off = %v", c.defaults, c.user, len(offs), offs, c.off)
		}
		if len(r.warnings) > 0 {
			t.Errorf("defaults %s, user %s: warnings %v", c.defaults, c.user, r.warnings)
		}
	}
}
