package engine

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The cases here are hostile sources the conformance suite cannot express
// as a script: each must end with positioned diagnostics and exit status 1,
// never a panic, a hang or a read outside the source.

const manifestA = "schema_version = 1\n\n[plugin]\nname = \"a\"\ndescription = \"A package.\"\n"

// writeTree creates files (path → content) under a new temporary root.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// validateWithin runs Validate and fails the test if it takes longer than
// limit: a FIFO opened for reading, a symlink loop followed or a huge file
// read whole would block or crawl.
func validateWithin(t *testing.T, root string, limit time.Duration) *Report {
	t.Helper()
	type result struct {
		rep *Report
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		rep, err := Validate(root, Options{})
		done <- result{rep, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("Validate: %v", r.err)
		}
		t.Logf("validated in %v", time.Since(start))
		return r.rep
	case <-time.After(limit):
		t.Fatalf("Validate did not return within %v", limit)
		return nil
	}
}

// codes lists "file code" for each diagnostic, for comparing against a want.
func codes(rep *Report) []string {
	var out []string
	for _, d := range rep.Diagnostics {
		out = append(out, d.File+" "+d.Code)
	}
	return out
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

func TestHostile(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "SKILL.md")
	if err := os.WriteFile(secret, []byte("---\nname: secret\ndescription: Outside the source.\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	skillMember := manifestA + "members = [{ ref = \"skill:s\", requirement = \"required\" }]\n"
	toolManifest := manifestA + "\n[[tool]]\nschema_version = 1\nid = \"t\"\nentry = \"run\"\nruntime = \"node\"\nargv = []\ncwd = \"tool_root\"\navailability = \"required\"\n"

	tests := []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, root string)
		want  []string
	}{{
		name:  "fifo manifest",
		files: map[string]string{},
		setup: func(t *testing.T, root string) {
			os.MkdirAll(filepath.Join(root, "plugins/a"), 0o755)
			mkfifo(t, filepath.Join(root, "plugins/a/PLUGIN.toml"))
		},
		want: []string{"plugins/a/PLUGIN.toml E005"},
	}, {
		name:  "fifo tool entry",
		files: map[string]string{"plugins/a/PLUGIN.toml": toolManifest},
		setup: func(t *testing.T, root string) { mkfifo(t, filepath.Join(root, "plugins/a/run")) },
		want:  []string{"plugins/a/PLUGIN.toml E061"},
	}, {
		name:  "fifo skill",
		files: map[string]string{"plugins/a/PLUGIN.toml": skillMember},
		setup: func(t *testing.T, root string) {
			os.MkdirAll(filepath.Join(root, "skills/s"), 0o755)
			mkfifo(t, filepath.Join(root, "skills/s/SKILL.md"))
		},
		want: []string{"plugins/a/PLUGIN.toml E071"},
	}, {
		name:  "symlink loops",
		files: map[string]string{"plugins/a/PLUGIN.toml": skillMember},
		setup: func(t *testing.T, root string) {
			must(t, os.Symlink("loop", filepath.Join(root, "plugins/a/loop")))
			must(t, os.Symlink(".", filepath.Join(root, "plugins/a/self")))
			must(t, os.MkdirAll(filepath.Join(root, "skills"), 0o755))
			must(t, os.Symlink("s", filepath.Join(root, "skills/s")))
		},
		want: []string{"plugins/a/PLUGIN.toml E071", "plugins/a/loop W064", "plugins/a/self W064"},
	}, {
		name:  "skill outside the source",
		files: map[string]string{"plugins/a/PLUGIN.toml": skillMember},
		setup: func(t *testing.T, root string) {
			must(t, os.MkdirAll(filepath.Join(root, "skills"), 0o755))
			must(t, os.Symlink(outside, filepath.Join(root, "skills/s")))
		},
		want: []string{"plugins/a/PLUGIN.toml E071"},
	}, {
		name:  "huge sparse manifest",
		files: map[string]string{"plugins/a/PLUGIN.toml": manifestA},
		setup: func(t *testing.T, root string) {
			must(t, os.Truncate(filepath.Join(root, "plugins/a/PLUGIN.toml"), 1<<40))
		},
		want: []string{"plugins/a/PLUGIN.toml E006"},
	}, {
		name:  "huge sparse file and skill",
		files: map[string]string{"plugins/a/PLUGIN.toml": skillMember, "plugins/a/big": "", "skills/s/SKILL.md": "---\nname: s\n"},
		setup: func(t *testing.T, root string) {
			must(t, os.Truncate(filepath.Join(root, "plugins/a/big"), 1<<40))
			must(t, os.Truncate(filepath.Join(root, "skills/s/SKILL.md"), 1<<40))
		},
		want: []string{"plugins/a/big E068", "skills/s/SKILL.md E068", "skills/s/SKILL.md E079"},
	}, {
		name:  "device",
		files: map[string]string{"plugins/a/PLUGIN.toml": toolManifest},
		setup: func(t *testing.T, root string) {
			// /dev/null's numbers; needs CAP_MKNOD.
			if err := syscall.Mknod(filepath.Join(root, "plugins/a/run"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
				t.Skipf("mknod: %v", err)
			}
		},
		want: []string{"plugins/a/PLUGIN.toml E061"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeTree(t, tt.files)
			tt.setup(t, root)
			rep := validateWithin(t, root, 10*time.Second)
			if rep.Valid {
				t.Errorf("valid; want invalid")
			}
			if got := codes(rep); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, d := range rep.Diagnostics {
				if strings.Contains(d.Message, "secret") || strings.Contains(d.Message, outside) {
					t.Errorf("diagnostic reveals a read outside the source: %s", d)
				}
			}
		})
	}
}

// TestGrowingManifest appends to a manifest while it is validated: the read
// stops at the limit whatever the writer does.
func TestGrowingManifest(t *testing.T) {
	root := writeTree(t, map[string]string{"plugins/a/PLUGIN.toml": manifestA})
	name := filepath.Join(root, "plugins/a/PLUGIN.toml")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stop := make(chan struct{})
	wrote := make(chan error, 1)
	go func() {
		chunk := bytes.Repeat([]byte("#"), 64<<10)
		for total := 0; total < 64<<20; total += len(chunk) {
			select {
			case <-stop:
				wrote <- nil
				return
			default:
			}
			if _, err := f.Write(chunk); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	rep := validateWithin(t, root, 20*time.Second)
	close(stop)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	// Depending on when the read happened the manifest was small enough or
	// not; either way there is at most one diagnostic and it is E006.
	for _, d := range rep.Diagnostics {
		if d.Code != "E006" {
			t.Errorf("unexpected diagnostic %s", d)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, os.ErrExist) {
		t.Fatal(err)
	}
}
