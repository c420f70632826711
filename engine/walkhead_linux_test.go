package engine

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"dalo/plan"
)

// TestReadHeadAgrees: the front matter check of the head readHead keeps
// (a first read of headChunk bytes, read on only when they hold no
// closing --- line, cut to what frontMatterHead says the check needs)
// gives what it gives on the file's first limit bytes, whole, for files
// whose front matter ends on, around or past the first read's end.
func TestReadHeadAgrees(t *testing.T) {
	fm := func(n int) string { // front matter of n bytes, its --- lines included
		s := "---\nname: s\ndescription: "
		return s + strings.Repeat("x", n-len(s)-len("\n---\n")) + "\n---\n"
	}
	cases := map[string]string{
		"empty":                 "",
		"short":                 "---",
		"open only":             "---\n",
		"crlf open":             "---\r",
		"bom":                   utf8BOM + fm(200) + "# s\n",
		"bom only":              utf8BOM[:2],
		"no front matter":       "# s\n" + strings.Repeat("y", 9000),
		"dashes then text":      "----\nname: s\n---\n",
		"small":                 fm(150) + "# s\n",
		"small long body":       fm(150) + strings.Repeat("body\n", 2000),
		"crlf":                  strings.ReplaceAll(fm(300), "\n", "\r\n") + strings.Repeat("z", 8000),
		"closing spaces":        "---\nname: s\n--- \t\r\nrest\n" + strings.Repeat("z", 8000),
		"ends at chunk":         fm(headChunk) + strings.Repeat("z", 100),
		"newline past chunk":    fm(headChunk+1) + strings.Repeat("z", 100),
		"dashes past chunk":     fm(headChunk+4) + strings.Repeat("z", 100),
		"longer line at chunk":  "---\nname: s\ndescription: " + strings.Repeat("x", headChunk-len("---\nname: s\ndescription: ")-4) + "\n---" + "-\n" + fm(200),
		"chunk exactly":         fm(headChunk),
		"long front matter":     fm(20 << 10),
		"at the limit":          fm(64<<10 + 8),
		"past the limit":        fm(64<<10 + 9),
		"not closed":            "---\nname: s\n" + strings.Repeat("x", 70<<10),
		"no front matter, long": strings.Repeat("w", 70<<10),
	}
	dir := t.TempDir()
	v := &sourceCheck{rules: &Rules{Limits: plan.DraftLimits}}
	limit := int64(v.rules.Limits.FrontMatterBytes + 8)
	for name, content := range cases {
		file := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		fi, head, err := readFileHead(file, limit)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fi.Size() != int64(len(content)) {
			t.Errorf("%s: size %d, want %d", name, fi.Size(), len(content))
		}
		whole := []byte(content[:min(len(content), int(limit))])
		var got, want diagList
		gfm, gline, gok := v.frontMatter(name, &head, &got)
		wfm, wline, wok := v.frontMatter(name, textOf(whole), &want)
		if string(gfm) != string(wfm) || gline != wline || gok != wok || !reflect.DeepEqual(got.diags, want.diags) {
			t.Errorf("%s: from the head %q %d %t %v, from the whole %q %d %t %v", name, gfm, gline, gok, got.diags, wfm, wline, wok, want.diags)
		}
	}
}

// TestReadHeadAllocates holds readHead of a SKILL.md of 9 KB to an
// allocation of about its front matter, whether the front matter is 150
// bytes or 14 KB, past the first read: it allocated the file's first
// limit bytes, 9 KB, a fifth of what a cold validation of the own shape
// allocated; and then a buffer the size of a long front matter for each
// file, memory the kernel faulted in since dalo collects no garbage while
// it validates.
func TestReadHeadAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates: counted without it")
	}
	long := "---\nname: s\ndescription: Use when testing.\nmetadata:\n" + strings.Repeat("  key: \"a value of some length, kept\"\n", 350) + "---\n"
	for _, fm := range []string{"---\nname: s\ndescription: Use when testing.\n---\n", long} {
		file := filepath.Join(t.TempDir(), "SKILL.md")
		content := fm + strings.Repeat("Guidance.\n", 900)
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		dfd, err := openDir(unix.AT_FDCWD, filepath.Dir(file), 0)
		if err != nil {
			t.Fatal(err)
		}
		defer closeFD(dfd)
		const runs = 100
		readHeadAt(dfd, "SKILL.md", 64<<10+8, nil) // the pool's buffer
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			if _, _, err := readHeadAt(dfd, "SKILL.md", 64<<10+8, nil); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > uint64(len(fm))+512 {
			t.Errorf("readHead allocated %d bytes a file of %d whose front matter is %d, want at most %d", per, len(content), len(fm), len(fm)+512)
		}
	}
}

