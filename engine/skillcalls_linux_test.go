package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSkillSystemCalls holds the check of a skill to the system calls its
// rules need: its folder opened relative to the layout folder (skills),
// which the run opens once, not by its path from the root, and listed,
// its SKILL.md opened relative
// to the folder, fstat'ed (the size the walk counts), read in one read
// and closed, and each subfolder opened and listed with its regular files
// stated for their sizes. A source of one package is checked with one
// skill and with four; what the three more skills cost is counted:
//
//	skill folder     openat, getdents twice (the second finds the end), close  4
//	SKILL.md         openat, fstat, read, close                                4
//	reference/       openat, getdents twice, close                             4
//	reference/notes  fstatat                                                   1
//
// No component of a skill's path is stated by itself (lstatInside), and
// no SKILL.md is read again by its path: that made 17 system calls a
// skill, more than the floor's whole cost of a package.
func TestSkillSystemCalls(t *testing.T) {
	const perSkill = 13
	type count struct{ walk, lstats, pathReads, pathOpens int64 }
	run := func(skills int) count {
		dir := filepath.Join(t.TempDir(), "source")
		var m strings.Builder
		m.WriteString("schema_version = 1\n\n[plugin]\nname = \"calls\"\ndescription = \"Skills.\"\nid = \"calls.pkg\"\nversion = \"1.0.0\"\n")
		for i := range skills {
			name := fmt.Sprintf("calls-s%d", i)
			writeFile(t, dir, "skills/"+name+"/SKILL.md", fmt.Sprintf("---\nname: %s\ndescription: Use when counting system calls.\n---\n# %s\n", name, name))
			writeFile(t, dir, "skills/"+name+"/reference/notes.md", "Notes.\n")
			fmt.Fprintf(&m, "\n[[plugin.members]]\nref = \"skill:%s\"\nrequirement = \"required\"\n", name)
		}
		writeFile(t, dir, "plugins/calls/PLUGIN.toml", m.String())
		var reads int64
		defer func(old func(string)) { afterRead = old }(afterRead)
		afterRead = func(name string) {
			if filepath.Base(name) == "SKILL.md" {
				reads++
			}
		}
		walk, lstats, opens := walkCalls.Load(), componentLstats.Load(), pathOpens.Load()
		rep, err := Validate(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Valid {
			t.Fatalf("source of %d skills invalid: %v", skills, rep.Diagnostics)
		}
		return count{walkCalls.Load() - walk, componentLstats.Load() - lstats, reads, pathOpens.Load() - opens}
	}
	one, four := run(1), run(4)
	if n := (four.walk - one.walk) / 3; n != perSkill || (four.walk-one.walk)%3 != 0 {
		t.Errorf("the walk made %d system calls for 3 skills more, want %d a skill", four.walk-one.walk, perSkill)
	}
	if n := four.lstats - one.lstats; n != 0 {
		t.Errorf("%d components stated for 3 skills more, want 0", n)
	}
	if four.pathReads != 0 {
		t.Errorf("SKILL.md read by its path %d times, want 0", four.pathReads)
	}
	if n := four.pathOpens - one.pathOpens; n != 0 {
		t.Errorf("%d skill folders opened by their path from the root for 3 skills more, want 0", n)
	}
}

// TestInstructionSystemCalls holds the check of an instruction and of an
// agent to the system calls their rules need, through raw system calls:
// the file opened relative to its layout folder (instructions, agents),
// which the run opens once, without following a symlink, fstat'ed
// (regular, and its size against the file limit), and read: an
// instruction's bytes to the size fstat gave, in one read (no read more
// to find the end: 30,000 of the 169,000 system calls of a source of
// 1,000 packages of 30 small instructions each), an agent's head in one
// read; then closed. The layout folder is stated
// once a run (realDirs); no file is stated apart from its open, as
// lstatInside did, opened by its path from the root, or through an
// *os.File.
func TestInstructionSystemCalls(t *testing.T) {
	const perMember = 4 + 4 // an instruction, an agent
	type count struct{ walk, lstats, pathOpens int64 }
	run := func(n int) count {
		dir := filepath.Join(t.TempDir(), "source")
		var m strings.Builder
		m.WriteString("schema_version = 1\n\n[plugin]\nname = \"calls\"\ndescription = \"Instructions.\"\nid = \"calls.pkg\"\nversion = \"1.0.0\"\n")
		for i := range n {
			name := fmt.Sprintf("calls-i%d", i)
			writeFile(t, dir, "instructions/"+name+".md", "# Guidance\n\n"+strings.Repeat("Say what the change touches.\n", 200))
			fmt.Fprintf(&m, "\n[[plugin.members]]\nref = \"instruction:%s\"\nrequirement = \"recommended\"\n", name)
			agent := fmt.Sprintf("calls-a%d", i)
			writeFile(t, dir, "agents/"+agent+".md", "---\nname: "+agent+"\ndescription: Counts system calls.\n---\nCount.\n")
			fmt.Fprintf(&m, "\n[[plugin.members]]\nref = \"agent:%s\"\nrequirement = \"optional\"\n", agent)
		}
		writeFile(t, dir, "plugins/calls/PLUGIN.toml", m.String())
		walk, lstats, opens := walkCalls.Load(), componentLstats.Load(), pathOpens.Load()
		rep, err := Validate(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Valid {
			t.Fatalf("source of %d instructions and agents invalid: %v", n, rep.Diagnostics)
		}
		return count{walkCalls.Load() - walk, componentLstats.Load() - lstats, pathOpens.Load() - opens}
	}
	one, four := run(1), run(4)
	if n := (four.walk - one.walk) / 3; n != perMember || (four.walk-one.walk)%3 != 0 {
		t.Errorf("%d raw system calls for 3 instructions and 3 agents more, want %d for each pair", four.walk-one.walk, perMember)
	}
	if n := four.lstats - one.lstats; n != 0 {
		t.Errorf("%d components stated for 3 instructions and 3 agents more, want 0", n)
	}
	if n := four.pathOpens - one.pathOpens; n != 0 {
		t.Errorf("%d files opened by their path from the root for 3 instructions and 3 agents more, want 0", n)
	}
}

// TestSkillAtAgrees: a skill resolved and checked by skillAt, an agent
// by agentAt and an instruction by instructionAt (validation without a
// cache), get the report the way through lstatInside, walkTree and a read
// of the file by its path gives (validation with an empty cache, which
// takes that way), in each case they leave to it or meet on the way.
func TestSkillAtAgrees(t *testing.T) {
	const fm = "---\nname: s\ndescription: Use when testing.\n---\n# s\n"
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string) // dir is the skill's folder
		code string                         // a code the report must hold
	}{
		{"valid", func(t *testing.T, dir string) {}, ""},
		{"folder symlink", func(t *testing.T, dir string) {
			mustDo(t, os.Rename(dir, dir+"-real"))
			mustDo(t, os.Symlink("s-real", dir))
		}, "E071"},
		{"file symlink", func(t *testing.T, dir string) {
			mustDo(t, os.Rename(filepath.Join(dir, "SKILL.md"), filepath.Join(dir, "real.md")))
			mustDo(t, os.Symlink("real.md", filepath.Join(dir, "SKILL.md")))
		}, "E071"},
		{"file a folder", func(t *testing.T, dir string) {
			mustDo(t, os.Remove(filepath.Join(dir, "SKILL.md")))
			mustDo(t, os.Mkdir(filepath.Join(dir, "SKILL.md"), 0o755))
		}, "E071"},
		{"file missing", func(t *testing.T, dir string) {
			mustDo(t, os.Remove(filepath.Join(dir, "SKILL.md")))
		}, "E071"},
		{"file a fifo", func(t *testing.T, dir string) {
			mustDo(t, os.Remove(filepath.Join(dir, "SKILL.md")))
			mustDo(t, syscall.Mkfifo(filepath.Join(dir, "SKILL.md"), 0o644))
		}, "E071"},
		{"file over the file limit", func(t *testing.T, dir string) {
			mustDo(t, os.Truncate(filepath.Join(dir, "SKILL.md"), 64<<20+1))
		}, "E068"},
		{"front matter not closed", func(t *testing.T, dir string) {
			writeFile(t, dir, "SKILL.md", "---\nname: s\n"+strings.Repeat("x", 70<<10))
		}, "E079"},
		{"empty file", func(t *testing.T, dir string) {
			writeFile(t, dir, "SKILL.md", "")
		}, "E079"},
		{"bad front matter", func(t *testing.T, dir string) {
			writeFile(t, dir, "SKILL.md", "---\nname: other\n---\n")
		}, ""},
		{"symlink and fifo inside", func(t *testing.T, dir string) {
			mustDo(t, os.Symlink("SKILL.md", filepath.Join(dir, "link")))
			mustDo(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
		}, "W065"},
		{"walk stops before the file", func(t *testing.T, dir string) {
			for i := range 4097 {
				writeFile(t, dir, fmt.Sprintf("A%04d", i), "")
			}
		}, "E066"},
		{"layout folder symlink", func(t *testing.T, dir string) {
			skills := filepath.Dir(dir)
			mustDo(t, os.Rename(skills, skills+"-real"))
			mustDo(t, os.Symlink("skills-real", skills))
		}, "E071"},
		{"agent symlink", func(t *testing.T, dir string) {
			agent := filepath.Join(dir, "../../agents/a.md")
			mustDo(t, os.Rename(agent, agent+".real"))
			mustDo(t, os.Symlink("a.md.real", agent))
		}, "E071"},
		{"agent a folder", func(t *testing.T, dir string) {
			agent := filepath.Join(dir, "../../agents/a.md")
			mustDo(t, os.Remove(agent))
			mustDo(t, os.Mkdir(agent, 0o755))
		}, "E071"},
		{"agent missing", func(t *testing.T, dir string) {
			mustDo(t, os.Remove(filepath.Join(dir, "../../agents/a.md")))
		}, "E071"},
		{"agent a fifo", func(t *testing.T, dir string) {
			agent := filepath.Join(dir, "../../agents/a.md")
			mustDo(t, os.Remove(agent))
			mustDo(t, syscall.Mkfifo(agent, 0o644))
		}, "E071"},
		{"agent over the file limit", func(t *testing.T, dir string) {
			mustDo(t, os.Truncate(filepath.Join(dir, "../../agents/a.md"), 64<<20+1))
		}, "E068"},
		{"agent empty", func(t *testing.T, dir string) {
			mustDo(t, os.Truncate(filepath.Join(dir, "../../agents/a.md"), 0))
		}, "E079"},
		{"agent front matter not closed", func(t *testing.T, dir string) {
			writeFile(t, dir, "../../agents/a.md", "---\nname: a\n"+strings.Repeat("x", 70<<10))
		}, "E079"},
		{"instruction symlink", func(t *testing.T, dir string) {
			in := filepath.Join(dir, "../../instructions/i.md")
			mustDo(t, os.Rename(in, in+".real"))
			mustDo(t, os.Symlink("i.md.real", in))
		}, "E071"},
		{"instruction a folder", func(t *testing.T, dir string) {
			in := filepath.Join(dir, "../../instructions/i.md")
			mustDo(t, os.Remove(in))
			mustDo(t, os.Mkdir(in, 0o755))
		}, "E071"},
		{"instruction missing", func(t *testing.T, dir string) {
			mustDo(t, os.Remove(filepath.Join(dir, "../../instructions/i.md")))
		}, "E071"},
		{"instruction a fifo", func(t *testing.T, dir string) {
			in := filepath.Join(dir, "../../instructions/i.md")
			mustDo(t, os.Remove(in))
			mustDo(t, syscall.Mkfifo(in, 0o644))
		}, "E071"},
		{"instruction over the file limit", func(t *testing.T, dir string) {
			mustDo(t, os.Truncate(filepath.Join(dir, "../../instructions/i.md"), 64<<20+1))
		}, "E068"},
		{"instruction empty", func(t *testing.T, dir string) {
			mustDo(t, os.Truncate(filepath.Join(dir, "../../instructions/i.md"), 0))
		}, ""},
		{"instruction not UTF-8", func(t *testing.T, dir string) {
			writeFile(t, dir, "../../instructions/i.md", "# Guide\n\n"+strings.Repeat("text\n", 20000)+"bad \xff byte\n")
		}, "E091"},
		{"instruction holds NUL", func(t *testing.T, dir string) {
			writeFile(t, dir, "../../instructions/i.md", "# Guide\n\nnul \x00 here\n")
		}, "E091"},
		// An instruction is read to the size its fstat gave: its last
		// byte is read and checked, whichever way it is checked.
		{"instruction ends in a byte not UTF-8", func(t *testing.T, dir string) {
			writeFile(t, dir, "../../instructions/i.md", "# Guide\n\nlast\xff")
		}, "E091"},
		{"instruction ends in NUL", func(t *testing.T, dir string) {
			writeFile(t, dir, "../../instructions/i.md", "# Guide\n\nlast\x00")
		}, "E091"},
		{"instruction ends within a rune", func(t *testing.T, dir string) {
			writeFile(t, dir, "../../instructions/i.md", "# Guide\n\nlast \xe2\x82")
		}, "E091"},
		{"instruction past a buffer ends in a byte not UTF-8", func(t *testing.T, dir string) {
			writeFile(t, dir, "../../instructions/i.md", strings.Repeat("text\n", 14000)+"\xff")
		}, "E091"},
		{"instruction a rune across the buffer's end", func(t *testing.T, dir string) {
			writeFile(t, dir, "../../instructions/i.md", strings.Repeat("x", 64<<10-1)+"\u20ac\n")
		}, ""},
		{"instructions folder symlink", func(t *testing.T, dir string) {
			ins := filepath.Join(dir, "../../instructions")
			mustDo(t, os.Rename(ins, ins+"-real"))
			mustDo(t, os.Symlink("instructions-real", ins))
		}, "E071"},
		{"agents folder symlink", func(t *testing.T, dir string) {
			agents := filepath.Join(dir, "../../agents")
			mustDo(t, os.Rename(agents, agents+"-real"))
			mustDo(t, os.Symlink("agents-real", agents))
		}, "E071"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "source")
			writeFile(t, src, "skills/s/SKILL.md", fm)
			writeFile(t, src, "skills/s/reference/notes.md", "Notes.\n")
			writeFile(t, src, "agents/a.md", "---\nname: a\ndescription: Reviews.\n---\nReview.\n")
			writeFile(t, src, "instructions/i.md", "# Guide\n\nSay what the change touches.\n")
			writeFile(t, src, "plugins/p/PLUGIN.toml", "schema_version = 1\n\n[plugin]\nname = \"p\"\ndescription = \"A skill.\"\nid = \"calls.p\"\nversion = \"1.0.0\"\n\n[[plugin.members]]\nref = \"skill:s\"\nrequirement = \"required\"\n\n[[plugin.members]]\nref = \"agent:a\"\nrequirement = \"required\"\n\n[[plugin.members]]\nref = \"instruction:i\"\nrequirement = \"required\"\n")
			tc.make(t, filepath.Join(src, "skills", "s"))
			got := reportJSON(t, src, Options{})
			want := reportJSON(t, src, Options{Cache: &memCache{m: map[string][]byte{}}})
			if got != want {
				t.Errorf("without a cache:\n%s\nthrough lstatInside and the walk:\n%s", got, want)
			}
			if tc.code != "" && !strings.Contains(got, `"`+tc.code+`"`) {
				t.Errorf("no %s in %s", tc.code, got)
			}
		})
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
