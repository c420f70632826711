package project

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(deep); !errors.Is(err, ErrNoProject) {
		t.Fatalf("Find without dalo.toml: %v, want ErrNoProject", err)
	}
	// A directory called dalo.toml is not a project's file.
	if err := os.Mkdir(filepath.Join(root, "a", File), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(deep); !errors.Is(err, ErrNoProject) {
		t.Fatalf("Find with a directory dalo.toml: %v, want ErrNoProject", err)
	}
	if err := os.WriteFile(filepath.Join(root, File), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{root, deep, filepath.Join(root, "a")} {
		got, err := Find(dir)
		if err != nil || got != root {
			t.Errorf("Find(%s) = %q, %v; want %s", dir, got, err, root)
		}
	}
}

const validProject = `[sources.team]
git = "https://example.com/team/agent-packages.git"
ref = "main"

[sources.local]
path = "tools/agents/"

[[packages]]
ref = "team:guard"
providers = ["claude", "codex"]

[[packages]]
ref = "local:notes"
providers = ["gemini"]
`

func TestParse(t *testing.T) {
	p, err := Parse("/project", []byte(validProject))
	if err != nil {
		t.Fatal(err)
	}
	want := []Source{
		{ID: "local", Path: "tools/agents"},
		{ID: "team", Git: "https://example.com/team/agent-packages.git", Ref: "main"},
	}
	if len(p.Sources) != 2 || p.Sources[0] != want[0] || p.Sources[1] != want[1] {
		t.Errorf("sources = %+v, want %+v", p.Sources, want)
	}
	if len(p.Packages) != 2 || p.Packages[0].Ref() != "team:guard" || strings.Join(p.Packages[0].Providers, ",") != "claude,codex" || p.Packages[1].Ref() != "local:notes" {
		t.Errorf("packages = %+v", p.Packages)
	}
	if d := p.Dir(p.Sources[0]); d != filepath.Join("/project", "tools", "agents") {
		t.Errorf("Dir = %s", d)
	}
}

// TestParseRefused holds each mistake to one finding, at its line and
// column, naming its field.
func TestParseRefused(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unknown top-level field", "[sources.a]\npath = \"x\"\n[[packages]]\nref = \"a:b\"\nprovider = [\"claude\"]\n",
			"dalo.toml:5:1: error E020 packages[0].provider: unknown field provider; did you mean providers?"},
		{"unknown source field", "[sources.a]\npath = \"x\"\nbranch = \"main\"\n",
			"dalo.toml:3:1: error E020 sources.a.branch: unknown field branch; sources.a takes git, path, ref"},
		{"unknown field in the document", "[source.a]\npath = \"x\"\n",
			"dalo.toml:1:1: error E020 source: unknown field source; did you mean sources?"},
		{"missing providers", "[sources.a]\npath = \"x\"\n[[packages]]\nref = \"a:b\"\n",
			"dalo.toml:3:3: error E021 packages[0].providers: missing required field providers in packages[0]"},
		{"bad ref", "[sources.a]\npath = \"x\"\n[[packages]]\nref = \"a/b\"\nproviders = [\"claude\"]\n",
			"dalo.toml:4:7: error E023 packages[0].ref: invalid ref \"a/b\": expected SOURCE:NAME, a source of [sources] and a package name"},
		{"both git and path", "[sources.a]\npath = \"x\"\ngit = \"https://h/r.git\"\n",
			"dalo.toml:2:8: error E110 sources.a.path: source a has both git and path; it is one or the other"},
		{"neither", "[sources.a]\nref = \"main\"\n",
			"dalo.toml:1:10: error E110 sources.a: source a has neither git nor path: give git = URL or path = DIR"},
		{"ref on a path", "[sources.a]\npath = \"x\"\nref = \"main\"\n",
			"dalo.toml:3:7: error E110 sources.a.ref: source a is a directory: ref is for a git source"},
		{"credentials", "[sources.a]\ngit = \"https://me:secret@h/r.git\"\n",
			"dalo.toml:2:7: error E111 sources.a.git: git URL https://h/r.git holds credentials, and dalo.toml is committed: leave them to git's credential helper or ssh"},
		{"http", "[sources.a]\ngit = \"http://h/r.git\"\n",
			"dalo.toml:2:7: error E111 sources.a.git: git URL http://h/r.git: transport not allowed: http (use https); dalo fetches git sources over https, ssh, file only"},
		{"not a URL", "[sources.a]\ngit = \"some/dir\"\n",
			"dalo.toml:2:7: error E111 sources.a.git: some/dir is not a git URL (https://, ssh://, git@host:path or file://); a directory of the project is path = DIR"},
		{"path leaves", "[sources.a]\npath = \"x/../../up\"\n",
			"dalo.toml:2:8: error E112 sources.a.path: path \"x/../../up\" leaves the project: a source path stays inside the directory of dalo.toml"},
		{"absolute path", "[sources.a]\npath = \"/srv/agents\"\n",
			"dalo.toml:2:8: error E112 sources.a.path: path \"/srv/agents\" is absolute: a source path is relative to dalo.toml, inside the project"},
		{"undeclared source", "[sources.a]\npath = \"x\"\n[[packages]]\nref = \"b:c\"\nproviders = [\"claude\"]\n",
			"dalo.toml:4:7: error E113 packages[0].ref: package b:c names source b, which [sources] does not declare"},
		{"twice", "[sources.a]\npath = \"x\"\n[[packages]]\nref = \"a:c\"\nproviders = [\"claude\"]\n[[packages]]\nref = \"a:c\"\nproviders = [\"codex\"]\n",
			"dalo.toml:7:7: error E113 packages[1].ref: package a:c is listed twice (packages[0] lists it too): list it once, with every provider"},
		{"provider twice", "[sources.a]\npath = \"x\"\n[[packages]]\nref = \"a:c\"\nproviders = [\"claude\", \"codex\", \"claude\"]\n",
			"dalo.toml:5:33: error E023 packages[0].providers[2]: \"claude\" is listed twice (entries 0 and 2): list each once"},
		{"unknown provider", "[sources.a]\npath = \"x\"\n[[packages]]\nref = \"a:c\"\nproviders = [\"claude\", \"cluade\"]\n",
			"dalo.toml:5:24: error E114 packages[0].providers[1]: unknown provider cluade; known: "},
		{"no provider", "[sources.a]\npath = \"x\"\n[[packages]]\nref = \"a:c\"\nproviders = []\n",
			"dalo.toml:5:13: error E023 packages[0].providers: invalid providers (0 entries): expected a non-empty array of provider names, each once, such as [\"claude\", \"codex\"]"},
		{"provider with a version", "[sources.a]\npath = \"x\"\n[[packages]]\nref = \"a:c\"\nproviders = [\"claude@2.1.233\"]\n",
			"dalo.toml:5:14: error E023 packages[0].providers[0]: invalid providers \"claude@2.1.233\": expected a provider name, such as claude"},
		{"duplicate key", "[sources.a]\npath = \"x\"\npath = \"y\"\n",
			"dalo.toml:3:1: error E009 sources.a.path: key sources.a.path is already defined at line 2, column 1"},
		{"source id", "[sources.\"a+b\"]\npath = \"x\"\n",
			"dalo.toml:1:10: error E110 sources.\"a+b\": source id \"a+b\": a source id is letters"},
		{"syntax", "[sources.a\n",
			"dalo.toml:1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("/project", []byte(tc.src))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %+v, %v; want an *Error", p, err)
			}
			if len(e.Diagnostics) != 1 {
				t.Errorf("%d findings, want 1:\n%v", len(e.Diagnostics), err)
			}
			if got := e.Diagnostics[0].String(); !strings.HasPrefix(got, tc.want) {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