// TestEntriesAllocations holds a directory's listing to two allocations
// a getdents read: one string of its names and the slice of entries. It
// made one a name and those of a slice grown by append: six for three.
func TestEntriesAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates: counted without it")
	}
	dir := t.TempDir()
	for _, name := range []string{"SKILL.md", "notes.md"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "reference"), 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := openDir(unix.AT_FDCWD, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := fdDir{fd}
	defer d.close()
	var ents []dirEntry
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := unix.Seek(fd, 0, 0); err != nil {
			t.Fatal(err)
		}
		if ents, err = d.entries(); err != nil {
			t.Fatal(err)
		}
	})
	var got []string
	for _, e := range ents {
		got = append(got, e.name+" "+e.typ.String())
	}
	if s := strings.Join(got, ", "); s != "SKILL.md ----------, notes.md ----------, reference d---------" {
		t.Errorf("entries %s", s)
	}
	if allocs > 2 {
		t.Errorf("listing 3 entries made %v allocations, want 2", allocs)
	}
}

// TestRealDirsKept: once realDirs has proved a layout directory real, the
// next skill under it asks it without an allocation or a system call.
func TestRealDirsKept(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "skills", "s"), 0o755); err != nil {
		t.Fatal(err)
	}
	v := &sourceCheck{root: root, dirs: map[string]bool{}}
	if !v.realDirs("skills") {
		t.Fatal("skills is not a real directory")
	}
	lstats := componentLstats.Load()
	if allocs := testing.AllocsPerRun(100, func() {
		if !v.realDirs("skills") {
			t.Fatal("skills is not a real directory")
		}
	}); allocs != 0 {
		t.Errorf("realDirs of a directory it proved made %v allocations, want 0", allocs)
	}
	if n := componentLstats.Load() - lstats; n != 0 {
		t.Errorf("%d components stated again", n)
	}
}

// TestFrontMatterCopiedOnce: the bytes of a generated skill's front matter
// are copied once, from the read buffer, between the read and the program
// that checks them: readHead, frontMatter and plainFrontMatter allocate
// its YAML once beside what plainFrontMatter builds of it. The head was
// copied out of the buffer, then its YAML again into a string, a sixth of
// what checking a package of the skills shape allocated.
func TestFrontMatterCopiedOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates: counted without it")
	}
	path, yaml := generatedSkill(t)
	v := &sourceCheck{rules: &Rules{Limits: plan.DraftLimits}}
	limit := int64(v.rules.Limits.FrontMatterBytes + 8)
	allocated := func(f func()) uint64 {
		const runs = 100
		f() // the pools' buffers
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			f()
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / runs
	}
	read := allocated(func() {
		_, head, err := readFileHead(path, limit)
		if err != nil {
			t.Fatal(err)
		}
		var l diagList
		fm, _, ok := v.frontMatter(path, &head, &l)
		if !ok || fm != yaml {
			t.Fatalf("front matter %q (%t), want %q", fm, ok, yaml)
		}
		if _, _, ok := plainFrontMatter(fm, nil); !ok {
			t.Fatal("generated front matter not plain")
		}
	})
	built := allocated(func() { plainFrontMatter(yaml, nil) })
	if copied := read - built; copied > uint64(len(yaml)+len(yaml)/4) {
		t.Errorf("reading a front matter of %d bytes allocated %d bytes beside what plainFrontMatter builds (%d), want one copy of it", len(yaml), copied, built)
	}
}
