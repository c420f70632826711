package project

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var sampleLock = &Lock{
	Sources: []LockedSource{
		{ID: "team", Git: "https://example.com/team/agent-packages.git", Ref: "main", Commit: strings.Repeat("a", 40)},
		{ID: "local", Path: "tools/agents"},
	},
	Packages: []LockedPackage{
		{Source: "team", Name: "guard", ID: "com.example.guard", Version: "1.2.0", Providers: []string{"codex", "claude"},
			Grants: []LockedGrant{
				{ID: "codex+team+guard+tool+check", Digest: strings.Repeat("1", 64), Tables: []string{"codex@0.171.0", "codex@0.147.0"}},
				{ID: "claude+team+guard+hook+gate", Digest: strings.Repeat("2", 64), Tables: []string{"claude@2.1.332"}},
				{ID: "claude+team+guard+hook+gate", Digest: strings.Repeat("6", 64), Tables: []string{"claude@2.1.233"}},
				{ID: "claude+team+guard+tool+check", Digest: strings.Repeat("1", 64), Tables: []string{"claude@2.1.1000", "claude@2.1.332"}},
			}},
		{Source: "local", Name: "notes", Providers: []string{"claude"},
			Grants: []LockedGrant{{ID: "claude+local+notes+skill+notes", Digest: strings.Repeat("3", 64), Tables: []string{"claude@2.1.332"}}}},
	},
}

const sampleLockText = lockHeader + `lock_version = 1

[[source]]
id = "local"
path = "tools/agents"

[[source]]
id = "team"
git = "https://example.com/team/agent-packages.git"
ref = "main"
commit = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

[[package]]
ref = "local:notes"
providers = ["claude"]

[[package.grant]]
id = "claude+local+notes+skill+notes"
digest = "3333333333333333333333333333333333333333333333333333333333333333"
tables = ["claude@2.1.332"]

[[package]]
ref = "team:guard"
id = "com.example.guard"
version = "1.2.0"
providers = ["claude", "codex"]

[[package.grant]]
id = "claude+team+guard+hook+gate"
digest = "6666666666666666666666666666666666666666666666666666666666666666"
tables = ["claude@2.1.233"]

[[package.grant]]
id = "claude+team+guard+hook+gate"
digest = "2222222222222222222222222222222222222222222222222222222222222222"
tables = ["claude@2.1.332"]

[[package.grant]]
id = "claude+team+guard+tool+check"
digest = "1111111111111111111111111111111111111111111111111111111111111111"
tables = ["claude@2.1.332", "claude@2.1.1000"]

[[package.grant]]
id = "codex+team+guard+tool+check"
digest = "1111111111111111111111111111111111111111111111111111111111111111"
tables = ["codex@0.147.0", "codex@0.171.0"]
`

// TestLockRoundTrip holds the writer to one order whatever the order of
// what it is given, and the reader to reading back what it wrote.
func TestLockRoundTrip(t *testing.T) {
	got := sampleLock.Marshal()
	if string(got) != sampleLockText {
		t.Fatalf("Marshal:\n%s\nwant:\n%s", got, sampleLockText)
	}
	l, err := ParseLock(got)
	if err != nil {
		t.Fatal(err)
	}
	if again := l.Marshal(); !bytes.Equal(again, got) {
		t.Fatalf("ParseLock then Marshal changed the lock:\n%s", again)
	}
	root := t.TempDir()
	if err := WriteLock(root, sampleLock); err != nil {
		t.Fatal(err)
	}
	l, err = ReadLock(root)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := l.Package("team:guard")
	if !ok || p.Version != "1.2.0" || len(p.Grants) != 4 {
		t.Errorf("team:guard read back as %+v", p)
	}
	for _, tc := range []struct{ id, table, digest string }{
		{"claude+team+guard+hook+gate", "claude@2.1.233", strings.Repeat("6", 64)},
		{"claude+team+guard+hook+gate", "claude@2.1.332", strings.Repeat("2", 64)},
		{"codex+team+guard+tool+check", "codex@0.147.0", strings.Repeat("1", 64)},
		{"codex+team+guard+tool+check", "claude@2.1.332", ""},
	} {
		if d, _ := p.Digest(tc.id, tc.table); d != tc.digest {
			t.Errorf("Digest(%s, %s) = %q, want %q", tc.id, tc.table, d, tc.digest)
		}
	}
	if s, ok := l.Source("team"); !ok || s.Commit != strings.Repeat("a", 40) {
		t.Errorf("source team read back as %+v", s)
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 {
		t.Errorf("WriteLock left %d files, want dalo.lock alone", len(ents))
	}
	os.Remove(filepath.Join(root, LockFile))
	if _, err := ReadLock(root); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadLock without a lock: %v, want ErrNotExist", err)
	}
}

