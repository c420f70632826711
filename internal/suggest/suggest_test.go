package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"install", "install", 0},
		{"instal", "install", 1},
		{"timout_ms", "timeout_ms", 1},
		{"tiemout_ms", "timeout_ms", 1}, // a transposition is one edit
		{"kitten", "sitting", 3},
		{"plugn", "plugin", 1},
		{"ca", "abc", 3}, // optimal string alignment, not unrestricted Damerau
		{"é", "e", 1},    // runes, not bytes
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	fields := []string{"description", "timeout_ms", "tool_names", "when"}
	for _, tc := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"timout_ms", fields, "timeout_ms"},
		{"TIMEOUT_MS", fields, "timeout_ms"},
		{"descripton", fields, "description"},
		{"tool_name", fields, "tool_names"},
		{"whan", fields, "when"},
		{"wxyz", fields, ""},                      // four characters, three edits from when
		{"colour", fields, ""},                    // nothing near
		{"when", fields, ""},                      // known: nothing to suggest
		{"lst", []string{"lint", "list"}, "list"}, // the nearest wins
		{"ab", []string{"ax", "ay"}, "ax"},        // first of equals wins
		{"x", nil, ""},
	} {
		if got := Closest(tc.name, tc.candidates); got != tc.want {
			t.Errorf("Closest(%q, %q) = %q, want %q", tc.name, tc.candidates, got, tc.want)
		}
	}
}
