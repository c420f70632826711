package tomledit

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// Set writes each value byte-exactly beside what the user wrote, and Drop
// takes it back: a table Set appended goes whole, and the file comes back
// byte for byte. A file that cannot take the edit is refused.
func TestSetDrop(t *testing.T) {
	const key = "/h/.codex/hooks.json:pre_tool_use:0:0"
	const table = "[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:0:0\"]\n"
	for _, tc := range []struct {
		name, doc, want string
		refused         bool   // Set refuses the edit
		err             string // Set fails with this
	}{
		{name: "empty", doc: "",
			want: table + "trusted_hash = \"sha256:new\"\n"},
		{name: "user's settings", doc: "# mine\nmodel = \"gpt-5\"\n\n[tui]\ntheme = \"dark\"\n",
			want: "# mine\nmodel = \"gpt-5\"\n\n[tui]\ntheme = \"dark\"\n\n" + table + "trusted_hash = \"sha256:new\"\n"},
		{name: "no final newline", doc: "model = \"gpt-5\"",
			want: "model = \"gpt-5\"\n\n" + table + "trusted_hash = \"sha256:new\"\n"},
		{name: "a stale value, replaced in place", doc: table + "trusted_hash = \"sha256:old\" # the review's\n[tui]\n",
			want: table + "trusted_hash = \"sha256:new\" # the review's\n[tui]\n"},
		{name: "the table, no value", doc: table + "# kept\n",
			want: table + "trusted_hash = \"sha256:new\"\n# kept\n"},
		{name: "a dotted key", doc: "[hooks]\nstate.\"/h/.codex/hooks.json:pre_tool_use:0:0\".trusted_hash = 'sha256:old'\n",
			want: "[hooks]\nstate.\"/h/.codex/hooks.json:pre_tool_use:0:0\".trusted_hash = \"sha256:new\"\n"},
		{name: "other keys of the table kept", doc: "[hooks.state.\"other\"]\ntrusted_hash = \"sha256:theirs\"\n",
			want: "[hooks.state.\"other\"]\ntrusted_hash = \"sha256:theirs\"\n\n" + table + "trusted_hash = \"sha256:new\"\n"},
		{name: "an array of tables is not the table", doc: "[[hooks.state]]\nx = 1\n", refused: true},
		{name: "an inline table", doc: "hooks = { state = {} }\n", refused: true},
		{name: "not TOML", doc: "[hooks\n", err: "config.toml:1:7: not valid TOML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, added, err := Set("config.toml", []byte(tc.doc), "hooks.state", "trusted_hash", map[string]string{key: "sha256:new"})
			var refused *RefusedError
			switch {
			case tc.refused:
				if !errors.As(err, &refused) || refused.File != "config.toml" {
					t.Fatalf("Set: %v, want a *RefusedError for config.toml", err)
				}
				return
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Set: %v, want an error with %q", err, tc.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("Set:\n%s\nwant:\n%s", got, tc.want)
			}
			if v, _ := Values("config.toml", got, "hooks.state", "trusted_hash"); v[key] != "sha256:new" {
				t.Errorf("Values after Set = %q", v)
			}
			back, err := Drop("config.toml", got, "hooks.state", "trusted_hash", []Written{{Key: key, Value: "sha256:new", Added: added[key]}})
			if err != nil {
				t.Fatal(err)
			}
			if added[key] != "" && string(back) != tc.doc {
				t.Errorf("Drop of an appended table:\n%q\nwant the user's file back:\n%q", back, tc.doc)
			}
			if v, _ := Values("config.toml", back, "hooks.state", "trusted_hash"); v[key] != "" {
				t.Errorf("Drop left the value: %q", back)
			}
		})
	}
}

// A value changed since Set wrote it is the user's: Drop keeps it.
func TestDropKeepsTheUsers(t *testing.T) {
	const key = "/h/hooks.json:stop:0:0"
	doc := "[hooks.state.\"/h/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:theirs\"\n"
	back, err := Drop("config.toml", []byte(doc), "hooks.state", "trusted_hash", []Written{{Key: key, Value: "sha256:dalos", Added: "\n" + doc}})
	if err != nil || string(back) != doc {
		t.Errorf("Drop = %q, %v; want the file as it is", back, err)
	}
}

