package tomledit

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
)

// FuzzSetDrop: whatever the document, Set either refuses it or returns it
// with the value set and every other value as it was; Drop then takes the
// value out again, and a table Set appended goes whole, giving the
// document back byte for byte.
func FuzzSetDrop(f *testing.F) {
	f.Add("", "k", "v")
	f.Add("# c\n[hooks.state.k]\ntrusted_hash = 'old' # x\n[tui]\n", "k", "sha256:1")
	f.Add("[hooks]\nstate.k.trusted_hash = \"x\"\n", "k", "y")
	f.Add("hooks = { state = {} }\n", "k", "y")
	f.Add("a = 1", "a \"b\"\n", "\x7f")
	f.Fuzz(func(t *testing.T, doc, key, value string) {
		const table, field = "hooks.state", "trusted_hash"
		before, err := Values("f.toml", []byte(doc), table, field)
		if err != nil {
			return
		}
		out, added, err := Set("f.toml", []byte(doc), table, field, map[string]string{key: value})
		if err != nil {
			var re *RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("%q: Set of a valid document: %v, want a *RefusedError", doc, err)
			}
			return
		}
		after, err := Values("f.toml", out, table, field)
		if err != nil {
			t.Fatalf("%q: Set wrote %q, which does not read: %v", doc, out, err)
		}
		if want := strings.ToValidUTF8(value, "\ufffd"); utf8.ValidString(key) && after[key] != want {
			t.Fatalf("%q: Set wrote %q, which reads %q for %q", doc, out, after[key], key)
		}
		got := after[key]
		delete(after, key)
		delete(before, key)
		if !maps.Equal(before, after) {
			t.Fatalf("%q: Set changed other values: %q, was %q", doc, after, before)
		}
		back, err := Drop("f.toml", out, table, field, []Written{{Key: key, Value: got, Added: added[key]}})
		if err != nil {
			return // Drop may refuse what would not read back
		}
		if added[key] != "" && string(back) != doc {
			t.Fatalf("%q: Set then Drop gave %q", doc, back)
		}
		var m map[string]any
		if toml.Unmarshal(back, &m) != nil {
			t.Fatalf("%q: Drop wrote %q, not TOML", doc, back)
		}
	})
}

// FuzzQuote: every string, quoted, reads back as itself in valid UTF-8.
func FuzzQuote(f *testing.F) {
	f.Add("plain\x7f\x00\"\\")
	f.Fuzz(func(t *testing.T, s string) {
		var got struct{ S string }
		if err := toml.Unmarshal([]byte("s = "+Quote(s)), &got); err != nil {
			t.Fatalf("Quote(%q) = %s: %v", s, Quote(s), err)
		}
		// Each byte that is not UTF-8 becomes one U+FFFD, as a conversion
		// to runes makes it (strings.ToValidUTF8 makes one of a run).
		if want := string([]rune(s)); got.S != want {
			t.Fatalf("Quote(%q) reads back as %q", s, got.S)
		}
	})
}
