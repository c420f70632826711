package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"dalo/providers"
)

// The candidate a probe writes from the nearest table names the new
// version everywhere, prints what the harness printed for --version, cites
// the new version's recordings, and cites none of the nearest version's
// findings as a run of this one; it loads as a table of the new version
// whose claims are the nearest table's, unchanged but for the version.
func TestCandidate(t *testing.T) {
	ts, err := providers.LoadFS(os.DirFS("../../../providers"))
	if err != nil {
		t.Fatal(err)
	}
	near, ok := ts.Lookup("codex", "0.147.0")
	if !ok {
		t.Fatal("no codex@0.147.0 table")
	}
	src, err := os.ReadFile(filepath.Join("../../../providers", near.File))
	if err != nil {
		t.Fatal(err)
	}
	got := string(candidate(src, near, "0.150.2", "codex-cli 0.150.2"))
	for _, want := range []string{
		"// Candidate written by the probe (go run ./internal/live/probe codex@0.150.2)",
		`version: "0.150.2"`,
		`install: "npm install @openai/codex@0.150.2"`,
		`text: "codex-cli 0.150.2"`,
		`"recording: providers/testdata/recordings/codex/0.150.2/PreToolUse.json"`,
		`"doc: providers/testdata/README.md finding 18, seen on Codex CLI 0.147.0"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("candidate lacks %s", want)
		}
	}
	for _, bad := range []string{`"run: providers/testdata/README.md finding`, "recordings/codex/0.147.0", `version: "0.147.0"`} {
		if strings.Contains(got, bad) {
			t.Errorf("candidate still holds %s", bad)
		}
	}

	// It loads beside the others, and differs from the nearest in no claim.
	fsys := fstest.MapFS{"codex/0.150.2.cue": {Data: []byte(got)}}
	for _, tb := range ts.All() {
		b, err := os.ReadFile(filepath.Join("../../../providers", tb.File))
		if err != nil {
			t.Fatal(err)
		}
		fsys[tb.File] = &fstest.MapFile{Data: b}
	}
	all, err := providers.LoadFS(fsys)
	if err != nil {
		t.Fatalf("the candidate does not load: %v", err)
	}
	cand, ok := all.Lookup("codex", "0.150.2")
	if !ok {
		t.Fatal("no codex@0.150.2 after loading the candidate")
	}
	if n := nearest(all, "codex", "0.150.2"); n == nil || n.Version != "0.147.0" {
		t.Errorf("nearest(codex@0.150.2) = %v, want 0.147.0 (the newest older one)", n)
	}
	if n := nearest(all, "codex", "0.100.0"); n == nil || n.Version != "0.147.0" {
		t.Errorf("nearest(codex@0.100.0) = %v, want 0.147.0 (the oldest newer one)", n)
	}
	was, err := ownValues(near, near.Version, "0.150.2")
	if err != nil {
		t.Fatal(err)
	}
	now, err := ownValues(cand, "0.150.2", "0.150.2")
	if err != nil {
		t.Fatal(err)
	}
	if len(was) < 100 || len(now) != len(was) {
		t.Fatalf("claims: %d in the nearest table, %d in the candidate", len(was), len(now))
	}
	for path, v := range was {
		if now[path] != v {
			t.Errorf("%s: the candidate has %s, the nearest %s", path, now[path], v)
		}
	}
	if _, ok := now[`tool_patterns."mcp__<server>__<tool>"`]; ok {
		t.Error("a claim codex@0.147.0 does not make")
	}
}
