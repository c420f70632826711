package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestHumanOutputGuarded: text that no formatting site escaped (here an
// argument quoted in an error) is still shown, not acted on, on stderr and
// on stdout; JSON is left to encoding/json.
func TestHumanOutputGuarded(t *testing.T) {
	t.Setenv("DALO_HOME", t.TempDir())
	for _, args := range [][]string{
		{"source", "remove", "evil\x1b[2J\rok"},
		{"plugin", "review", "evil\x1b[2J\rok:x"},
		{"plugin", "revoke", "src:evil\x1b[2J\rok"},
	} {
		var stdout, stderr bytes.Buffer
		run(args, &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr})
		out := stdout.String() + stderr.String()
		if strings.ContainsAny(out, "\x1b\r") || !strings.Contains(out, `evil\x1b[2J\rok`) {
			t.Errorf("dalo %s printed %q", strings.Join(args, " "), out)
		}
	}
}
