package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"dalo/jsonedit"
	"dalo/plan"
	"dalo/providers"
)

// entry is an entry of the shape of Claude Code's and Codex's tables.
func entry(cmd string, timeout int, matcher string) HarnessEntry {
	m := ""
	if matcher != "" {
		m = `"matcher":` + string(mustJSON(matcher)) + ","
	}
	return HarnessEntry(fmt.Sprintf(`{%s"hooks":[{"type":"command","command":%s,"timeout":%d}]}`, m, mustJSON(cmd), timeout))
}

const dispatchPre = "/bin/dalo hook dispatch --provider claude --event PreToolUse"

// TestEditConfigRoundTrip adds dalo's entry to documents written in
// different styles, checks the result, and removes it again: the document
// must come back byte for byte.
func TestEditConfigRoundTrip(t *testing.T) {
	want := map[string]HarnessEntry{"PreToolUse": entry(dispatchPre, 7, "*")}
	tests := []struct {
		name, doc, added string
	}{{
		name: "two spaces, other hooks",
		doc:  "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n",
		added: "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [],\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"*\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n" +
			"            \"command\": \"/bin/dalo hook dispatch --provider claude --event PreToolUse\",\n            \"timeout\": 7\n          }\n        ]\n      }\n    ]\n  }\n}\n",
	}, {
		name:  "tabs, no hooks key",
		doc:   "{\n\t\"model\": \"opus\"\n}",
		added: "{\n\t\"model\": \"opus\",\n\t\"hooks\": {\n\t\t\"PreToolUse\": [\n\t\t\t{\n\t\t\t\t\"matcher\": \"*\",\n\t\t\t\t\"hooks\": [\n\t\t\t\t\t{\n\t\t\t\t\t\t\"type\": \"command\",\n\t\t\t\t\t\t\"command\": \"/bin/dalo hook dispatch --provider claude --event PreToolUse\",\n\t\t\t\t\t\t\"timeout\": 7\n\t\t\t\t\t}\n\t\t\t\t]\n\t\t\t}\n\t\t]\n\t}\n}",
	}, {
		name:  "compact, the event in use by the user",
		doc:   `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"mine"}]}]}}`,
		added: `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"mine"}]},{"matcher":"*","hooks":[{"type":"command","command":"/bin/dalo hook dispatch --provider claude --event PreToolUse","timeout":7}]}]}}`,
	}, {
		name:  "one line with spaces",
		doc:   `{"a": 1, "hooks": {}}`,
		added: `{"a": 1, "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/bin/dalo hook dispatch --provider claude --event PreToolUse", "timeout": 7}]}]}}`,
	}, {
		name:  "empty object",
		doc:   "{}\n",
		added: `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/bin/dalo hook dispatch --provider claude --event PreToolUse", "timeout": 7}]}]}}` + "\n",
	}, {
		name:  "empty object on two lines",
		doc:   "{\n}\n",
		added: "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"*\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"/bin/dalo hook dispatch --provider claude --event PreToolUse\",\n            \"timeout\": 7\n          }\n        ]\n      }\n    ]\n  }\n}\n",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st, err := testOwner("claude").editConfig("settings.json", []byte(tc.doc), HarnessState{}, want)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.added {
				t.Fatalf("added:\n%s\nwant:\n%s", got, tc.added)
			}
			// Adding again changes nothing.
			again, st2, err := testOwner("claude").editConfig("settings.json", got, st, want)
			if err != nil || string(again) != string(got) {
				t.Fatalf("second edit changed the document (%v):\n%s", err, again)
			}
			back, _, err := testOwner("claude").editConfig("settings.json", got, st2, nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(back) != tc.doc {
				t.Fatalf("removed:\n%q\nwant:\n%q", back, tc.doc)
			}
		})
	}
}

