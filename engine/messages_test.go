package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"cuelang.org/go/encoding/yaml"
)

// The messages a user meets first: each says what is wrong in the user's
// terms, at one position.

const bomManifest = "schema_version = 1\n\n[plugin]\nname = \"a\"\ndescription = \"A package.\"\n"

// A manifest may open with a byte order mark: TOML 1.0 asks for a UTF-8
// Unicode document, which admits one. Anywhere else, or twice, it is an
// E008 that names it rather than go-toml's "U+00EF 'ï'".
func TestManifestByteOrderMark(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // the diagnostics, one per line; "" when valid
	}{
		{"one at the start", utf8BOM + bomManifest, ""},
		{"positions on line 1 count from after it", utf8BOM + "schema_version = 2\n" + bomManifest[len("schema_version = 1\n"):],
			"plugins/a/PLUGIN.toml:1:18: error E024 schema_version: invalid schema_version 2: expected schema version 1, the only one defined"},
		{"two at the start", utf8BOM + utf8BOM + bomManifest,
			"plugins/a/PLUGIN.toml:1:1: error E008: a UTF-8 byte order mark (U+FEFF) can only open the file, once; remove this one"},
		{"one at the start of a later line", strings.Replace(bomManifest, "[plugin]", utf8BOM+"[plugin]", 1),
			"plugins/a/PLUGIN.toml:3:1: error E008: a UTF-8 byte order mark (U+FEFF) can only open the file, once; remove this one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, root, "plugins/a/PLUGIN.toml", tt.src)
			rep, err := Validate(root, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := strings.TrimSpace(strings.ReplaceAll(diagLines(rep), "\t", ""))
			if got != tt.want {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", got, tt.want)
			}
			if rep.Valid != (tt.want == "") {
				t.Errorf("valid = %v, want %v", rep.Valid, tt.want == "")
			}
		})
	}
}

// A YAML error names one position, the Markdown file's, and the YAML
// library's message without its own position. The errors are the real
// decoder's.
func TestYAMLErrorPosition(t *testing.T) {
	const rel = "skills/b/SKILL.md"
	tests := []struct {
		fm   string
		want Pos
		msg  string
	}{
		// The parser's own errors: the library gives their line from 0.
		{"name: [unclosed\ndescription: x\n", Pos{3, 1}, "did not find expected ',' or ']'"},
		{"name: p\nx: 1\ndescription: [a, b\n", Pos{4, 1}, "did not find expected ',' or ']'"},
		{"name: p\nx: 1\ndescription: {a: b\n", Pos{4, 1}, "did not find expected ',' or '}'"},
		{"name: p\n- x\n", Pos{3, 1}, "did not find expected key"},
		{"name: x\ndescription: x\n  bad: y\n", Pos{4, 1}, "mapping values are not allowed in this context"},
		{"name: x\n\tdescription: y\n", Pos{3, 1}, "found a tab character that violates indentation"},
		{"name: *x\n", Pos{2, 1}, "unknown anchor 'x' referenced"},
	}
	for _, tt := range tests {
		_, err := yaml.Extract(rel, []byte(tt.fm))
		if err == nil {
			t.Fatalf("%q: the decoder accepted it", tt.fm)
		}
		pos, msg := yamlError(rel, err, 2)
		if pos != tt.want || msg != tt.msg {
			t.Errorf("%q: yamlError(%v) = %v, %q; want %v, %q", tt.fm, err, pos, msg, tt.want, tt.msg)
		}
	}
	// A position with a column is taken whole.
	if pos, msg := yamlError(rel, errors.New(rel+":3:7: expected a single YAML document"), 2); pos != (Pos{4, 7}) || msg != "expected a single YAML document" {
		t.Errorf("with a column: %v, %q", pos, msg)
	}
}

// A reference that does not resolve names the file it looked for, and the
// directory missing on the way when that is what is missing.
func TestLstatInsideMissing(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "skills/other/SKILL.md", "---\n")
	writeFile(t, root, "skills/empty/README.md", "")
	tests := []struct{ rel, want string }{
		{"agents/a.md", "agents/a.md does not exist: there is no directory agents"},
		{"skills/nope/SKILL.md", "skills/nope/SKILL.md does not exist: there is no directory skills/nope"},
		{"skills/empty/SKILL.md", "skills/empty/SKILL.md does not exist"},
		{"skills/other/SKILL.md", ""},
	}
	for _, tt := range tests {
		if _, why := lstatInside(root, tt.rel); why != tt.want {
			t.Errorf("lstatInside(%s) = %q, want %q", tt.rel, why, tt.want)
		}
	}
}

