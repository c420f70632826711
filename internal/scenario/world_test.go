package scenario

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
	"dalo/providers"
)

// Every template of every shipped table's headless section uses only the
// placeholders a world fills: a typo would reach the harness as text.
func TestHeadlessPlaceholders(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	brace := regexp.MustCompile(`\{[a-z_]+\}`)
	for _, tb := range ts.All() {
		h := tb.Headless
		strs := append(append(slices.Clone(h.Args), h.Stream...), h.Updates)
		for _, v := range h.Env {
			strs = append(strs, v)
		}
		for _, f := range h.Files {
			strs = append(strs, f.Content, f.Path)
		}
		for _, s := range strs {
			for _, p := range brace.FindAllString(s, -1) {
				if !slices.Contains(Placeholders, p) {
					t.Errorf("%s: headless %q: %s is no placeholder (%s)", tb.Key(), s, p, strings.Join(Placeholders, " "))
				}
			}
		}
		if !slices.Contains(h.Args, "{prompt}") {
			t.Errorf("%s: headless.args %q never pass the prompt", tb.Key(), h.Args)
		}
	}
}

// A world built from each table's headless section: the variables name
// the world's model server and its own paths, never the user's; the files
// are written below the configuration home the table finds in that
// environment, with the world's paths escaped as the file's strings need
// (a root holding a quote and a backslash); a session's command line
// carries the prompt and the tools whole, as one argument each.
func TestWorldFromTable(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range ts.All() {
		t.Run(tb.Key(), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), `a"b\c`)
			m := Machine{Harness: tb.Name, Bin: filepath.Join(t.TempDir(), tb.Name), Dalo: "dalo", Table: tb.Key()}
			w, err := NewWorld(m, root, func(*World) fakemodel.Script { return nil })
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if w.Provider != tb {
				t.Fatalf("world of %s runs the headless section of %s", tb.Key(), w.Provider.Key())
			}
			for name, tmpl := range tb.Headless.Env {
				got := w.Getenv(name)
				if strings.Contains(tmpl, "{server}") && !strings.Contains(got, w.Server.URL) {
					t.Errorf("%s = %q, want the world's server %s", name, got, w.Server.URL)
				}
				if strings.Contains(got, "{") {
					t.Errorf("%s = %q: a placeholder left", name, got)
				}
			}
			if home := w.ConfigHome(); !strings.HasPrefix(home, root+string(filepath.Separator)) {
				t.Errorf("configuration home %q, want one below the world's root %q", home, root)
			}
			if hooks := w.HooksFile(); !strings.HasPrefix(hooks, w.ConfigHome()) {
				t.Errorf("hooks file %q, want one in the configuration home %q", hooks, w.ConfigHome())
			}
			for _, f := range tb.Headless.Files {
				if f.Root != "config_home" {
					continue
				}
				b, err := os.ReadFile(filepath.Join(w.ConfigHome(), f.Path))
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasSuffix(f.Path, ".json") {
					var v any
					if err := json.Unmarshal(b, &v); err != nil {
						t.Errorf("%s is no JSON with the world's paths in it: %v\n%s", f.Path, err, b)
					}
				}
				if strings.Contains(f.Content, "{work}") && !strings.Contains(string(b), strings.ReplaceAll(strings.ReplaceAll(w.Work, `\`, `\\`), `"`, `\"`)) {
					t.Errorf("%s does not name the project %q, escaped:\n%s", f.Path, w.Work, b)
				}
			}
			const prompt = `say "hi" {tools}`
			w.AllowedTools = "Bash,Skill"
			args := w.Args(prompt)
			if !slices.Contains(args, prompt) {
				t.Errorf("args %q do not pass the prompt %q as one argument", args, prompt)
			}
			if slices.Contains(tb.Headless.Args, "{tools}") && !slices.Contains(args, "Bash,Skill") {
				t.Errorf("args %q do not pass the allowed tools", args)
			}
			w.StreamJSON = true
			if s := w.Args(prompt); len(tb.Headless.Stream) > 0 && slices.Equal(s, args) {
				t.Errorf("StreamJSON: args %q, want the table's stream command line", s)
			}
		})
	}
}