// TestEditConfigComments edits the settings of a harness that reads them
// as JSON with comments (Gemini CLI): every comment survives, a comment
// that looks like a key or holds a brace changes nothing, and removing
// dalo's entry gives the document back byte for byte. A harness that reads
// plain JSON gets the syntax error it would give itself.
func TestEditConfigComments(t *testing.T) {
	const pre = "/bin/dalo hook dispatch --provider gemini --event BeforeTool"
	want := map[string]HarnessEntry{"BeforeTool": entry(pre, 7000, "*")}
	doc := "// The user's settings. {\"hooks\": \"not this\"}\n{\n  /* auth */ \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}, // key\n" +
		"  \"url\": \"http://example.com/*not a comment*/\", // a URL holds //\n  \"hooks\": {\n    // none yet\n  }\n}\n// end\n"
	o := testOwner("gemini")
	o.comments = true
	got, st, err := o.editConfig("settings.json", []byte(doc), HarnessState{}, want)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"// The user's settings. {\"hooks\": \"not this\"}\n", "/* auth */", "// key\n", "// a URL holds //\n", "// none yet", "// end\n", "http://example.com/*not a comment*/"} {
		if !strings.Contains(string(got), c) {
			t.Errorf("the edit lost %q:\n%s", c, got)
		}
	}
	if _, _, owned, err := o.scanConfig("settings.json", got); err != nil || len(owned) != 1 || owned[0].event != "BeforeTool" {
		t.Fatalf("dalo's entry is not where the harness reads it (%v, %d found):\n%s", err, len(owned), got)
	}
	var m map[string]any
	if err := json.Unmarshal(jsonedit.WithoutComments(got), &m); err != nil || m["url"] != "http://example.com/*not a comment*/" {
		t.Fatalf("without comments: %v, url %v:\n%s", err, m["url"], jsonedit.WithoutComments(got))
	}
	back, _, err := o.editConfig("settings.json", got, st, nil)
	if err != nil || string(back) != doc {
		t.Fatalf("removed (%v):\n%q\nwant:\n%q", err, back, doc)
	}
	_, _, err = testOwner("claude").editConfig("settings.json", []byte(doc), HarnessState{}, want)
	if err == nil || err.Error() != "settings.json: 1:1: not valid JSON: unexpected '/'" {
		t.Errorf("plain JSON with a comment: %v", err)
	}
	// A comment with no end is named, where it opens.
	_, _, err = o.editConfig("settings.json", []byte("{\n  \"a\": /* 1 }\n"), HarnessState{}, want)
	if err == nil || err.Error() != "settings.json: 2:8: not valid JSON: a /* comment is never closed (no */ after it)" {
		t.Errorf("unclosed comment: %v", err)
	}
}

// TestEditConfigCreates creates the file when it is missing and deletes it
// again when dalo's entries go.
func TestEditConfigCreates(t *testing.T) {
	want := map[string]HarnessEntry{"Stop": entry("/bin/dalo hook dispatch --provider codex --event Stop", 10, "")}
	got, st, err := testOwner("codex").editConfig("hooks.json", nil, HarnessState{}, want)
	if err != nil || !st.CreatedFile || !strings.Contains(string(got), `"Stop": [`) {
		t.Fatalf("create: %v %+v\n%s", err, st, got)
	}
	back, _, err := testOwner("codex").editConfig("hooks.json", got, st, nil)
	if err != nil || back != nil {
		t.Fatalf("delete: %v %q", err, back)
	}
}

// TestEditConfigUpdates rewrites dalo's own entry in place when what it
// must say changes, and refuses when the user changed it.
func TestEditConfigUpdates(t *testing.T) {
	doc := []byte("{\n  \"x\": 1\n}\n")
	w1 := map[string]HarnessEntry{"PreToolUse": entry(dispatchPre, 7, "*")}
	got, st, err := testOwner("claude").editConfig("s.json", doc, HarnessState{}, w1)
	if err != nil {
		t.Fatal(err)
	}
	w2 := map[string]HarnessEntry{"PreToolUse": entry(dispatchPre, 12, "*")}
	got2, st2, err := testOwner("claude").editConfig("s.json", got, st, w2)
	if err != nil || !strings.Contains(string(got2), `"timeout": 12`) || strings.Contains(string(got2), `"timeout": 7`) {
		t.Fatalf("update: %v\n%s", err, got2)
	}
	edited := []byte(strings.Replace(string(got2), `"timeout": 12`, `"timeout": 99`, 1))
	_, _, err = testOwner("claude").editConfig("s.json", edited, st2, w2)
	if err == nil || !strings.Contains(err.Error(), "s.json: 5:7: dalo's PreToolUse entry was changed since dalo wrote it") {
		t.Fatalf("changed entry: %v", err)
	}
}