// A source path that is not a directory is ErrNoSource, worded for what it
// is instead.
func TestCheckSourceDir(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "src/plugins/a/PLUGIN.toml", bomManifest)
	writeFile(t, root, "notes.txt", "")
	manifest := filepath.Join(root, "src", "plugins", "a", "PLUGIN.toml")
	tests := []struct{ dir, want string }{
		{filepath.Join(root, "src"), ""},
		{filepath.Join(root, "missing"), "source directory not found: " + filepath.Join(root, "missing")},
		{filepath.Join(root, "notes.txt"), filepath.Join(root, "notes.txt") + " is a file, not a source directory: a source is a directory holding plugins/<name>/PLUGIN.toml"},
		{manifest, manifest + " is a file, not a source directory: a source is a directory holding plugins/<name>/PLUGIN.toml; the source of this manifest is " + filepath.Join(root, "src")},
	}
	for _, tt := range tests {
		err := CheckSourceDir(tt.dir)
		if tt.want == "" {
			if err != nil {
				t.Errorf("CheckSourceDir(%s) = %v, want nil", tt.dir, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.want || !errors.Is(err, ErrNoSource) {
			t.Errorf("CheckSourceDir(%s) = %v, want ErrNoSource saying %q", tt.dir, err, tt.want)
		}
	}
	if os.Getuid() != 0 {
		locked := filepath.Join(root, "locked")
		writeFile(t, root, "locked/plugins/a/PLUGIN.toml", bomManifest)
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(locked, 0o755)
		if err := CheckSourceDir(filepath.Join(locked, "inner")); err == nil || !errors.Is(err, ErrNoSource) || !strings.Contains(err.Error(), "cannot be read: permission denied") {
			t.Errorf("unreadable: %v", err)
		}
	}
}

// E024 has one wording whatever the wrong value is, like E025 and E026.
func TestSchemaVersionWording(t *testing.T) {
	const want = "invalid schema_version %s: expected schema version 1, the only one defined"
	tests := []struct{ value, shown string }{
		{`2`, `2`},
		{`"1"`, `"1" (a string)`},
		{`1.0`, `1.0 (a float)`},
		{`true`, `true (a boolean)`},
		{`[1]`, `(an array)`},
		{`{ v = 1 }`, `(a table)`},
	}
	for _, tt := range tests {
		root := t.TempDir()
		writeFile(t, root, "plugins/a/PLUGIN.toml", strings.Replace(bomManifest, "schema_version = 1", "schema_version = "+tt.value, 1))
		rep, err := Validate(root, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Diagnostics) != 1 || rep.Diagnostics[0].Code != "E024" || rep.Diagnostics[0].Message != strings.Replace(want, "%s", tt.shown, 1) {
			t.Errorf("schema_version = %s:\n%swant one E024: %s", tt.value, diagLines(rep), strings.Replace(want, "%s", tt.shown, 1))
		}
	}
}

// TestMissingToolFilesNotStated: what the walk of a package saw answers
// for a tool file missing after directories only, in lstatInside's words,
// with no statement of its way; every other path (a symlink, a file, a
// special file, a file too large on the way) is left to lstatInside.
func TestMissingToolFilesNotStated(t *testing.T) {
	src := t.TempDir()
	root := filepath.Join(src, "pkg")
	writeFile(t, root, "tools/run.sh", "#!/bin/sh\n")
	writeFile(t, root, "tools/lib/a.js", "")
	writeFile(t, root, "big.bin", strings.Repeat("x", 2048))
	if err := os.Symlink("tools", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "tools", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "links"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("x", filepath.Join(root, "links", "dangling")); err != nil {
		t.Fatal(err)
	}
	lim := Limits{PackageEntries: 4096, DirectoryDepth: 32, FileBytes: 1024, PackageBytes: 256 << 20}
	var l diagList
	st := walkTree(src, "pkg", &lim, &l, true)
	defer st.release()
	long := strings.Repeat("x", 256)
	for _, tc := range []struct {
		rel   string
		known bool // missing answers, not lstatInside
	}{
		{"node_modules/x/index.js", true}, {"tools/nope.js", true}, {"tools/lib/b.js", true}, {"tools/lib/deep/c.js", true},
		{strings.Repeat("y", 255), true},
		// Not missing after directories only.
		{"tools/run.sh/x", false}, {"link/run.sh", false}, {"link", false}, {"tools/pipe", false}, {"tools/pipe/x", false},
		{"big.bin", false}, {"big.bin/x", false}, {"tools/run.sh", false}, {"tools/lib", false},
		{"tools//run.sh", false}, {"./tools/x", false}, {"tools/./x", false}, {"tools/../x", false},
		// In a directory the walk did not prove it may search (nothing
		// in it opened or stated), and names the kernel cannot state.
		{"empty/x.js", false}, {"links/x.js", false}, {long, false}, {"tools/" + long + "/x", false},
		{strings.Repeat("d/", 2100) + "x", false},
	} {
		_, want := lstatInside(root, tc.rel)
		got, known := st.missing(len(root), tc.rel)
		if known != tc.known || known && got != want {
			t.Errorf("missing(%.40s) = %q, %t; lstatInside says %q", tc.rel, got, known, want)
		}
	}
	if _, why := lstatInside(root, long); !strings.Contains(why, "cannot be read") {
		t.Errorf("lstatInside of a name of 256 bytes: %q", why)
	}
	// A package's tool that lists a hundred files not checked in states
	// none of them.
	var b strings.Builder
	b.WriteString("schema_version = 1\n[plugin]\nname = \"a\"\ndescription = \"d\"\n[[tool]]\nschema_version = 1\nid = \"t\"\nentry = \"run.sh\"\nruntime = \"executable\"\nargv = []\ncwd = \"tool_root\"\navailability = \"required\"\nfiles = [")
	for i := range 100 {
		fmt.Fprintf(&b, "%q, ", fmt.Sprintf("node_modules/m%d/index.js", i))
	}
	b.WriteString("]\n")
	src = t.TempDir()
	writeFile(t, src, "plugins/a/PLUGIN.toml", b.String())
	writeFile(t, src, "plugins/a/run.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(src, "plugins/a/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	rep, n := validateCounted(t, src, &lstatsInside)
	if n != 0 {
		t.Errorf("%d paths stated by lstatInside, want none", n)
	}
	e061 := 0
	for _, d := range rep.Diagnostics {
		if d.Code == "E061" && strings.HasSuffix(d.Message, "does not exist: there is no directory node_modules") {
			e061++
		}
	}
	if e061 != 100 {
		t.Errorf("%d of 100 missing files said missing: %v", e061, rep.Diagnostics)
	}
}

// TestToolFieldFindingsKept: dropping what the walk said of a tool's
// path leaves the tool fields' own findings, though they are filed under
// the manifest and a later path goes through it (PLUGIN.toml/x).
func TestToolFieldFindingsKept(t *testing.T) {
	src := t.TempDir()
	writeFile(t, src, "plugins/a/PLUGIN.toml", "schema_version = 1\n[plugin]\nname = \"a\"\ndescription = \"d\"\n[[tool]]\nschema_version = 1\nid = \"t\"\nentry = \"run.sh\"\nruntime = \"executable\"\nargv = []\ncwd = \"tool_root\"\navailability = \"required\"\nfiles = [\"big.bin\", \"PLUGIN.toml/x\"]\n")
	writeFile(t, src, "plugins/a/run.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(src, "plugins/a/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("run.sh", filepath.Join(src, "plugins/a/link")); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(src, "plugins/a/big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(65<<20 + 1); err != nil { // sparse: over the 64 MiB file limit
		t.Fatal(err)
	}
	big.Close()
	rep, err := Validate(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range rep.Diagnostics {
		got = append(got, d.Code+" "+d.Field)
	}
	slices.Sort(got)
	if want := []string{"E061 tool[0].files[1]", "E068 tool[0].files[0]", "W064 "}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}

// TestWholeFindingsNotFormatted: a finding whose text was made whole
// before (errorf with "%s") is kept as it is, not formatted again: the
// one allocation is the text put in an interface, where fmt made a copy.
func TestWholeFindingsNotFormatted(t *testing.T) {
	why := strings.Repeat("node_modules/m/index.js does not exist ", 4)
	var l diagList
	l.diags = make([]Diagnostic, 0, 200)
	if n := testing.AllocsPerRun(100, func() {
		l.diags = l.diags[:0]
		l.errorf("E061", Pos{1, 1}, "tool[0].files[0]", "%s", why)
	}); n > 1 {
		t.Errorf("errorf of a whole text allocated %v times, want one (the text in an interface)", n)
	}
	if l.diags[0].Message != why {
		t.Errorf("message %q, want %q", l.diags[0].Message, why)
	}
}

// TestUnknownToolsNamedBounded: a hook naming no tool of its package
// names the package's first 16 tools and how many more.
func TestUnknownToolsNamedBounded(t *testing.T) {
	ts := make([]Tool, 600)
	for i := range ts {
		ts[i].ID = fmt.Sprintf("tool-%d", i)
	}
	got := toolIDs(ts)
	if want := "tool-0, tool-1, tool-2, tool-3, tool-4, tool-5, tool-6, tool-7, tool-8, tool-9, tool-10, tool-11, tool-12, tool-13, tool-14, tool-15 and 584 more"; got != want {
		t.Errorf("toolIDs of 600: %q, want %q", got, want)
	}
	if got := toolIDs(ts[:2]); got != "tool-0, tool-1" {
		t.Errorf("toolIDs of 2: %q", got)
	}
	if got := toolIDs(nil); got != "none" {
		t.Errorf("toolIDs of none: %q", got)
	}
}
