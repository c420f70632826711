package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"dalo/engine"
	"dalo/store"
)

// Every command dalo lists has its help as a whole-output golden in a
// testdata/script/help_*.txtar, asked both ways: a new command without
// one fails here, and UPDATE_SCRIPTS=1 writes its golden.
func TestHelpGoldens(t *testing.T) {
	files, err := filepath.Glob("../../testdata/script/help_*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var scripts strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		scripts.Write(b)
	}
	for _, c := range commands {
		for _, line := range []string{"exec dalo " + c.name + " --help\ncmp stdout ", "exec dalo help " + c.name + "\ncmp stdout "} {
			if !strings.Contains(scripts.String(), line) {
				golden := strings.ReplaceAll(c.name, " ", "-") + ".txt"
				t.Errorf("no golden of %q in testdata/script/help_*.txtar: add\n\n"+
					"exec dalo %s --help\ncmp stdout %s\n! stderr .\nexec dalo help %[2]s\ncmp stdout %[3]s\n\n"+
					"and an empty section -- %[3]s --, then run UPDATE_SCRIPTS=1 go test ./cmd/dalo -run TestScript/help_", c.name, c.name, golden)
				break
			}
		}
	}
}

// runDalo runs dalo with args as main does, and returns its exit status,
// stdout and stderr.
func runDalo(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr})
	return code, stdout.String(), stderr.String()
}

// A mistake on the command line is bad usage, told in a few lines that
// name the correction, never the whole usage.
func checkShortUsageError(t *testing.T, args []string, code int, stdout, stderr string) {
	t.Helper()
	if code != exitUsage {
		t.Errorf("dalo %s: exit %d, want %d", strings.Join(args, " "), code, exitUsage)
	}
	if stdout != "" {
		t.Errorf("dalo %s: stdout %q, want nothing", strings.Join(args, " "), stdout)
	}
	if n := strings.Count(stderr, "\n"); n > 8 {
		t.Errorf("dalo %s: %d lines on stderr, want at most 8:\n%s", strings.Join(args, " "), n, stderr)
	}
}

// Every command refuses a flag it does not have, and names its own flag
// that a misspelling of one (its last letter dropped, two letters swapped)
// was meant to be.
func TestUnknownFlagEveryCommand(t *testing.T) {
	for _, c := range commands {
		args := append(strings.Fields(c.name), "--no-such-flag")
		code, stdout, stderr := runDalo(args...)
		checkShortUsageError(t, args, code, stdout, stderr)
		want := "dalo " + c.name + ": unknown flag: --no-such-flag\nRun 'dalo " + c.name + " --help' for usage.\n"
		if stderr != want {
			t.Errorf("dalo %s --no-such-flag: stderr\n%s\nwant\n%s", c.name, stderr, want)
		}
		c.flagSet(&env{}).VisitAll(func(f *pflag.Flag) {
			if len(f.Name) < 4 {
				return
			}
			swapped := f.Name[:1] + f.Name[2:3] + f.Name[1:2] + f.Name[3:]
			for _, typo := range []string{f.Name[:len(f.Name)-1], swapped} {
				if c.flagSet(&env{}).Lookup(typo) != nil {
					continue
				}
				args := append(strings.Fields(c.name), "--"+typo)
				code, stdout, stderr := runDalo(args...)
				checkShortUsageError(t, args, code, stdout, stderr)
				if want := "did you mean 'dalo " + c.name + " --" + f.Name + "'?\n"; !strings.Contains(stderr, want) {
					t.Errorf("dalo %s: stderr\n%s\nwant it to hold %q", strings.Join(args, " "), stderr, want)
				}
			}
		})
	}
}

// Every command's name misspelt (its last word's last letter dropped, or
// two letters swapped) is answered with that command.
func TestUnknownCommandEveryCommand(t *testing.T) {
	for _, c := range commands {
		words := strings.Fields(c.name)
		last := words[len(words)-1]
		swapped := last[:1] + last[2:3] + last[1:2] + last[3:]
		for _, typo := range []string{last[:len(last)-1], swapped} {
			if typo == last {
				continue
			}
			args := append(append([]string(nil), words[:len(words)-1]...), typo, "ARG")
			code, stdout, stderr := runDalo(args...)
			checkShortUsageError(t, args, code, stdout, stderr)
			if want := "did you mean 'dalo " + c.name + "'?\n"; !strings.Contains(stderr, want) {
				t.Errorf("dalo %s: stderr\n%s\nwant it to hold %q", strings.Join(args, " "), stderr, want)
			}
		}
	}
}

// TestDocParts: every part of the help that the tables and the rules
// state is made from them, and reads as they say it. A doc that names no
// part of docParts, or a part that fails, would show the user {{name}} or
// an error where the text should be.
func TestDocParts(t *testing.T) {
	used := map[string]bool{}
	for _, c := range commands {
		for _, m := range docPart.FindAllStringSubmatch(c.doc, -1) {
			if docParts[m[1]] == nil {
				t.Errorf("dalo %s: its help names {{%s}}, which docParts lacks", c.name, m[1])
			}
			used[m[1]] = true
		}
	}
	for name, f := range docParts {
		s, err := f()
		if err != nil || s == "" {
			t.Errorf("{{%s}}: %q, %v", name, s, err)
		}
	}
	rules, err := engine.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ part, want string }{
		{"providers", strings.Join(store.Providers(), ", ")},
		{"source id rule", wrapText(rules.SourceIDRule(), 75)},
		{"member refs", "skill:NAME or agent:NAME"},
		{"trust harnesses", "Codex CLI"},
	} {
		if got := expandDoc("{{" + tc.part + "}}"); got != tc.want {
			t.Errorf("{{%s}} = %q, want %q", tc.part, got, tc.want)
		}
	}
	for _, want := range []string{"providers", "hooks files", "instruction files", "project scopes", "source id rule", "adapter claims"} {
		if !used[want] {
			t.Errorf("no command's help names {{%s}}", want)
		}
	}
}
