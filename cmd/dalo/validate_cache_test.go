package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// validateOut runs dalo with args in this process and returns what it
// printed and its exit status.
func validateOut(args ...string) string {
	var out, errs bytes.Buffer
	code := run(args, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errs})
	return out.String() + "--- stderr\n" + errs.String() + "--- exit " + string(rune('0'+code))
}

// conformanceSources writes the sources of the conformance suite (every
// directory of a testdata/script archive holding plugins/NAME/PLUGIN.toml)
// under dir and returns their roots.
func conformanceSources(t *testing.T, dir string) []string {
	t.Helper()
	archives, err := filepath.Glob("../../testdata/script/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range archives {
		ar, err := txtar.ParseFile(a)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Join(dir, strings.TrimSuffix(filepath.Base(a), ".txtar"))
		for _, f := range ar.Files {
			if !filepath.IsLocal(f.Name) {
				continue
			}
			p := filepath.Join(base, f.Name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			mode := fs.FileMode(0o644)
			if strings.HasSuffix(f.Name, ".sh") || strings.Contains(f.Name, "/bin/") {
				mode = 0o755
			}
			if err := os.WriteFile(p, f.Data, mode); err != nil {
				t.Fatal(err)
			}
			if filepath.Base(p) == "PLUGIN.toml" && filepath.Base(filepath.Dir(filepath.Dir(p))) == "plugins" {
				seen[filepath.Dir(filepath.Dir(filepath.Dir(p)))] = true
			}
		}
	}
	var roots []string
	for r := range seen {
		roots = append(roots, r)
	}
	sort.Strings(roots)
	return roots
}

// TestValidateCacheAnswersAlike validates every source of the conformance
// suite without the cache, then with an empty one, then with the cache
// holding every answer, as text and as JSON, with and without providers
// named: the reports are byte for byte the same.
func TestValidateCacheAnswersAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("validates every conformance source four times")
	}
	roots := conformanceSources(t, t.TempDir())
	if len(roots) < 50 {
		t.Fatalf("found only %d sources", len(roots))
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, root := range roots {
		for _, args := range [][]string{
			{"plugin", "validate", root},
			{"--json", "vet", "--provider", "claude", "--provider", "codex", root},
		} {
			want := validateOut(withNoCache(args)...)
			for _, run := range []string{"empty cache", "warm cache"} {
				if got := validateOut(args...); got != want {
					t.Errorf("dalo %s with the %s:\n%s\nwithout the cache:\n%s", strings.Join(args, " "), run, got, want)
				}
			}
		}
	}
}

func withNoCache(args []string) []string {
	out := append([]string(nil), args[:len(args)-1]...)
	return append(out, "--no-cache", args[len(args)-1])
}

