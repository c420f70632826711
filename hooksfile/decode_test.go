package hooksfile

import (
	"io/fs"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"dalo/providers"
)

// TestDecodeJSONAgrees: for every shipped table, what Off finds in a
// document read at every settings file the table names (the switches
// set, the values dropped with their text, the warnings) is what it finds
// when every document is decoded whole, for documents whose top-level
// objects and arrays the rules read inside or only by their type, held
// twice, of every type, and ones the scanner refuses.
func TestDecodeJSONAgrees(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	long := `"` + strings.Repeat("x", 60) + `"`
	deep := strings.Repeat("[", 600) + strings.Repeat("]", 600)
	docs := []string{
		`{}`, `[]`, `"s"`, `null`, `1`, `true`,
		`{"permissions": {"allow": ["Bash(x:*)", "Read"], "deny": []}, "model": "m"}`,
		`{"permissions": ["a", {"b": 1}]}`,
		`{"permissions": "x"}`,
		`{"permissions": ` + deep + `}`,
		`{"permissions": {"z": 1, "a": ` + long + `}}`,
		`{"model": {"b": 1, "a": [1, 2], "c": ` + long + `}}`,
		`{"model": ["x"], "permissions": null}`,
		`{"disableAllHooks": true}`, `{"disableAllHooks": 1}`, `{"disableAllHooks": "true"}`,
		`{"disableAllHooks": [true]}`, `{"disableAllHooks": {"x": true}}`, `{"disableAllHooks": false}`,
		`{"hooks": {"PreToolUse": [{"matcher": 1, "hooks": [{"type": "x", "command": "c"}]}]}}`,
		`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "c"}]}]}, "disableAllHooks": false}`,
		`{"hooks": [], "permissions": {}}`,
		`{"hooksConfig": {"enabled": false}}`, `{"hooksConfig": {"enabled": 0}}`, `{"hooksConfig": ["enabled"]}`,
		`{"hooksConfig": {"disabled": ["dalo-hook run", "x"]}}`, `{"hooksConfig": {"disabled": "dalo-hook run"}}`,
		`{"permissions": [], "permissions": {"allow": []}}`,
		`{"model": {}, "model": "s"}`, `{"model": "s", "model": {"a": 1}}`,
		`{"disableAllHooks": {}, "disableAllHooks": true}`,
		"\ufeff{\"model\": {}}",
		"{\"model\": {\"a\": \"\xff\"}}",
		`{"permissions": {"allow": [1, 2.5e3, -0]}}`,
		`{"model": 1e400}`,
		"// c\n{\"model\": {} /* x */, \"hooksConfig\": {\"enabled\": false}}",
		`{"a": {"b": {"c": []}}, "b": [[[]]], "c": 1}`,
		`{"permissions": {}`,
	}
	entries := map[string]Entry{
		"BeforeTool": Entry(`{"matcher": "x", "hooks": [{"type": "command", "command": "dalo-hook run"}]}`),
		"PreToolUse": Entry(`{"matcher": "x", "hooks": [{"type": "command", "command": "dalo-hook run"}]}`),
	}
	type found struct {
		Offs     []Off
		Warnings []Warning
	}
	off := func(tb *providers.Table, doc string, whole bool) found {
		defer func(old bool) { decodeWhole = old }(decodeWhole)
		decodeWhole = whole
		env := map[string]string{}
		r := &Settings{
			Table:   tb,
			Project: "/project",
			Entries: entries,
			Getenv:  func(k string) string { return env[k] },
			Read: func(file string) ([]byte, error) {
				if strings.HasSuffix(file, ".toml") {
					return nil, fs.ErrNotExist
				}
				return []byte(doc), nil
			},
		}
		return found{r.Off(), r.Warnings}
	}
	tables := 0
	for _, tb := range ts.All() {
		tables++
		for _, doc := range docs {
			got, want := off(tb, doc, false), off(tb, doc, true)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s@%s, %.60q:\n got  %+v\n want %+v", tb.Harness, tb.Version, doc, got, want)
			}
		}
	}
	if tables < 5 {
		t.Fatalf("%d tables, want every shipped one", tables)
	}
	// A number past float64's range is one json.Unmarshal refuses, so a
	// document decoded whole holding one anywhere is a warning, where the
	// harnesses (JSON.parse: Infinity) read the file. Where no rule reads
	// it, it is now left unread, and the file's settings are told.
	read := 0
	for _, tb := range ts.All() {
		const doc = `{"permissions": {"allow": [1e400]}, "disableAllHooks": true}`
		got, whole := off(tb, doc, false), off(tb, doc, true)
		if len(whole.Warnings) == 0 {
			continue // its settings are TOML
		}
		read++
		if len(got.Warnings) != 0 {
			t.Errorf("%s@%s, %q: warnings %v, want none", tb.Harness, tb.Version, doc, got.Warnings)
		}
	}
	if read == 0 {
		t.Error("no table reads JSON settings")
	}
}

// TestDecodeJSONSkimsPermissions: a settings.json of 4 MB of permissions,
// which the tables check the type of and nothing else, is decoded without
// decoding them: what Off allocates is a small part of the document's
// size. Decoded whole it allocated some seven times the document.
func TestDecodeJSONSkimsPermissions(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	claude, ok := ts.Newest("claude")
	if !ok {
		t.Fatal("no claude table")
	}
	var b strings.Builder
	b.WriteString(`{"permissions": {"allow": [`)
	for i := 0; b.Len() < 4<<20; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`"Bash(tool --flag value:*)"`)
	}
	b.WriteString(`]}, "model": "m", "hooks": {}}`)
	doc := []byte(b.String())
	r := &Settings{Table: claude, Getenv: func(string) string { return "/home" }, Read: func(string) ([]byte, error) { return doc, nil }}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	offs := r.Off()
	runtime.ReadMemStats(&after)
	if len(offs) != 0 || len(r.Warnings) != 0 {
		t.Fatalf("off %v, warnings %v; want none", offs, r.Warnings)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(doc))/4 {
		t.Errorf("Off allocated %d bytes for a document of %d, want at most a quarter of it", n, len(doc))
	}
}
