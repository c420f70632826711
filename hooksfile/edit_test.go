package hooksfile

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"dalo/jsonedit"
	"dalo/providers"
)

// entry is an entry of the shape of Claude Code's and Codex's tables.
func entry(cmd string, timeout int, matcher string) Entry {
	m := ""
	if matcher != "" {
		m = `"matcher":` + quote(matcher) + ","
	}
	return Entry(fmt.Sprintf(`{%s"hooks":[{"type":"command","command":%s,"timeout":%d}]}`, m, quote(cmd), timeout))
}

// quote is s as a JSON string, as encoding/json writes it.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

const dispatchPre = "/bin/dalo hook dispatch --provider claude --event PreToolUse"

// TestEditConfigRoundTrip adds dalo's entry to documents written in
// different styles, checks the result, and removes it again: the document
// must come back byte for byte.
func TestEditConfigRoundTrip(t *testing.T) {
	want := map[string]Entry{"PreToolUse": entry(dispatchPre, 7, "*")}
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
			got, st, err := testOwner("claude").Edit("settings.json", []byte(tc.doc), Record{}, want)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.added {
				t.Fatalf("added:\n%s\nwant:\n%s", got, tc.added)
			}
			// Adding again changes nothing.
			again, st2, err := testOwner("claude").Edit("settings.json", got, st, want)
			if err != nil || string(again) != string(got) {
				t.Fatalf("second edit changed the document (%v):\n%s", err, again)
			}
			back, _, err := testOwner("claude").Edit("settings.json", got, st2, nil)
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
	want := map[string]Entry{"BeforeTool": entry(pre, 7000, "*")}
	doc := "// The user's settings. {\"hooks\": \"not this\"}\n{\n  /* auth */ \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}, // key\n" +
		"  \"url\": \"http://example.com/*not a comment*/\", // a URL holds //\n  \"hooks\": {\n    // none yet\n  }\n}\n// end\n"
	o := testOwner("gemini")
	o.comments = true
	got, st, err := o.Edit("settings.json", []byte(doc), Record{}, want)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"// The user's settings. {\"hooks\": \"not this\"}\n", "/* auth */", "// key\n", "// a URL holds //\n", "// none yet", "// end\n", "http://example.com/*not a comment*/"} {
		if !strings.Contains(string(got), c) {
			t.Errorf("the edit lost %q:\n%s", c, got)
		}
	}
	if _, _, owned, err := o.Scan("settings.json", got); err != nil || len(owned) != 1 || owned[0].Event != "BeforeTool" {
		t.Fatalf("dalo's entry is not where the harness reads it (%v, %d found):\n%s", err, len(owned), got)
	}
	var m map[string]any
	if err := json.Unmarshal(jsonedit.WithoutComments(got), &m); err != nil || m["url"] != "http://example.com/*not a comment*/" {
		t.Fatalf("without comments: %v, url %v:\n%s", err, m["url"], jsonedit.WithoutComments(got))
	}
	back, _, err := o.Edit("settings.json", got, st, nil)
	if err != nil || string(back) != doc {
		t.Fatalf("removed (%v):\n%q\nwant:\n%q", err, back, doc)
	}
	_, _, err = testOwner("claude").Edit("settings.json", []byte(doc), Record{}, want)
	if err == nil || err.Error() != "settings.json: 1:1: not valid JSON: unexpected '/'" {
		t.Errorf("plain JSON with a comment: %v", err)
	}
	// A comment with no end is named, where it opens.
	_, _, err = o.Edit("settings.json", []byte("{\n  \"a\": /* 1 }\n"), Record{}, want)
	if err == nil || err.Error() != "settings.json: 2:8: not valid JSON: a /* comment is never closed (no */ after it)" {
		t.Errorf("unclosed comment: %v", err)
	}
}