// TestValidateCacheSeesChanges changes what a package's answer depends on
// after the cache holds it, one thing at a time, and checks that the
// answer is the one a run without the cache gives: the manifest's bytes, a
// tool file's executable bit, size and presence, a symlink, a file over
// the limit, a new directory, the source id.
func TestValidateCacheSeesChanges(t *testing.T) {
	root := filepath.Join(t.TempDir(), "src")
	writeFiles(t, root, map[string]string{
		"plugins/kit/PLUGIN.toml": `schema_version = 1

[plugin]
name = "kit"
description = "A tool and a hook."
id = "example.kit"

[[tool]]
schema_version = 1
id = "gate"
entry = "bin/gate.sh"
files = ["lib/helper.sh"]
runtime = "executable"
argv = []
cwd = "tool_root"
availability = "required"

[[hook]]
schema_version = 1
id = "gate"
tool = "gate"
subject = "tool_call"
phase = "before"
effect = "gate"
requirement = "required"
timeout_ms = 5000
failure_policy = "fail_closed"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
matcher = { tool_names = ["Bash"] }
`,
		"plugins/kit/bin/gate.sh":    "#!/bin/sh\necho '{\"kind\":\"allow\"}'\n",
		"plugins/kit/lib/helper.sh":  "# helper\n",
		"plugins/other/PLUGIN.toml":  "schema_version = 1\n[plugin]\nname = \"other\"\ndescription = \"d\"\n",
		"plugins/other/notes/a.txt":  "a\n",
		"plugins/other/notes/b.txt":  "b\n",
		"plugins/other/notes/c/d.md": "d\n",
	})
	if err := os.Chmod(filepath.Join(root, "plugins/kit/bin/gate.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	manifest := filepath.Join(root, "plugins/kit/PLUGIN.toml")
	edit := func(old, new string) func() error {
		return func() error {
			b, err := os.ReadFile(manifest)
			if err != nil {
				return err
			}
			return os.WriteFile(manifest, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
		}
	}
	in := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	steps := []struct {
		name   string
		change func() error
	}{
		{"nothing changed", func() error { return nil }},
		{"entry not executable", func() error { return os.Chmod(in("plugins/kit/bin/gate.sh"), 0o644) }},
		{"entry executable again", func() error { return os.Chmod(in("plugins/kit/bin/gate.sh"), 0o755) }},
		{"helper removed", func() error { return os.Remove(in("plugins/kit/lib/helper.sh")) }},
		{"helper a directory", func() error { return os.Mkdir(in("plugins/kit/lib/helper.sh"), 0o755) }},
		{"helper a symlink", func() error {
			if err := os.Remove(in("plugins/kit/lib/helper.sh")); err != nil {
				return err
			}
			return os.Symlink("../bin/gate.sh", in("plugins/kit/lib/helper.sh"))
		}},
		{"helper over the file limit", func() error {
			if err := os.Remove(in("plugins/kit/lib/helper.sh")); err != nil {
				return err
			}
			f, err := os.Create(in("plugins/kit/lib/helper.sh"))
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(64<<20 + 1)
		}},
		{"helper back", func() error { return os.Truncate(in("plugins/kit/lib/helper.sh"), 9) }},
		{"manifest edited", edit(`timeout_ms = 5000`, `timeout_ms = 50`)},
		{"manifest edited back", edit(`timeout_ms = 50`, `timeout_ms = 5000`)},
		{"id taken by another", func() error {
			return os.WriteFile(in("plugins/other/PLUGIN.toml"), []byte("schema_version = 1\n[plugin]\nname = \"other\"\ndescription = \"d\"\nid = \"example.kit\"\n"), 0o644)
		}},
		{"manifest a symlink", func() error {
			if err := os.Rename(manifest, in("plugins/kit/real.toml")); err != nil {
				return err
			}
			return os.Symlink("real.toml", manifest)
		}},
		{"manifest back", func() error {
			if err := os.Remove(manifest); err != nil {
				return err
			}
			return os.Rename(in("plugins/kit/real.toml"), manifest)
		}},
		{"a deep directory", func() error { return os.MkdirAll(in("plugins/other/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q"), 0o755) }},
	}
	for _, st := range steps {
		if err := st.change(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for _, args := range [][]string{
			{"--json", "plugin", "validate", root},
			{"vet", "--source-id", "company", root},
		} {
			want := validateOut(withNoCache(args)...)
			for i := 0; i < 2; i++ {
				if got := validateOut(args...); got != want {
					t.Errorf("%s: dalo %s, run %d with the cache:\n%s\nwithout:\n%s", st.name, strings.Join(args, " "), i+1, got, want)
				}
			}
		}
	}
}

// TestValidateCacheDamaged damages every entry of a warm cache in turn
// (truncated, a byte changed, emptied, replaced by a directory) and
// removes the cache under a run's feet: each answer stays the one without
// it, and the cache's directories are private to the user.
func TestValidateCacheDamaged(t *testing.T) {
	root := conformanceSources(t, t.TempDir())[0]
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	args := []string{"--json", "plugin", "validate", root}
	want := validateOut(withNoCache(args)...)
	damages := map[string]func(p string, b []byte) error{
		"truncated":      func(p string, b []byte) error { return os.WriteFile(p, b[:len(b)/2], 0o600) },
		"a byte changed": func(p string, b []byte) error { b[len(b)-2] ^= 1; return os.WriteFile(p, b, 0o600) },
		"emptied":        func(p string, b []byte) error { return os.WriteFile(p, nil, 0o600) },
		"a directory": func(p string, b []byte) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Mkdir(p, 0o700)
		},
	}
	for _, name := range []string{"truncated", "a byte changed", "emptied", "a directory"} {
		if got := validateOut(args...); got != want { // fills the cache again
			t.Fatalf("before damage %s: got\n%s\nwant\n%s", name, got, want)
		}
		n := 0
		filepath.WalkDir(filepath.Join(cache, "dalo"), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if fi, _ := d.Info(); fi.Mode().Perm() != 0o700 {
					t.Errorf("%s has mode %v, want 0700", p, fi.Mode().Perm())
				}
				return nil
			}
			if d.Name() == "trimmed" || !d.Type().IsRegular() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			n++
			return damages[name](p, b)
		})
		if n == 0 {
			t.Fatalf("%s: the cache holds no entry", name)
		}
		if got := validateOut(args...); got != want {
			t.Errorf("with every entry %s: got\n%s\nwant\n%s", name, got, want)
		}
		// Damaged entries are written anew (a directory in the way stays).
		os.RemoveAll(filepath.Join(cache, "dalo"))
	}
	if got := validateOut(args...); got != want {
		t.Errorf("with the cache removed: got\n%s\nwant\n%s", got, want)
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
