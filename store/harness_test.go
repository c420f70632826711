package store

import (
	"strings"
	"testing"
)

func entry(cmd string, timeout int, matcher string) HarnessEntry {
	return HarnessEntry{Matcher: matcher, Hooks: []HarnessHook{{Type: "command", Command: cmd, Timeout: timeout}}}
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
			got, st, err := EditConfig("settings.json", []byte(tc.doc), "claude", HarnessState{}, want)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.added {
				t.Fatalf("added:\n%s\nwant:\n%s", got, tc.added)
			}
			// Adding again changes nothing.
			again, st2, err := EditConfig("settings.json", got, "claude", st, want)
			if err != nil || string(again) != string(got) {
				t.Fatalf("second edit changed the document (%v):\n%s", err, again)
			}
			back, _, err := EditConfig("settings.json", got, "claude", st2, nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(back) != tc.doc {
				t.Fatalf("removed:\n%q\nwant:\n%q", back, tc.doc)
			}
		})
	}
}

// TestEditConfigCreates creates the file when it is missing and deletes it
// again when dalo's entries go.
func TestEditConfigCreates(t *testing.T) {
	want := map[string]HarnessEntry{"Stop": entry("/bin/dalo hook dispatch --provider codex --event Stop", 10, "")}
	got, st, err := EditConfig("hooks.json", nil, "codex", HarnessState{}, want)
	if err != nil || !st.CreatedFile || !strings.Contains(string(got), `"Stop": [`) {
		t.Fatalf("create: %v %+v\n%s", err, st, got)
	}
	back, _, err := EditConfig("hooks.json", got, "codex", st, nil)
	if err != nil || back != nil {
		t.Fatalf("delete: %v %q", err, back)
	}
}

// TestEditConfigUpdates rewrites dalo's own entry in place when what it
// must say changes, and refuses when the user changed it.
func TestEditConfigUpdates(t *testing.T) {
	doc := []byte("{\n  \"x\": 1\n}\n")
	w1 := map[string]HarnessEntry{"PreToolUse": entry(dispatchPre, 7, "*")}
	got, st, err := EditConfig("s.json", doc, "claude", HarnessState{}, w1)
	if err != nil {
		t.Fatal(err)
	}
	w2 := map[string]HarnessEntry{"PreToolUse": entry(dispatchPre, 12, "*")}
	got2, st2, err := EditConfig("s.json", got, "claude", st, w2)
	if err != nil || !strings.Contains(string(got2), `"timeout": 12`) || strings.Contains(string(got2), `"timeout": 7`) {
		t.Fatalf("update: %v\n%s", err, got2)
	}
	edited := []byte(strings.Replace(string(got2), `"timeout": 12`, `"timeout": 99`, 1))
	_, _, err = EditConfig("s.json", edited, "claude", st2, w2)
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
		_, _, err := EditConfig("f.json", []byte(tc.doc), "claude", HarnessState{}, want)
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
