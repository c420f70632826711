//go:build unix

package live

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
)

// Where each harness reads a project's own hooks, and when, proved
// against the harness itself with no dalo: a SessionStart hook written by
// hand into each file the harness might read in the project, each touching
// a marker named for its file, and a headless session in the project, in a
// folder the user has not trusted and in one they have. What fired is what
// the tables' project sections rest on (providers/testdata/README.md,
// "A project's own hooks").

// A projectFile is one file a harness may read a project's hooks from,
// relative to the project, and the hook entry written there by hand.
type projectFile struct {
	path    string
	content func(marker string) string
}

// A projectProbe is a harness's candidate files, how its user trusts the
// project's folder, and which files' hooks fired untrusted and trusted.
type projectProbe struct {
	files []projectFile
	// trust marks the world's project trusted as the harness's own trust
	// dialog records it; untrust leaves it (or makes it) untrusted.
	trust, untrust func(w *world)
	// untrusted and trusted list the files whose hooks fired; untrusted
	// nil with untrustedExit set: the harness refuses to run at all.
	untrusted, trusted []string
	untrustedFails     bool
}

// claudeShape is a hooks file in Claude Code's nested shape.
func claudeShape(marker string) string {
	return fmt.Sprintf(`{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch %s", "timeout": 10}]}]}}`, marker)
}

var projectProbes = map[string]projectProbe{
	"codex": {
		files: []projectFile{{".codex/hooks.json", claudeShape}},
		// Codex 0.147.0 records the trust itself in a run with
		// --dangerously-bypass-approvals-and-sandbox (finding 80).
		trust: func(w *world) {
			f := filepath.Join(w.configHome(), "config.toml")
			entry := fmt.Sprintf("[projects.%q]\ntrust_level = \"trusted\"\n", w.work)
			if b, _ := os.ReadFile(f); !strings.Contains(string(b), entry) {
				w.appendFile(f, "\n"+entry)
			}
		},
		untrusted: []string{},
		trusted:   []string{".codex/hooks.json"},
	},
	"gemini": {
		files: []projectFile{{".gemini/settings.json", func(m string) string {
			return fmt.Sprintf(`{"hooks": {"SessionStart": [{"hooks": [{"name": "probe", "type": "command", "command": "touch %s", "timeout": 10000}]}]}}`, m)
		}}},
		// The world's user trusted the project (its trustedFolders.json).
		untrust: func(w *world) {
			w.writeFile(filepath.Join(w.configHome(), "trustedFolders.json"), "{}\n")
		},
		trusted:        []string{".gemini/settings.json"},
		untrustedFails: true,
	},
	"qwen": {
		files: []projectFile{{".qwen/settings.json", claudeShape}},
		// Folder trust is off by default; a user who turns it on and has
		// not trusted the project.
		untrust: func(w *world) {
			w.writeFile(filepath.Join(w.configHome(), "settings.json"), `{"security": {"folderTrust": {"enabled": true}}}`)
		},
		trust: func(w *world) {
			w.writeFile(filepath.Join(w.configHome(), "settings.json"), `{"security": {"folderTrust": {"enabled": true}}}`)
			w.writeFile(filepath.Join(w.configHome(), "trustedFolders.json"), fmt.Sprintf("{%q: \"TRUST_FOLDER\"}\n", w.work))
		},
		untrusted: []string{},
		trusted:   []string{".qwen/settings.json"},
	},
	"copilot": {
		files: []projectFile{
			{".github/copilot/settings.json", claudeShape},
			{".github/copilot/settings.local.json", claudeShape},
			{".claude/settings.local.json", claudeShape},
			{".github/hooks/probe.json", func(m string) string {
				return fmt.Sprintf(`{"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "touch %s", "timeoutSec": 10}]}}`, m)
			}},
		},
		trust: func(w *world) {
			w.writeFile(filepath.Join(w.configHome(), "config.json"), fmt.Sprintf(`{"trusted_folders": [%q]}`, w.work))
		},
		untrusted: []string{},
		trusted:   []string{".github/copilot/settings.json", ".github/copilot/settings.local.json", ".claude/settings.local.json", ".github/hooks/probe.json"},
	},
}

// TestProjectHooks runs each harness's probe: a session in the project
// untrusted, then trusted, each checked for the markers its project's
// hooks touched.
func TestProjectHooks(t *testing.T) {
	for _, name := range sorted(mapsKeys(projectProbes)) {
		t.Run(name, func(t *testing.T) {
			needs(t, name)
			t.Parallel()
			projectHooks(t, name, projectProbes[name])
		})
	}
}

func projectHooks(t *testing.T, name string, p projectProbe) {
	w := newWorld(t, name, fakemodel.Script{fakemodel.Say("Done.")})
	markers := map[string]string{}
	for i, f := range p.files {
		m := filepath.Join(w.out, fmt.Sprintf("project-hook-%d", i))
		markers[f.path] = m
		w.writeFile(filepath.Join(w.work, f.path), f.content(m))
	}
	fired := func() []string {
		var out []string
		for path, m := range markers {
			if _, err := os.Stat(m); err == nil {
				out = append(out, path)
				os.Remove(m)
			}
		}
		sort.Strings(out)
		return out
	}
	if p.untrust != nil {
		p.untrust(w)
	}
	s, err := w.runExit("Say done.")
	got := fired()
	t.Logf("untrusted: exit %v, fired %v\nstderr: %s", err, got, clip(s.stderr))
	if p.untrustedFails != (err != nil) {
		w.failf(s, "untrusted: the session ended with %v, want failure %v", err, p.untrustedFails)
	}
	if want := sorted(p.untrusted); !slices.Equal(got, want) {
		w.failf(s, "untrusted: the project's hooks of %v fired, want %v", got, want)
	}
	if name == "codex" {
		b, _ := os.ReadFile(filepath.Join(w.configHome(), "config.toml"))
		t.Logf("config.toml after the untrusted run:\n%s", b)
	}
	if p.trust != nil {
		p.trust(w)
	}
	if name == "gemini" {
		w.writeFile(filepath.Join(w.configHome(), "trustedFolders.json"), fmt.Sprintf("{%q: \"TRUST_FOLDER\"}\n", w.work))
	}
	s, err = w.runExit("Say done.")
	got = fired()
	t.Logf("trusted: exit %v, fired %v\nstderr: %s", err, got, clip(s.stderr))
	if err != nil {
		w.failf(s, "trusted: the session failed: %v", err)
	}
	if want := sorted(p.trusted); !slices.Equal(got, want) {
		w.failf(s, "trusted: the project's hooks of %v fired, want %v", got, want)
	}
	drove(t, w.key)
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

func mapsKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