// Values reads only string values of the field, under the table's keys.
func TestValues(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      map[string]string
	}{
		{"none", "", map[string]string{}},
		{"two keys", "[a.b.k1]\nf = \"1\"\n[a.b.k2]\nf = \"2\"\ng = \"x\"\n", map[string]string{"k1": "1", "k2": "2"}},
		{"not a string", "[a.b.k]\nf = 1\n", map[string]string{}},
		{"the table is a value", "a = 1\n", map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Values("f.toml", []byte(tc.doc), "a.b", "f")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("Values = %q, want %q", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("Values = %q, want %q", got, tc.want)
				}
			}
		})
	}
}

// Quote writes any text as a TOML basic string that reads back as it:
// JSON's escapes are TOML's, but JSON leaves DEL (U+007F) as it is, which
// TOML refuses in a basic string. The fuzzer found it in a Claude Code
// matcher that 'dalo import claude-plugin' copied into argv.
func TestQuote(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote \ back`, "tab\tnew\nline", "nul\x00 esc\x1b del\x7f", "ünï 日本 \u2028", "\xff not utf-8"} {
		var got struct{ S string }
		if err := toml.Unmarshal([]byte("s = "+Quote(s)), &got); err != nil {
			t.Errorf("Quote(%q) = %s: %v", s, Quote(s), err)
			continue
		}
		if want := strings.ToValidUTF8(s, "\ufffd"); got.S != want {
			t.Errorf("Quote(%q) reads back as %q", s, got.S)
		}
	}
}

// TestQuotePlainAllocatesOnce: a name of printable ASCII with nothing to
// escape, what a hint quotes over and over (a matcher's tool names), is
// quoted with one allocation, the string itself; each call made a JSON
// encoder, a third of validating packages of long matchers.
func TestQuotePlainAllocatesOnce(t *testing.T) {
	for _, s := range []string{"Bash", "mcp__github__create_issue", "a b <c> & d", ""} {
		if got, want := Quote(s), `"`+s+`"`; got != want {
			t.Errorf("Quote(%q) = %s, want %s", s, got, want)
		}
		if n := testing.AllocsPerRun(100, func() { Quote(s) }); n > 1 {
			t.Errorf("Quote(%q) made %v allocations, want at most 1", s, n)
		}
	}
	for c := range 256 {
		s := "a" + string(rune(c)) + "b"
		if c >= 0x80 {
			s = "a" + string([]byte{byte(c)}) + "b"
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		if want := strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "\x7f", `\u007f`); Quote(s) != want {
			t.Errorf("Quote(%q) = %s, want %s", s, Quote(s), want)
		}
	}
}

// A file that starts with a UTF-8 byte order mark, which TOML does not
// allow but Codex reads past: Values reads it, Set keeps the mark where it
// is, and Drop gives the file back byte for byte.
func TestByteOrderMark(t *testing.T) {
	const key = "/h/hooks.json:stop:0:0"
	doc := "\ufeffmodel = \"m\"\n[a.b.k1]\nf = \"1\"\n"
	got, err := Values("config.toml", []byte(doc), "a.b", "f")
	if err != nil || got["k1"] != "1" {
		t.Fatalf("Values = %q, %v; want k1 = 1", got, err)
	}
	out, added, err := Set("config.toml", []byte(doc), "a.b", "f", map[string]string{key: "2", "k1": "3"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "\ufeffmodel = \"m\"\n[a.b.k1]\nf = \"3\"\n") {
		t.Errorf("Set = %q, want the mark and the user's bytes first", out)
	}
	back, err := Drop("config.toml", out, "a.b", "f", []Written{{Key: key, Value: "2", Added: added[key]}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "\ufeffmodel = \"m\"\n[a.b.k1]\nf = \"3\"\n"; string(back) != want {
		t.Errorf("Drop = %q, want %q", back, want)
	}
}
