package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/instruction"
	"dalo/providers"
)

var (
	design = instruction.Asset{
		ID:      instruction.ID{Source: "company", Selector: "design-context"},
		Package: "company:design-review",
		Content: []byte("# Design context\n\n- Prefer design tokens.\n"),
	}
	tone = instruction.Asset{
		ID:      instruction.ID{Source: "company", Selector: "tone"},
		Package: "company:writing",
		Content: []byte("Write plainly.\n"),
	}
)

// designLF is the block of design in a file of its own.
var designLF = func() string {
	e, err := instruction.Enable("CLAUDE.md", nil, design, false)
	if err != nil {
		panic(err)
	}
	return string(e.After)
}()

func TestResolveTarget(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CODEX_HOME", "")
	for spec, want := range map[string]string{
		"claude": filepath.Join(home, ".claude", "CLAUDE.md"),
		"codex":  filepath.Join(home, ".codex", "AGENTS.md"),
	} {
		got, err := ResolveTarget(spec)
		if err != nil || got.File != want || got.Scope != ScopeGlobal || got.Name != spec {
			t.Errorf("%s: %+v %v, want %s", spec, got, err, want)
		}
	}
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, "cc"))
	t.Setenv("CODEX_HOME", filepath.Join(home, "cx"))
	if got, _ := ResolveTarget("claude"); got.File != filepath.Join(home, "cc", "CLAUDE.md") {
		t.Errorf("CLAUDE_CONFIG_DIR: %s", got.File)
	}
	if got, _ := ResolveTarget("codex"); got.File != filepath.Join(home, "cx", "AGENTS.md") {
		t.Errorf("CODEX_HOME: %s", got.File)
	}
	proj := filepath.Join(home, "proj", "AGENTS.md")
	if got, err := ResolveTarget(proj); err != nil || got.File != proj || got.Scope != ScopeProject || got.Name != TargetProject {
		t.Errorf("project: %+v %v", got, err)
	}
	for spec, want := range map[string]string{
		"":                                     "no target",
		"claud":                                `unknown target "claud"`,
		filepath.Join(home, "cx", "AGENTS.md"): "is the global codex file; say --target codex",
		filepath.Join(home, "cc", "x/../CLAUDE.md"): "is the global claude file",
	} {
		if _, err := ResolveTarget(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %s", spec, err, want)
		}
	}
}

// TestTargetDir: a global target's missing directory (a harness that never
// ran) is made, but not by a dry run; a project file's is refused.
func TestTargetDir(t *testing.T) {
	dir := t.TempDir()
	global := Target{Name: "claude", File: filepath.Join(dir, "cc", "CLAUDE.md"), Scope: ScopeGlobal}
	if err := targetDir(global, true); err != nil {
		t.Errorf("global, dry: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(global.File)); err == nil {
		t.Error("a dry run made the directory")
	}
	if err := targetDir(global, false); err != nil {
		t.Errorf("global: %v", err)
	}
	if fi, err := os.Stat(filepath.Dir(global.File)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("global: the directory is %v, %v; want one of mode 0700", fi, err)
	}
	project := Target{Name: TargetProject, File: filepath.Join(dir, "no", "such", "AGENTS.md"), Scope: ScopeProject}
	want := project.File + " does not exist and cannot be created: its directory " + filepath.Dir(project.File) + " does not exist"
	if err := targetDir(project, false); err == nil || err.Error() != want {
		t.Errorf("project: got %v, want %s", err, want)
	}
	if err := targetDir(Target{File: filepath.Join(dir, "AGENTS.md"), Scope: ScopeProject}, false); err != nil {
		t.Errorf("an existing directory: %v", err)
	}
}

func TestReadTarget(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "AGENTS.md")
	os.WriteFile(file, []byte("x"), 0o644)
	os.Symlink(file, filepath.Join(dir, "link.md"))
	os.Mkdir(filepath.Join(dir, "dir.md"), 0o755)
	os.WriteFile(filepath.Join(dir, "ro.md"), []byte("x"), 0o444)
	os.Link(file, filepath.Join(dir, "hard.md"))
	for name, want := range map[string]string{
		"link.md":       "link.md is a symlink to " + file,
		"dir.md":        "dir.md is a directory, not a file",
		"ro.md":         "ro.md is read-only",
		"hard.md":       "hard.md has 2 hard links",
		"AGENTS.md/sub": "AGENTS.md/sub: not a directory",
	} {
		_, _, err := readTarget(filepath.Join(dir, name))
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, want)) && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", name, err, want)
		}
	}
	data, exists, err := readTarget(filepath.Join(dir, "new.md"))
	if err != nil || exists || data != nil {
		t.Errorf("missing file: %q %v %v", data, exists, err)
	}
}

