package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorReportsHookOfAnotherSystem: a DALO_HOME shared between a Mac
// and a Linux machine holds a hook installed on the Mac whose tool
// declares platforms macos; doctor on Linux reports that it cannot run
// here, a problem for a required hook, where install would have refused it.
func TestDoctorReportsHookOfAnotherSystem(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, "claude"))
	t.Setenv("HOME", home)
	s := &Store{Dir: filepath.Join(home, "store")}
	src := filepath.Join(home, "src")
	os.MkdirAll(filepath.Join(src, "plugins/kit"), 0o755)
	kitManifest(t, src, nil)
	man := filepath.Join(src, "plugins/kit/PLUGIN.toml")
	b, err := os.ReadFile(man)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(man, []byte(strings.Replace(string(b), "id = \"a\"\n", "id = \"a\"\nplatforms = [\"macos\"]\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSource("company", src, ""); err != nil {
		t.Fatal(err)
	}
	defer func(g string) { goos = g }(goos)
	goos = "darwin"
	sel, err := s.Select("company:kit", "claude@2.1.233")
	if err != nil {
		t.Fatal(err)
	}
	props, _, err := s.Propose(sel, []string{"a"}, []string{"A"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Approve(props); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	if _, err := s.Install(sel, Dispatcher{Exe: exe}, InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	find := func() string {
		findings, err := s.Doctor(DoctorOptions{Getenv: os.Getenv})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range findings {
			if strings.Contains(f.Message, "cannot run") {
				return f.Status + ": " + f.Message
			}
		}
		return ""
	}
	if got := find(); got != "" {
		t.Fatalf("on the system it was installed on, doctor says %q", got)
	}
	goos = "linux"
	want := StatusProblem + ": hook A cannot run on this system: its tool a declares platforms macos, and this system is linux"
	if got := find(); !strings.HasPrefix(got, want) {
		t.Errorf("doctor on linux says %q, want it to start %q", got, want)
	}
}