func TestEditConfigErrors(t *testing.T) {
	want := map[string]HarnessEntry{"PreToolUse": entry(dispatchPre, 7, "*")}
	for _, tc := range []struct{ doc, err string }{
		{"", "f.json: 1:1: not valid JSON: unexpected end of input"},
		{"[1]", "f.json: the top level is not a JSON object"},
		{`{"hooks": []}`, "f.json: 1:11: hooks is not a JSON object"},
		{`{"hooks": {"PreToolUse": {}}}`, "f.json: 1:26: hooks.PreToolUse is not a JSON array"},
		{"{\n  \"a\": 1,\n}", "f.json: 3:1: not valid JSON: expected a string key"},
		{`{"a": "\x"}`, `f.json: 1:8: not valid JSON: invalid escape \x`},
		{`{"a": 01}`, "f.json: 1:8: not valid JSON: expected ',' or '}' in an object, found '1'"},
		{`{"a": 1} x`, `f.json: 1:10: not valid JSON: unexpected 'x' after the top-level value`},
	} {
		_, _, err := testOwner("claude").editConfig("f.json", []byte(tc.doc), HarnessState{}, want)
		if err == nil || err.Error() != tc.err {
			t.Errorf("%q: got %v, want %s", tc.doc, err, tc.err)
		}
	}
}

