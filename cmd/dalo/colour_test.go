package main

import (
	"bytes"
	"testing"

	"dalo/internal/termtext"
)

func TestColourer(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plugins/a/PLUGIN.toml:25:1: error E020 hook[0].timout_ms: unknown field timout_ms\n",
			"plugins/a/PLUGIN.toml:25:1: \x1b[1;31merror\x1b[0m E020 hook[0].timout_ms: unknown field timout_ms\n"},
		{"skills/s/SKILL.md: warning W087: long\n", "skills/s/SKILL.md: \x1b[1;33mwarning\x1b[0m W087: long\n"},
		{"src: 1 package, 1 error, 0 warnings, invalid\n", "src: 1 package, 1 error, 0 warnings, \x1b[1;31minvalid\x1b[0m\n"},
		{"src: 2 packages, 0 errors, 1 warning, valid\n", "src: 2 packages, 0 errors, 1 warning, \x1b[32mvalid\x1b[0m\n"},
		{"did you mean 'dalo plugin install'?\n", "did you mean \x1b[1m'dalo plugin install'\x1b[0m?\n"},
		// Words in other places are text, not verdicts.
		{"an error E020 in prose: error E020\n", "an error E020 in prose: error E020\n"},
		{"the package is valid\n", "the package is valid\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		n, err := (&colourer{&b}).Write([]byte(tt.in))
		if err != nil || n != len(tt.in) {
			t.Errorf("Write(%q) = %d, %v; want %d, nil", tt.in, n, err, len(tt.in))
		}
		if b.String() != tt.want {
			t.Errorf("Write(%q) wrote\n%q\nwant\n%q", tt.in, b.String(), tt.want)
		}
	}
}

// The colourer sits under termtext: an escape sequence in a package's text
// reaches the terminal escaped, and only the colourer's own act.
func TestColourUnderTermtext(t *testing.T) {
	var b bytes.Buffer
	w := termtext.NewWriter(&colourer{&b})
	w.Write([]byte("plugins/a/PLUGIN.toml:3:1: error E020 \x1b[32mfake\x1b[0m: unknown field\n"))
	const want = "plugins/a/PLUGIN.toml:3:1: \x1b[1;31merror\x1b[0m E020 \\x1b[32mfake\\x1b[0m: unknown field\n"
	if b.String() != want {
		t.Errorf("wrote\n%q\nwant\n%q", b.String(), want)
	}
}