// TestStoreLifecycle goes through the store: records, facts, a created
// file removed again, dry runs that write nothing, and list states.
func TestStoreLifecycle(t *testing.T) {
	dir := t.TempDir()
	s := &Store{Dir: filepath.Join(dir, "dalo")}
	tgt := Target{Name: TargetProject, File: filepath.Join(dir, "AGENTS.md"), Scope: ScopeProject}

	shown := 0
	opt := EditOptions{DryRun: true, Show: func(*instruction.Edit) error { shown++; return nil }}
	if _, err := s.EnableInstruction(tgt, design, opt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tgt.File); !errors.Is(err, os.ErrNotExist) || shown != 1 {
		t.Fatalf("dry run wrote the target (%v) or did not show (%d)", err, shown)
	}
	if _, err := os.Stat(s.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dry run created the store: %v", err)
	}

	if _, err := s.EnableInstruction(tgt, design, EditOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(tgt.File); string(got) != designLF {
		t.Fatalf("created file: %q", got)
	}
	if _, err := s.EnableInstruction(tgt, tone, EditOptions{}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.Instructions()
	if err != nil || len(recs) != 2 || recs[0].Selector != "design-context" || recs[1].Package != "company:writing" || recs[0].SHA256 != digestOf("# Design context\n\n- Prefer design tokens.\n") {
		t.Fatalf("records: %+v %v", recs, err)
	}

	// The user edits the tone block: list says so, disable refuses.
	data, _ := os.ReadFile(tgt.File)
	os.WriteFile(tgt.File, []byte(strings.Replace(string(data), "Write plainly.", "Write.", 1)), 0o644)
	states, err := s.InstructionStates()
	if err != nil || states[0].State != "enabled" || states[1].State != "edited" {
		t.Fatalf("states: %+v %v", states, err)
	}
	var ce *instruction.ConflictError
	if _, err := s.DisableInstruction(tgt, tone.ID, EditOptions{}); !errors.As(err, &ce) {
		t.Fatalf("disable edited: %v", err)
	}
	if _, err := s.DisableInstruction(tgt, tone.ID, EditOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DisableInstruction(tgt, design.ID, EditOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tgt.File); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file dalo created is still there: %v", err)
	}
	if f, _ := s.readInstructions(); len(f.Instructions) != 0 || len(f.Files) != 0 {
		t.Fatalf("store not empty: %+v", f)
	}
	if _, err := s.DisableInstruction(tgt, design.ID, EditOptions{}); !errors.Is(err, instruction.ErrNotEnabled) {
		t.Fatalf("disable twice: %v", err)
	}

	// No final newline: the facts make disable exact.
	os.WriteFile(tgt.File, []byte("mine"), 0o600)
	if _, err := s.EnableInstruction(tgt, design, EditOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DisableInstruction(tgt, design.ID, EditOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(tgt.File); string(got) != "mine" {
		t.Fatalf("after disable: %q", got)
	}
	if fi, _ := os.Stat(tgt.File); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode changed to %v", fi.Mode().Perm())
	}

	// A block the user removed by hand: disable drops the record only.
	if _, err := s.EnableInstruction(tgt, design, EditOptions{}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(tgt.File, []byte("mine\n"), 0o600)
	if states, _ := s.InstructionStates(); states[0].State != "missing" {
		t.Fatalf("state after hand removal: %+v", states)
	}
	e, err := s.DisableInstruction(tgt, design.ID, EditOptions{})
	if err != nil || e.Action != ActionGone {
		t.Fatalf("disable removed block: %v %v", e, err)
	}
	if got, _ := os.ReadFile(tgt.File); string(got) != "mine\n" {
		t.Fatalf("user file changed: %q", got)
	}
}

// TestNothingLostOnError: an error before writing leaves the file as it
// was, and a Show that fails stops the edit.
func TestNothingLostOnError(t *testing.T) {
	dir := t.TempDir()
	s := &Store{Dir: filepath.Join(dir, "dalo")}
	tgt := Target{Name: TargetProject, File: filepath.Join(dir, "AGENTS.md"), Scope: ScopeProject}
	before := "mine\n<!-- dalo:end instruction:x source=s -->\n"
	os.WriteFile(tgt.File, []byte(before), 0o644)
	if _, err := s.EnableInstruction(tgt, design, EditOptions{}); err == nil {
		t.Fatal("malformed marker accepted")
	}
	os.WriteFile(tgt.File, []byte("mine\n"), 0o644)
	stop := errors.New("stop")
	if _, err := s.EnableInstruction(tgt, design, EditOptions{Show: func(*instruction.Edit) error { return stop }}); err != stop {
		t.Fatalf("got %v", err)
	}
	if got, _ := os.ReadFile(tgt.File); string(got) != "mine\n" {
		t.Fatalf("file changed: %q", got)
	}
	// The user's edit between read and write wins.
	_, err := s.EnableInstruction(tgt, design, EditOptions{Show: func(*instruction.Edit) error {
		return os.WriteFile(tgt.File, []byte("mine, edited\n"), 0o644)
	}})
	if err == nil || !strings.Contains(err.Error(), "changed while dalo was editing it") {
		t.Fatalf("concurrent edit: %v", err)
	}
	if got, _ := os.ReadFile(tgt.File); string(got) != "mine, edited\n" {
		t.Fatalf("file changed: %q", got)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), "dalo-tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestGlobalTargetFromTables resolves every harness name as its newest
// provider table says (config.instructions under config.home), so that
// --target NAME means what the table says.
func TestGlobalTargetFromTables(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	names := Providers()
	if len(names) == 0 {
		t.Fatal("no provider tables")
	}
	for _, name := range names {
		pt, _ := ts.Newest(name)
		t.Setenv(pt.Config.Home.Env, "")
		want, err := pt.Path(pt.Config.Instructions, os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ResolveTarget(name)
		if err != nil || got.File != want || got.Scope != ScopeGlobal || got.Name != name {
			t.Errorf("%s: %+v %v, want %s", name, got, err, want)
		}
		if !strings.HasPrefix(got.File, home+string(filepath.Separator)) {
			t.Errorf("%s: %s is not under $HOME %s", name, got.File, home)
		}
		t.Setenv(pt.Config.Home.Env, filepath.Join(home, "moved-"+name))
		moved, _ := pt.Path(pt.Config.Instructions, os.Getenv)
		if got, _ := ResolveTarget(name); got.File != moved || moved == want && pt.Config.Instructions.Root == "config_home" {
			t.Errorf("%s with $%s: %s, want %s", name, pt.Config.Home.Env, got.File, moved)
		}
	}
	t.Setenv("HOME", "")
	for _, name := range names {
		pt, _ := ts.Newest(name)
		t.Setenv(pt.Config.Home.Env, "")
		if _, err := globalTarget(name); err == nil || !strings.Contains(err.Error(), "HOME") {
			t.Errorf("%s without HOME: %v", name, err)
		}
	}
	if _, err := globalTarget("nosuch"); err == nil || !strings.Contains(err.Error(), strings.Join(names, ", ")) {
		t.Errorf("unknown harness: %v", err)
	}
}

func digestOf(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}