// TestEditConfigCreates creates the file when it is missing and deletes it
// again when dalo's entries go.
func TestEditConfigCreates(t *testing.T) {
	want := map[string]Entry{"Stop": entry("/bin/dalo hook dispatch --provider codex --event Stop", 10, "")}
	got, st, err := testOwner("codex").Edit("hooks.json", nil, Record{}, want)
	if err != nil || !st.CreatedFile || !strings.Contains(string(got), `"Stop": [`) {
		t.Fatalf("create: %v %+v\n%s", err, st, got)
	}
	back, _, err := testOwner("codex").Edit("hooks.json", got, st, nil)
	if err != nil || back != nil {
		t.Fatalf("delete: %v %q", err, back)
	}
}

// TestEditConfigUpdates rewrites dalo's own entry in place when what it
// must say changes, and refuses when the user changed it.
func TestEditConfigUpdates(t *testing.T) {
	doc := []byte("{\n  \"x\": 1\n}\n")
	w1 := map[string]Entry{"PreToolUse": entry(dispatchPre, 7, "*")}
	got, st, err := testOwner("claude").Edit("s.json", doc, Record{}, w1)
	if err != nil {
		t.Fatal(err)
	}
	w2 := map[string]Entry{"PreToolUse": entry(dispatchPre, 12, "*")}
	got2, st2, err := testOwner("claude").Edit("s.json", got, st, w2)
	if err != nil || !strings.Contains(string(got2), `"timeout": 12`) || strings.Contains(string(got2), `"timeout": 7`) {
		t.Fatalf("update: %v\n%s", err, got2)
	}
	edited := []byte(strings.Replace(string(got2), `"timeout": 12`, `"timeout": 99`, 1))
	_, _, err = testOwner("claude").Edit("s.json", edited, st2, w2)
	if err == nil || !strings.Contains(err.Error(), "s.json: 5:7: dalo's PreToolUse entry was changed since dalo wrote it") {
		t.Fatalf("changed entry: %v", err)
	}
}

func TestEditConfigErrors(t *testing.T) {
	want := map[string]Entry{"PreToolUse": entry(dispatchPre, 7, "*")}
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
		_, _, err := testOwner("claude").Edit("f.json", []byte(tc.doc), Record{}, want)
		if err == nil || err.Error() != tc.err {
			t.Errorf("%q: got %v, want %s", tc.doc, err, tc.err)
		}
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
	want := map[string]Entry{"PreToolUse": Entry(pre), "Stop": Entry(stop)}
	doc := []byte("{\n  \"model\": \"opus\"\n}\n")
	added, st, err := o.Edit("settings.json", doc, Record{}, want)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(added), "\"command\": \"/bin/dalo hook dispatch --provider claude --event PreToolUse\",\n            \"type\": \"command\",\n            \"timeout_ms\": 7000\n") {
		t.Fatalf("added:\n%s", added)
	}
	if _, _, owned, err := o.Scan("settings.json", added); err != nil || len(owned) != 2 {
		t.Fatalf("dalo's entries found in the edited file: %d, %v", len(owned), err)
	}
	// The record round-trips through JSON as the store keeps it, indented.
	var back Record
	rec, _ := json.MarshalIndent(st, "", "  ")
	if err := json.Unmarshal(rec, &back); err != nil {
		t.Fatal(err)
	}
	if got := string(back.Entries["PreToolUse"]); got != string(pre) {
		t.Fatalf("record read back as %s, want %s", got, pre)
	}
	if got := back.Entries["PreToolUse"].Command(tb); got != dispatchPre {
		t.Fatalf("the record's command %q, want %q", got, dispatchPre)
	}
	again, _, err := o.Edit("settings.json", added, back, want)
	if err != nil || string(again) != string(added) {
		t.Fatalf("editing again: %v\n%s", err, again)
	}
	removed, _, err := o.Edit("settings.json", added, back, nil)
	if err != nil || string(removed) != string(doc) {
		t.Fatalf("removed: %q %v", removed, err)
	}
	// An entry whose timeout is under another key is not what dalo wrote.
	edited := []byte(strings.Replace(string(added), `"timeout_ms"`, `"timeout"`, 1))
	if _, _, err := o.Edit("settings.json", edited, back, want); err == nil || !strings.Contains(err.Error(), "was changed since dalo wrote it") {
		t.Fatalf("edited entry: %v", err)
	}
}

