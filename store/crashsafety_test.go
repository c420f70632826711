package store

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"dalo/engine"
	"dalo/hooksfile"
	"dalo/plan"
)

// A plan or index naming a staged tree keeps it, whatever the install
// records say: a reinstall killed after recording may leave hooks dispatch
// still runs from a tree the record dropped. A plan it cannot read keeps
// everything.
func TestGCStagedKeepsPlanRoots(t *testing.T) {
	tests := []struct {
		name    string
		write   func(s *Store) error
		want    []string
		wantErr bool
	}{
		{"index", func(s *Store) error {
			p := &plan.Plan{Schema: plan.Schema, Provider: "claude",
				Events:  map[string][]plan.PlannedHook{"PreToolUse": {{Package: "company:kit", Hook: "guard", ToolNames: []string{"Bash"}, Tool: plan.PlannedTool{Root: s.StagedDir(unusedTree)}}}},
				Natives: map[string]plan.Native{"PreToolUse": {}}}
			os.MkdirAll(s.path("plans"), 0o755)
			return plan.WriteIndex(s.path("plans"), p, nil)
		}, []string{usedTree, unusedTree}, false},
		{"whole plan of another provider", func(s *Store) error {
			return writeJSON(s.planPath("codex"), map[string]any{"events": map[string]any{"Stop": []any{map[string]any{"tool": map[string]any{"root": s.StagedDir(unusedTree)}}}}})
		}, []string{usedTree, unusedTree}, false},
		{"no plans", func(s *Store) error { return nil }, []string{usedTree}, false},
		{"corrupt plan", func(s *Store) error {
			os.MkdirAll(s.path("plans"), 0o755)
			return os.WriteFile(s.planPath("claude"), []byte("{"), 0o600)
		}, []string{usedTree, unusedTree}, true},
		{"index pointing nowhere", func(s *Store) error {
			os.MkdirAll(s.path("plans", "claude.d"), 0o755)
			return os.Symlink("elsewhere", s.path("plans", "claude.d", "current"))
		}, []string{usedTree, unusedTree}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := gcStore(t, "claude")
			if err := tt.write(s); err != nil {
				t.Fatal(err)
			}
			l, err := s.Lock()
			if err != nil {
				t.Fatal(err)
			}
			err = s.gcStaged()
			l.Unlock()
			if got := staged(t, s); !slices.Equal(got, tt.want) {
				t.Fatalf("staged trees left: %v, want %v", got, tt.want)
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("gcStaged: %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

// Bytes dalo wrote before a reinstall replaced them (Earlier) are dalo's
// own: not changed, and removed; bytes of the user's are neither.
func TestOwnedEarlier(t *testing.T) {
	dir := t.TempDir()
	skill := filepath.Join(dir, "skills", "demo")
	writeSized(t, skill, "SKILL.md", 10) // dalo's old bytes
	writeSized(t, skill, "old.md", 4)    // only the old version had it
	oldSkill, _ := hashFile(filepath.Join(skill, "SKILL.md"))
	oldOnly, _ := hashFile(filepath.Join(skill, "old.md"))
	o := OwnedTree{Path: skill, Files: map[string]string{"SKILL.md": strings.Repeat("0", 64)},
		Earlier: map[string][]string{"SKILL.md": {oldSkill.SHA256}, "old.md": {oldOnly.SHA256}}}
	ip := &InstalledPackage{Skills: []OwnedTree{o}}
	if got := changedOwned(ip); len(got) != 0 {
		t.Fatalf("changedOwned = %v, want nothing: the bytes are dalo's earlier ones", got)
	}
	if intactOwned(&o) {
		t.Fatal("intactOwned: a tree with earlier bytes is intact")
	}
	if _, kept := removeOwned(ip); len(kept) != 0 {
		t.Fatalf("removeOwned kept %v", kept)
	}
	if _, err := os.Lstat(skill); !os.IsNotExist(err) {
		t.Fatalf("%s is still there: %v", skill, err)
	}

	// The user's bytes are neither.
	writeSized(t, skill, "SKILL.md", 11)
	if got := changedOwned(ip); len(got) != 1 {
		t.Fatalf("changedOwned = %v, want SKILL.md", got)
	}
	if _, kept := removeOwned(ip); len(kept) == 0 {
		t.Fatal("removeOwned removed the user's bytes")
	}
}

// A record naming a path outside its tree never makes dalo hash or
// remove that file.
func TestRemoveOwnedNotLocal(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "precious")
	writeSized(t, dir, "precious", 5)
	d, _ := hashFile(outside)
	skill := filepath.Join(dir, "skills", "demo")
	writeSized(t, skill, "SKILL.md", 3)
	s, _ := hashFile(filepath.Join(skill, "SKILL.md"))
	for _, rel := range []string{"../../precious", filepath.ToSlash(outside)} {
		ip := &InstalledPackage{Skills: []OwnedTree{{Path: skill, Files: map[string]string{rel: d.SHA256, "SKILL.md": s.SHA256}}}}
		if got := changedOwned(ip); len(got) != 1 || !strings.Contains(got[0], "not a path inside") {
			t.Errorf("changedOwned(%q) = %v", rel, got)
		}
		_, kept := removeOwned(ip)
		if len(kept) != 1 || !strings.Contains(kept[0], "not a path inside") {
			t.Errorf("removeOwned(%q) kept %v", rel, kept)
		}
		if _, err := os.Stat(outside); err != nil {
			t.Fatalf("removeOwned(%q) removed %s", rel, outside)
		}
	}
}

// Store state files are opened as regular files and read within a bound.
func TestReadJSONRefuses(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"schema":1}`), 0o600)
	tests := []struct {
		name string
		make func(p string) error
		want string
	}{
		{"symlink", func(p string) error { return os.Symlink(good, p) }, "is a symlink"},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o600) }, "is a FIFO"},
		{"huge", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(maxStateFile + 1)
		}, "more than the"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name+".json")
			if err := tt.make(p); err != nil {
				t.Skip(err)
			}
			var v map[string]any
			err := readJSON(p, &v)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("readJSON: %v, want an error naming %s with %q", err, p, tt.want)
			}
		})
	}
	var v map[string]any
	if err := readJSON(filepath.Join(dir, "missing.json"), &v); !os.IsNotExist(err) {
		t.Fatalf("readJSON of a missing file: %v", err)
	}
}

// Removing an install record, and writing a skill tree, sync the
// directories they change.
func TestSyncs(t *testing.T) {
	var synced []string
	syncDir = func(d string) error { synced = append(synced, d); return plan.SyncDir(d) }
	t.Cleanup(func() { syncDir = plan.SyncDir })

	s := gcStore(t, "claude")
	synced = nil
	if err := s.putInstalled(&Installed{Schema: 1, Provider: "claude"}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(synced, s.path("installs")) {
		t.Errorf("removing the install record synced %v, not %s", synced, s.path("installs"))
	}

	src := filepath.Join(t.TempDir(), "skill")
	writeSized(t, src, "SKILL.md", 10)
	writeSized(t, src, "ref/deep/notes.md", 10)
	lim := engine.Limits{PackageEntries: 8, DirectoryDepth: 3, FileBytes: 100, PackageBytes: 150}
	files, err := listFiles(src, true, &lim)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "skills", "demo")
	synced = nil
	if err := writeMember(member{ref: "skill:demo", src: src, dest: dest, dir: true}, files); err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, d := range synced {
		if r, err := filepath.Rel(filepath.Dir(dest), d); err == nil {
			if _, after, ok := strings.Cut(r, plan.TempMark); ok {
				r = "TMP" + after[strings.IndexAny(after+"/", "/"):]
			}
			rel = append(rel, filepath.ToSlash(r))
		}
	}
	for _, want := range []string{"TMP/ref/deep", "TMP/ref", "TMP", "."} {
		if !slices.Contains(rel, want) {
			t.Errorf("writing a skill synced %v; want %s among them", rel, want)
		}
	}
}

// The next writer removes what a killed one left beside the files dalo
// writes in the harness's directories, and nothing else.
func TestSweepHarnessTemps(t *testing.T) {
	s := gcStore(t, "claude")
	home := t.TempDir()
	skill := filepath.Join(home, "skills", "design-review")
	cfg := filepath.Join(home, "settings.json")
	in := &Installed{Schema: 1, Provider: "claude", Harness: HarnessState{Record: hooksfile.Record{File: cfg}},
		Packages: []InstalledPackage{{Package: "company:kit", Skills: []OwnedTree{{Path: skill}}}}}
	if err := s.putInstalled(in); err != nil {
		t.Fatal(err)
	}
	litter := []string{"skills/.design-review.dalo-tmp-1/SKILL.md", ".settings.json.dalo-tmp-2"}
	keep := []string{"skills/design-review/SKILL.md", "skills/.other.dalo-tmp-3", "skills/design-review.dalo-tmp-4", ".notes.dalo-tmp-5", "settings.json"}
	for _, p := range append(append([]string(nil), litter...), keep...) {
		writeSized(t, home, p, 1)
	}
	os.Chmod(filepath.Join(home, "skills/.design-review.dalo-tmp-1"), 0o555)
	l, err := s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	for _, p := range litter {
		if _, err := os.Lstat(filepath.Join(home, p)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", p, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(home, "skills/.design-review.dalo-tmp-1")); !os.IsNotExist(err) {
		t.Errorf("the temporary skill directory is still there: %v", err)
	}
	for _, p := range keep {
		if _, err := os.Lstat(filepath.Join(home, p)); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}