// TestParseLockRefused: a lock edited into what 'dalo lock' never writes
// is refused at the field.
func TestParseLockRefused(t *testing.T) {
	edit := func(old, new string) string {
		if !strings.Contains(sampleLockText, old) {
			t.Fatalf("sample lock has no %q", old)
		}
		return strings.Replace(sampleLockText, old, new, 1)
	}
	for _, tc := range []struct {
		name, src, want string
	}{
		{"version", edit("lock_version = 1", "lock_version = 2"), "dalo.lock:5:16: error E023 lock_version: invalid lock_version 2: expected lock version 1, the only one defined"},
		{"unknown field", edit("version = \"1.2.0\"", "version = \"1.2.0\"\nsigned = true"), "dalo.lock:30:1: error E020 package[1].signed: unknown field signed; package[1] takes grant, id, providers, ref, version"},
		{"short digest", edit("digest = \"2222", "digest = \"222"), "dalo.lock:39:10: error E023 package[1].grant[1].digest: invalid digest"},
		{"no commit", edit("commit = \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"\n", ""), "dalo.lock:11:3: error E115 source[1]: locked git source team has no commit"},
		{"grant of another package", edit("id = \"claude+team+guard+hook+gate\"", "id = \"claude+team+other+hook+gate\""), "dalo.lock:33:6: error E115 package[1].grant[0].id: grant claude+team+other+hook+gate is not of package team:guard"},
		{"grant of an unlisted provider", edit("id = \"claude+local+notes+skill+notes\"", "id = \"gemini+local+notes+skill+notes\""), "dalo.lock:22:6: error E115 package[0].grant[0].id: grant gemini+local+notes+skill+notes is for provider gemini, which package local:notes does not list"},
		{"grant of no kind", edit("id = \"claude+team+guard+hook+gate\"", "id = \"claude+team+guard+rule+gate\""), "dalo.lock:33:6: error E023 package[1].grant[0].id: invalid id \"claude+team+guard+rule+gate\": expected a grant id PROVIDER+SOURCE+NAME+KIND+ITEM"},
		{"package of no source", edit("ref = \"local:notes\"", "ref = \"other:notes\""), "dalo.lock:18:7: error E115 package[0].ref: package other:notes is of source other, which the lock does not hold"},
		{"table of another provider", edit("tables = [\"codex@0.147.0\"", "tables = [\"claude@0.147.0\""), "dalo.lock:50:11: error E115 package[1].grant[3].tables[0]: grant codex+team+guard+tool+check is of provider codex, not of table claude@0.147.0"},
		{"table twice", edit("tables = [\"claude@2.1.233\"]", "tables = [\"claude@2.1.332\"]"), "dalo.lock:40:11: error E115 package[1].grant[1].tables[0]: grant claude+team+guard+hook+gate is locked twice for claude@2.1.332"},
		{"no tables", edit("tables = [\"claude@2.1.233\"]", "tables = []"), "dalo.lock:35:10: error E023 package[1].grant[0].tables: invalid tables (0 entries): expected a non-empty array of provider tables"},
		{"not TOML", edit("[[package]]", "[[package]"), "dalo.lock:17:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLock([]byte(tc.src))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("ParseLock: %v, want an *Error", err)
			}
			if got := e.Diagnostics[0].String(); !strings.HasPrefix(got, tc.want) {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// FuzzParseLock: whatever the bytes, ParseLock returns a lock or an
// error, and a lock it returns writes back as bytes it reads the same.
func FuzzParseLock(f *testing.F) {
	f.Add([]byte(sampleLockText))
	f.Add([]byte("lock_version = 1\n"))
	f.Add([]byte("lock_version = 1\n[[source]]\nid = \"a\"\npath = \"x\"\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		l, err := ParseLock(src)
		if err != nil {
			return
		}
		out := l.Marshal()
		again, err := ParseLock(out)
		if err != nil {
			t.Fatalf("ParseLock of Marshal's output: %v\n%s", err, out)
		}
		if b := again.Marshal(); !bytes.Equal(b, out) {
			t.Fatalf("Marshal is not stable:\n%s\nthen\n%s", out, b)
		}
	})
}