// testOwner owns the entries of provider from the store /store, in a file
// its harness reads as Claude Code does.
func testOwner(provider string) Owner {
	return Owner{provider: provider, home: "/store", harness: "the harness", dups: providers.ReadsLast, command: []string{"hooks", "", "command"}}
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
		got, ok := testOwner("claude").Owns(v)
		if got != want || ok != (want != "") {
			t.Errorf("%s: owned for %q, %v; want %q", cmd, got, ok, want)
		}
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
		rec, err := json.MarshalIndent(map[string]Entry{"e": Entry(e)}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(rec), `\u0026`) {
			t.Fatalf("the record has no HTML escape to undo:\n%s", rec)
		}
		var back map[string]Entry
		if err := json.Unmarshal(rec, &back); err != nil {
			t.Fatal(err)
		}
		if got := string(back["e"]); got != e {
			t.Errorf("read back as\n%s\nwant\n%s", got, e)
		}
	}
}

// TestEditAddsEventsAtOnce: entries for several events added to a file
// written on several lines, with no hooks object or one on several lines,
// go in at once, in three scans of the file whatever their number, and one more
// for each event in an array of the user's (each edit
// rescans the whole file, and a settings.json of 50 MB given seven events
// was scanned nine times), written as adding them one at a time writes
// them; removing them gives the file back, a hooks object dalo made at
// once.
func TestEditAddsEventsAtOnce(t *testing.T) {
	events := []string{"PostToolUse", "PreToolUse", "SessionStart", "Stop", "UserPromptSubmit"} // in the order an edit adds them
	want := map[string]Entry{}
	for _, ev := range events {
		want[ev] = entry("/bin/dalo hook dispatch --provider claude --event "+ev, 7, "")
	}
	for _, doc := range []string{
		"{\n  \"model\": \"opus\"\n}\n",
		"{\n\t\"model\": \"opus\"\n}",
		`{"model":"opus"}`,
		`{"a": 1}`,
		"{}\n",
		"{\n}\n",
		// A hooks object of the user's, with an event of dalo's in it.
		"{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": []\n      }\n    ]\n  }\n}\n",
		"{\n    \"hooks\": {\n        \"Notification\": []\n    },\n    \"model\": \"opus\"\n}\n",
		"{\n  \"hooks\": {\n  }\n}\n",
		"{\n  \"hooks\": {}\n}\n",
		`{"hooks": {"Notification": []}}`,
		`{"hooks":{}}`,
		`{"":"", "0":{}}`, // a separator with a space, a colon without
	} {
		o := testOwner("claude")
		before := scansMade.Load()
		got, st, err := o.Edit("settings.json", []byte(doc), Record{}, want)
		if err != nil {
			t.Fatal(err)
		}
		// An event in the user's own array is an edit of its own.
		most := int64(3)
		for _, ev := range events {
			if strings.Contains(doc, quote(ev)) {
				most++
			}
		}
		// A file on one line takes them one at a time: how each is
		// written there depends on those written before it.
		oneLine := !strings.Contains(strings.TrimSpace(doc), "\n")
		if n := scansMade.Load() - before; n > most && !oneLine {
			t.Errorf("%q: adding %d events scanned the file %d times, want at most %d", doc, len(events), n, most)
		}
		// One event more each time, on the file the last edit wrote.
		step, stepSt := []byte(doc), Record{}
		some := map[string]Entry{}
		for _, ev := range events {
			some[ev] = want[ev]
			if step, stepSt, err = o.Edit("settings.json", step, stepSt, some); err != nil {
				t.Fatal(err)
			}
		}
		if string(got) != string(step) {
			t.Errorf("%q: added at once:\n%s\none at a time:\n%s", doc, got, step)
		}
		before = scansMade.Load()
		back, _, err := o.Edit("settings.json", got, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(back) != doc {
			t.Errorf("removed:\n%q\nwant:\n%q", back, doc)
		}
		// A hooks object dalo made goes at once.
		if n := scansMade.Load() - before; n > 3 && !strings.Contains(doc, `"hooks"`) {
			t.Errorf("%q: removing %d events scanned the file %d times, want at most 3", doc, len(events), n)
		}
	}
}
