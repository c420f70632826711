package suggest

import (
	"math/rand/v2"
	"strings"
	"testing"
)

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

// TestWithinAgrees holds the banded measure to Distance on random words
// of a few letters, where edits, transpositions and ties abound.
func TestWithinAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	word := func() []rune {
		w := make([]rune, rng.IntN(12))
		for i := range w {
			w[i] = []rune("abcé")[rng.IntN(4)]
		}
		return w
	}
	var rows [3][]int
	for range 20000 {
		s, u := word(), word()
		k := rng.IntN(5)
		want := min(Distance(string(s), string(u)), k+1)
		if got := within(s, u, k, &rows); got != want {
			t.Fatalf("within(%q, %q, %d) = %d, want %d", string(s), string(u), k, got, want)
		}
	}
}

// TestClosestAgrees holds Closest to the plainest reading of its rule:
// every candidate measured in full, the first nearest Close one kept.
func TestClosestAgrees(t *testing.T) {
	plain := func(name string, candidates []string) string {
		best, bestD := "", -1
		for _, c := range candidates {
			if c == name {
				return ""
			}
			d := Distance(strings.ToLower(name), strings.ToLower(c))
			if Close(d, len([]rune(c))) && (bestD < 0 || d < bestD) {
				best, bestD = c, d
			}
		}
		return best
	}
	rng := rand.New(rand.NewPCG(5, 6))
	word := func() string {
		w := make([]rune, rng.IntN(11))
		for i := range w {
			w[i] = []rune("abAé-_xá")[rng.IntN(8)] // á is a in its low seven bits
		}
		return string(w)
	}
	for range 20000 {
		candidates := make([]string, rng.IntN(8))
		for i := range candidates {
			candidates[i] = word()
		}
		name := word()
		if got, want := Closest(name, candidates), plain(name, candidates); got != want {
			t.Fatalf("Closest(%q, %q) = %q, want %q", name, candidates, got, want)
		}
	}
}

// TestFarNamesNotMeasured: a name whose characters differ from each
// candidate's by more than the edits allowed is not measured against any.
func TestFarNamesNotMeasured(t *testing.T) {
	tools := []string{"Bash", "Edit", "Glob", "Grep", "NotebookEdit", "Read", "WebFetch", "WebSearch", "Write",
		"apply_patch", "glob", "google_web_search", "read_file", "replace", "run_shell_command", "web_fetch", "write_file"}
	before := measured.Load()
	for _, name := range []string{"wm_0000_check_0", "mcp__gate-0000_3__tool_14", "zzzz"} {
		if got := Closest(name, tools); got != "" {
			t.Errorf("Closest(%q) = %q", name, got)
		}
	}
	if n := measured.Load() - before; n != 0 {
		t.Errorf("%d candidates measured, want none", n)
	}
	if got := Closest("run_shell_comand", tools); got != "run_shell_command" {
		t.Errorf("Closest(run_shell_comand) = %q", got)
	}
}