func TestUnifiedDiff(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	new := "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\nk\n"
	want := "--- a/f\n+++ b/f\n@@ -2,9 +2,10 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n i\n j\n+k\n"
	if got := UnifiedDiff("f", []byte(old), []byte(new)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := UnifiedDiff("f", []byte(old), []byte(old)); got != "" {
		t.Errorf("equal: %q", got)
	}
	want = "--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+x\n"
	if got := UnifiedDiff("f", nil, []byte("x\n")); got != want {
		t.Errorf("created:\n%s", got)
	}
}

// TestReadConfig reads harness configurations the way dalo must not trip
// over: missing, empty, a FIFO (no blocking), a directory, a dangling
// symlink (replacing it would replace the link) and a file too large to
// read; every error names the file.
func TestReadConfig(t *testing.T) {
	tests := []struct {
		name    string
		build   func(t *testing.T, p string)
		want    []byte
		wantErr string
	}{
		{"missing", func(t *testing.T, p string) {}, nil, ""},
		{"empty", func(t *testing.T, p string) { os.WriteFile(p, nil, 0o600) }, []byte{}, ""},
		{"settings", func(t *testing.T, p string) { os.WriteFile(p, []byte("{}\n"), 0o600) }, []byte("{}\n"), ""},
		{"fifo", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}, nil, "is a FIFO, not a regular file"},
		{"directory", func(t *testing.T, p string) { os.Mkdir(p, 0o700) }, nil, "is a directory, not a file"},
		{"dangling symlink", func(t *testing.T, p string) { os.Symlink("elsewhere.json", p) }, nil, "is a symlink to elsewhere.json"},
		{"too large", func(t *testing.T, p string) {
			f, _ := os.Create(p)
			f.Truncate(maxUserFileBytes + 1)
			f.Close()
		}, nil, "more than the 67108864 dalo reads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "settings.json")
			tt.build(t, p)
			done := make(chan struct{})
			var got []byte
			var err error
			go func() { got, err = readConfig(p); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("readConfig(%s) blocked", p)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), p) {
					t.Fatalf("err = %v, want %q naming %s", err, tt.wantErr, p)
				}
				return
			}
			if err != nil || string(got) != string(tt.want) || (got == nil) != (tt.want == nil) {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestEntryShapeFromTable: the entry's shape is the table's template,
// member order and timeout key included; dalo finds its command where the
// template puts it, keeps the entry through the store's record, however
// the record is spaced, and removes it again byte for byte.
func TestEntryShapeFromTable(t *testing.T) {
	tb := &providers.Table{Name: "claude", Version: "1.0.0", Events: map[string]providers.Event{"PreToolUse": {ToolMatcher: true}, "Stop": {}}}
	tb.Config.Hooks.Entry = providers.EntryTemplate{
		Template: json.RawMessage(`{"hooks": [{"command": "$command", "type": "command", "timeout_ms": "$timeout"}], "matcher": "$matcher"}`),
		Matcher:  "*",
	}
	pre, err := tb.Entry("PreToolUse", dispatchPre, 7000)
	if err != nil {
		t.Fatal(err)
	}
	stop, err := tb.Entry("Stop", strings.Replace(dispatchPre, "PreToolUse", "Stop", 1), 7000)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"hooks":[{"command":"/bin/dalo hook dispatch --provider claude --event PreToolUse","type":"command","timeout_ms":7000}],"matcher":"*"}`; string(pre) != want {
		t.Fatalf("PreToolUse entry %s, want %s", pre, want)
	}
	if want := `{"hooks":[{"command":"/bin/dalo hook dispatch --provider claude --event Stop","type":"command","timeout_ms":7000}]}`; string(stop) != want {
		t.Fatalf("Stop entry %s, want %s", stop, want)
	}
	o := testOwner("claude")
	o.command = tb.EntryPath(providers.EntryCommand)
	want := map[string]HarnessEntry{"PreToolUse": HarnessEntry(pre), "Stop": HarnessEntry(stop)}
	doc := []byte("{\n  \"model\": \"opus\"\n}\n")
	added, st, err := o.editConfig("settings.json", doc, HarnessState{}, want)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(added), "\"command\": \"/bin/dalo hook dispatch --provider claude --event PreToolUse\",\n            \"type\": \"command\",\n            \"timeout_ms\": 7000\n") {
		t.Fatalf("added:\n%s", added)
	}
	if _, _, owned, err := o.scanConfig("settings.json", added); err != nil || len(owned) != 2 {
		t.Fatalf("dalo's entries found in the edited file: %d, %v", len(owned), err)
	}
	// The record round-trips through JSON as the store keeps it, indented.
	var back HarnessState
	rec, _ := json.MarshalIndent(st, "", "  ")
	if err := json.Unmarshal(rec, &back); err != nil {
		t.Fatal(err)
	}
	if got := string(back.Entries["PreToolUse"]); got != string(pre) {
		t.Fatalf("record read back as %s, want %s", got, pre)
	}
	if got := back.Entries["PreToolUse"].command(tb); got != dispatchPre {
		t.Fatalf("the record's command %q, want %q", got, dispatchPre)
	}
	again, _, err := o.editConfig("settings.json", added, back, want)
	if err != nil || string(again) != string(added) {
		t.Fatalf("editing again: %v\n%s", err, again)
	}
	removed, _, err := o.editConfig("settings.json", added, back, nil)
	if err != nil || string(removed) != string(doc) {
		t.Fatalf("removed: %q %v", removed, err)
	}
	// An entry whose timeout is under another key is not what dalo wrote.
	edited := []byte(strings.Replace(string(added), `"timeout_ms"`, `"timeout"`, 1))
	if _, _, err := o.editConfig("settings.json", edited, back, want); err == nil || !strings.Contains(err.Error(), "was changed since dalo wrote it") {
		t.Fatalf("edited entry: %v", err)
	}
}

// testOwner owns the entries of provider from the store /store, in a file
// its harness reads as Claude Code does.
func testOwner(provider string) owner {
	return owner{provider: provider, home: "/store", harness: "the harness", dups: providers.ReadsLast, command: []string{"hooks", "", "command"}}
}

// TestFindDispatcher: the entries call the dalo-hook beside dalo when there
// is one that can run and is of the running dalo's build, else dalo's own
// `hook dispatch`.
func TestFindDispatcher(t *testing.T) {
	self, err := os.Executable() // this test binary stands for dalo's build
	if err != nil {
		t.Fatal(err)
	}
	goTool, err := exec.LookPath("go") // a Go binary of another build
	if err != nil {
		t.Skip("no go command")
	}
	link := func(target string) func(string) error {
		return func(p string) error { return os.Symlink(target, p) }
	}
	for _, tc := range []struct {
		name string
		hook func(path string) error
		fast bool
	}{
		{name: "no dalo-hook"},
		{name: "dalo-hook", hook: link(self), fast: true},
		{name: "another build", hook: link(goTool)},
		{name: "not a Go binary", hook: func(p string) error { return os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755) }},
		{name: "not executable", hook: func(p string) error { return os.WriteFile(p, nil, 0o644) }},
		{name: "a directory", hook: func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.hook != nil {
				if err := tc.hook(filepath.Join(dir, plan.HookBinary)); err != nil {
					t.Fatal(err)
				}
			}
			d := FindDispatcher(filepath.Join(dir, "dalo"))
			want := Dispatcher{Exe: filepath.Join(dir, "dalo")}
			if tc.fast {
				want = Dispatcher{Exe: filepath.Join(dir, plan.HookBinary), Hook: true}
			}
			if d != want {
				t.Errorf("FindDispatcher = %+v, want %+v", d, want)
			}
		})
	}
}

// TestOwnedEntry: an entry is dalo's when its command starts a dispatcher
// for the provider and either names this store or no store (an earlier
// dalo's entry, to migrate), and only then.
func TestOwnedEntry(t *testing.T) {
	for cmd, want := range map[string]string{
		"/bin/dalo hook dispatch --provider claude --event PreToolUse":                             "PreToolUse",
		"/bin/dalo-hook dispatch --provider claude --event Stop":                                   "Stop",
		"'/my bin/dalo-hook' dispatch --provider claude --event SessionEnd":                        "SessionEnd",
		"'/my bin/dalo' hook dispatch --provider claude --event SessionStart":                      "SessionStart",
		"/s/dispatchers/ab/dalo-hook dispatch --home /store --provider claude --event Stop":        "Stop",
		"'/s/d/dalo' hook dispatch --home '/store' --provider claude --event PreToolUse":           "PreToolUse",
		"/s/dispatchers/ab/dalo-hook dispatch --home /other --provider claude --event Stop":        "",
		"/bin/dalo hook dispatch --provider codex --event PreToolUse":                              "",
		"/bin/mytool dispatch --provider claude --event PreToolUse":                                "",
		"/bin/dalo-hook dispatch --provider claude --event 'PreToolUse'":                           "",
		"/bin/dalo-hook dispatch --provider claude --event PreToolUse; rm -rf":                     "",
		"/bin/dalo-hook dispatch --home /store --provider claude --event PreToolUse --nope":        "",
		"/bin/dalo-hook dispatch --home /store --provider claude --event PreToolUse --fail-closed": "",
	} {
		doc, err := json.Marshal(map[string]any{"hooks": []map[string]string{{"type": "command", "command": cmd}}})
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonedit.Scan(doc)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := testOwner("claude").ownedEvent(v)
		if got != want || ok != (want != "") {
			t.Errorf("%s: owned for %q, %v; want %q", cmd, got, ok, want)
		}
	}
}

// TestEntryCommand: every command dalo writes reads back as what it was
// written from, whatever the paths hold, and runs without a shell as the
// same command line.
func TestEntryCommand(t *testing.T) {
	for _, prog := range []string{"/s/dispatchers/ab/dalo-hook", "/my bin/dalo", "/it's/dalo", "/a'b'/'c/dalo-hook", "/tail'/dalo"} {
		for _, c := range []entryCommand{
			{Program: prog, Dalo: filepath.Base(prog) == "dalo", Home: "/store", Provider: "claude", Event: "PreToolUse"},
			{Program: prog, Dalo: filepath.Base(prog) == "dalo", Home: "/my store's", Provider: "codex", Event: "PreToolUse", FailClosed: true, Block: 2},
			{Program: prog, Dalo: filepath.Base(prog) == "dalo", Home: "/store", Provider: "claude", Event: "Stop", FailClosed: true, Block: 2, Continued: "stop_hook_active"},
			{Program: prog, Dalo: filepath.Base(prog) == "dalo", Provider: "claude", Event: "Stop"},
			{Program: prog, Dalo: filepath.Base(prog) == "dalo", Home: "/store", Provider: "copilot", Event: "PreToolUse", Open: true},
			// A project's scope (dalo sync).
			{Program: prog, Dalo: filepath.Base(prog) == "dalo", Home: "/store", Project: "0123456789abcdef", Provider: "claude", Event: "PreToolUse", FailClosed: true, Block: 2},
		} {
			got, ok := parseEntryCommand(c.String())
			if !ok || got != c {
				t.Errorf("parseEntryCommand(%q) = %+v, %v; want %+v", c.String(), got, ok, c)
			}
			var want []string
			if c.Dalo {
				want = []string{prog, "hook", "dispatch"}
			} else {
				want = []string{prog, "dispatch"}
			}
			if c.Home != "" {
				want = append(want, "--home", c.Home)
			}
			if c.Project != "" {
				want = append(want, "--project", c.Project)
			}
			want = append(want, "--provider", c.Provider, "--event", c.Event)
			if c.FailClosed {
				want = append(want, "--fail-closed")
			}
			if got := c.Argv(); !slices.Equal(got, want) {
				t.Errorf("Argv of %q = %q, want %q", c.String(), got, want)
			}
		}
	}
}

// TestUnifiedDiffApplies: the diff of a long document, found around the
// lines that differ, patches the old text into the new one, whatever the
// edit, at the start, the middle, the end, without a final newline.
func TestUnifiedDiffApplies(t *testing.T) {
	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("line %d\n", i%7))
	}
	doc := strings.Join(lines, "")
	edits := []func(string) string{
		func(s string) string { return "x\n" + s },
		func(s string) string { return s + "x\n" },
		func(s string) string { return s + "x" },
		func(s string) string { return strings.TrimSuffix(s, "\n") },
		func(s string) string { return strings.Replace(s, "line 3\n", "line three\n", 1) },
		func(s string) string { return strings.Replace(s, "line 3\nline 4\n", "", 5) },
		func(s string) string { return strings.Replace(s, "line 6\n", "line 6\nnew\n", -1) },
		func(s string) string { return s[:len(s)/2] + "mid\n" + s[len(s)/2:] },
		func(s string) string { return "" },
		func(s string) string { return "line 0\n" },
	}
	for i, e := range edits {
		for _, pair := range [][2]string{{doc, e(doc)}, {e(doc), doc}} {
			d := UnifiedDiff("f", []byte(pair[0]), []byte(pair[1]))
			if got := applyDiff(t, pair[0], d); got != pair[1] {
				t.Errorf("edit %d: the diff\n%s\npatches into\n%q\nwant\n%q", i, d, got, pair[1])
			}
		}
	}
}

// applyDiff applies unified diff d to old.
func applyDiff(t *testing.T, old, d string) string {
	t.Helper()
	src := strings.SplitAfter(old, "\n")
	var out []string
	next := 0 // the next line of src to copy
	lines := strings.SplitAfter(d, "\n")
	for k := 2; k < len(lines) && lines[k] != ""; k++ {
		l := lines[k]
		switch {
		case strings.HasPrefix(l, "@@ -"):
			var from int
			r, _, _ := strings.Cut(strings.TrimPrefix(l, "@@ -"), " ")
			fs, count, _ := strings.Cut(r, ",")
			fmt.Sscan(fs, &from)
			if count != "0" {
				from-- // 1-based, unless the range is empty
			}
			out = append(out, src[next:from]...)
			next = from
		case strings.HasPrefix(l, "\\"):
			// The line before has no newline: on the new side, when it
			// is one of the new text's.
			if p := lines[k-1][0]; p == ' ' || p == '+' {
				out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], "\n")
			}
		case l[0] == ' ':
			out = append(out, l[1:])
			next++
		case l[0] == '-':
			next++
		case l[0] == '+':
			out = append(out, l[1:])
		}
	}
	out = append(out, src[next:]...)
	return strings.Join(out, "")
}

// TestUnifiedDiffLocal: an edit of a long document, whose lines repeat,
// is one hunk around the line that changed, with three lines of context
// on either side.
func TestUnifiedDiffLocal(t *testing.T) {
	var lines []string
	for i := range 20000 {
		lines = append(lines, fmt.Sprintf("line %d\n", i%7))
	}
	old := strings.Join(lines, "")
	lines[10000] = "line three\n"
	got := UnifiedDiff("f", []byte(old), []byte(strings.Join(lines, "")))
	want := "--- a/f\n+++ b/f\n@@ -9998,7 +9998,7 @@\n line 1\n line 2\n line 3\n-line 4\n+line three\n line 5\n line 6\n line 0\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestHarnessEntryReadBack: an entry read back from an install record is
// the bytes the table gave, though encoding/json wrote the record with
// HTML escapes (the fail_closed guard's command holds && and >&2).
func TestHarnessEntryReadBack(t *testing.T) {
	for _, e := range []string{
		`{"matcher":"*","hooks":[{"type":"command","command":"d || { [ $s -lt 126 ] && exit $s; echo \"x\" >&2; }","timeout":7}]}`,
		`{"hooks":[{"command":"a\\u0026b é","timeout_ms":1.5e3,"on":true,"off":null}]}`,
	} {
		rec, err := json.MarshalIndent(map[string]HarnessEntry{"e": HarnessEntry(e)}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(rec), `\u0026`) {
			t.Fatalf("the record has no HTML escape to undo:\n%s", rec)
		}
		var back map[string]HarnessEntry
		if err := json.Unmarshal(rec, &back); err != nil {
			t.Fatal(err)
		}
		if got := string(back["e"]); got != e {
			t.Errorf("read back as\n%s\nwant\n%s", got, e)
		}
	}
}

// TestEntryCommandGuards runs each guard with a shell as a harness does,
// its dispatcher missing: an entry guarded open exits 0 whatever failed, so
// that a harness on which a failed hook denies lets the action go on; an
// entry guarded closed exits the blocking status; an unguarded one the
// shell's 127.
// TestEntryCommandProject: only a project scope's id, 16 hexadecimal
// digits, makes a command dalo's: a path there is not one.
func TestEntryCommandProject(t *testing.T) {
	for _, id := range []string{"../../etc", "0123456789ABCDEF", "0123", "0123456789abcdef0"} {
		c := entryCommand{Program: "/s/dalo-hook", Home: "/store", Project: id, Provider: "claude", Event: "PreToolUse"}
		if got, ok := parseEntryCommand(c.String()); ok {
			t.Errorf("parseEntryCommand(%q) = %+v, took project %q", c.String(), got, id)
		}
	}
}

func TestEntryCommandGuards(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "dispatchers", "gone", "dalo-hook")
	for _, c := range []struct {
		cmd  entryCommand
		exit int
	}{
		{entryCommand{Program: gone, Home: "/store", Provider: "copilot", Event: "PreToolUse", Open: true}, 0},
		{entryCommand{Program: gone, Home: "/store", Provider: "copilot", Event: "PreToolUse", FailClosed: true, Block: 2}, 2},
		{entryCommand{Program: gone, Home: "/store", Provider: "claude", Event: "PreToolUse"}, 127},
	} {
		x := exec.Command("/bin/sh", "-c", c.cmd.String())
		var stderr bytes.Buffer
		x.Stderr = &stderr
		err := x.Run()
		got := 0
		if ee, ok := err.(*exec.ExitError); ok {
			got = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if got != c.exit {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.cmd, got, c.exit, stderr.String())
		}
		if c.cmd.Open && !strings.Contains(stderr.String(), "lets PreToolUse go on") {
			t.Errorf("%s: stderr %q does not say the action goes on", c.cmd, stderr.String())
		}
	}
}

// TestEntryCommandRewritesNothing: the command of every entry dalo writes,
// on every table, holds nothing the harness rewrites in its settings
// before it runs it (Gemini CLI replaces $s by its environment's s, which
// turned a guard that read the status into $s into "exit 0"); and the
// guard still blocks with the table's status when the dispatcher cannot
// run, whatever the variables of the environment hold.
func TestEntryCommandRewritesNothing(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gone := filepath.Join(dir, "dispatchers", "ab", "dalo-hook") // never written
	for _, tb := range ts.All() {
		for _, ev := range slices.Sorted(maps.Keys(tb.Events)) {
			for _, failClosed := range []bool{false, true} {
				c := wantEntryCommand(tb, &dispatcherCopy{Dispatcher: Dispatcher{Hook: true}, Path: gone}, dir, ev, failClosed)
				cmd := c.String()
				if x := regexp.MustCompile(`\$(\w|\{)`).FindString(cmd); x != "" {
					t.Errorf("%s %s: the entry names a variable (%s): %s", tb.Key(), ev, x, cmd)
				}
				if x := tb.Expanded(cmd); x != "" {
					t.Errorf("%s %s: %s rewrites %s in the entry: %s", tb.Key(), ev, tb.Harness, x, cmd)
				}
				if !failClosed {
					continue
				}
				sh := exec.Command("sh", "-c", cmd)
				sh.Env = append(os.Environ(), "s=0", "p=0")
				sh.Stdin = strings.NewReader(`{"hook_event_name":"` + ev + `"}`)
				var stderr bytes.Buffer
				sh.Stderr = &stderr
				err := sh.Run()
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != tb.Blocking.Exit || !strings.Contains(stderr.String(), "exit status 127") {
					t.Errorf("%s %s: the dispatcher gone, the guard ended with %v, stderr %q; want exit %d naming status 127", tb.Key(), ev, err, stderr.String(), tb.Blocking.Exit)
				}
			}
		}
	}
}

// TestEntryCommandEarlierGuard: an entry an earlier dalo wrote, whose guard
// named $s and $p, still reads as dalo's (doctor reports it, install
// rewrites it), with its blocking status and continued key.
func TestEntryCommandEarlierGuard(t *testing.T) {
	old := `p=$(cat); printf '%s' "$p" | /s/dispatchers/ab/dalo-hook dispatch --home /store --provider gemini --event AfterAgent --fail-closed || { s=$?; [ $s -lt 126 ] && exit $s; echo "dalo: the dispatcher could not run (exit status $s); a required fail_closed hook guards AfterAgent, so dalo blocks it: run 'dalo doctor'" >&2; case $p in *'"stop_hook_active":true'*|*'"stop_hook_active": true'*) exit 1;; esac; exit 2; }`
	got, ok := parseEntryCommand(old)
	want := entryCommand{Program: "/s/dispatchers/ab/dalo-hook", Home: "/store", Provider: "gemini", Event: "AfterAgent", FailClosed: true, Block: 2, Continued: "stop_hook_active"}
	if !ok || got != want {
		t.Errorf("parseEntryCommand(earlier guard) = %+v, %v; want %+v", got, ok, want)
	}
	if got.String() == old {
		t.Errorf("the earlier guard is still what dalo writes")
	}
}
