package store

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"dalo/plan"
	"dalo/providers"
)

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

// TestReadConfig reads harness configurations the way dalo must not trip
// over: missing, empty, a FIFO (no blocking), a directory, a dangling
// symlink (replacing it would replace the link) and a file too large to
// read; every error names the file.
func TestReadConfig(t *testing.T) {
	tests := []struct {
		name    string
		build   func(t *testing.T, p string)
		want    []byte
		wantErr string
	}{
		{"missing", func(t *testing.T, p string) {}, nil, ""},
		{"empty", func(t *testing.T, p string) { os.WriteFile(p, nil, 0o600) }, []byte{}, ""},
		{"settings", func(t *testing.T, p string) { os.WriteFile(p, []byte("{}\n"), 0o600) }, []byte("{}\n"), ""},
		{"fifo", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}, nil, "is a FIFO, not a regular file"},
		{"directory", func(t *testing.T, p string) { os.Mkdir(p, 0o700) }, nil, "is a directory, not a file"},
		{"dangling symlink", func(t *testing.T, p string) { os.Symlink("elsewhere.json", p) }, nil, "is a symlink to elsewhere.json"},
		{"too large", func(t *testing.T, p string) {
			f, _ := os.Create(p)
			f.Truncate(maxUserFileBytes + 1)
			f.Close()
		}, nil, "more than the 67108864 dalo reads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "settings.json")
			tt.build(t, p)
			done := make(chan struct{})
			var got []byte
			var err error
			go func() { got, err = readConfig(p); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("readConfig(%s) blocked", p)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), p) {
					t.Fatalf("err = %v, want %q naming %s", err, tt.wantErr, p)
				}
				return
			}
			if err != nil || string(got) != string(tt.want) || (got == nil) != (tt.want == nil) {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestFindDispatcher: the entries call the dalo-hook beside dalo when there
// is one that can run and is of the running dalo's build, else dalo's own
// `hook dispatch`.
func TestFindDispatcher(t *testing.T) {
	self, err := os.Executable() // this test binary stands for dalo's build
	if err != nil {
		t.Fatal(err)
	}
	goTool, err := exec.LookPath("go") // a Go binary of another build
	if err != nil {
		t.Skip("no go command")
	}
	link := func(target string) func(string) error {
		return func(p string) error { return os.Symlink(target, p) }
	}
	for _, tc := range []struct {
		name string
		hook func(path string) error
		fast bool
	}{
		{name: "no dalo-hook"},
		{name: "dalo-hook", hook: link(self), fast: true},
		{name: "another build", hook: link(goTool)},
		{name: "not a Go binary", hook: func(p string) error { return os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755) }},
		{name: "not executable", hook: func(p string) error { return os.WriteFile(p, nil, 0o644) }},
		{name: "a directory", hook: func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.hook != nil {
				if err := tc.hook(filepath.Join(dir, plan.HookBinary)); err != nil {
					t.Fatal(err)
				}
			}
			d := FindDispatcher(filepath.Join(dir, "dalo"))
			want := Dispatcher{Exe: filepath.Join(dir, "dalo")}
			if tc.fast {
				want = Dispatcher{Exe: filepath.Join(dir, plan.HookBinary), Hook: true}
			}
			if d != want {
				t.Errorf("FindDispatcher = %+v, want %+v", d, want)
			}
		})
	}
}

// TestUnifiedDiffApplies: the diff of a long document, found around the
// lines that differ, patches the old text into the new one, whatever the
// edit, at the start, the middle, the end, without a final newline.
func TestUnifiedDiffApplies(t *testing.T) {
	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("line %d\n", i%7))
	}
	doc := strings.Join(lines, "")
	edits := []func(string) string{
		func(s string) string { return "x\n" + s },
		func(s string) string { return s + "x\n" },
		func(s string) string { return s + "x" },
		func(s string) string { return strings.TrimSuffix(s, "\n") },
		func(s string) string { return strings.Replace(s, "line 3\n", "line three\n", 1) },
		func(s string) string { return strings.Replace(s, "line 3\nline 4\n", "", 5) },
		func(s string) string { return strings.Replace(s, "line 6\n", "line 6\nnew\n", -1) },
		func(s string) string { return s[:len(s)/2] + "mid\n" + s[len(s)/2:] },
		func(s string) string { return "" },
		func(s string) string { return "line 0\n" },
	}
	for i, e := range edits {
		for _, pair := range [][2]string{{doc, e(doc)}, {e(doc), doc}} {
			d := UnifiedDiff("f", []byte(pair[0]), []byte(pair[1]))
			if got := applyDiff(t, pair[0], d); got != pair[1] {
				t.Errorf("edit %d: the diff\n%s\npatches into\n%q\nwant\n%q", i, d, got, pair[1])
			}
		}
	}
}

// applyDiff applies unified diff d to old.
func applyDiff(t *testing.T, old, d string) string {
	t.Helper()
	src := strings.SplitAfter(old, "\n")
	var out []string
	next := 0 // the next line of src to copy
	lines := strings.SplitAfter(d, "\n")
	for k := 2; k < len(lines) && lines[k] != ""; k++ {
		l := lines[k]
		switch {
		case strings.HasPrefix(l, "@@ -"):
			var from int
			r, _, _ := strings.Cut(strings.TrimPrefix(l, "@@ -"), " ")
			fs, count, _ := strings.Cut(r, ",")
			fmt.Sscan(fs, &from)
			if count != "0" {
				from-- // 1-based, unless the range is empty
			}
			out = append(out, src[next:from]...)
			next = from
		case strings.HasPrefix(l, "\\"):
			// The line before has no newline: on the new side, when it
			// is one of the new text's.
			if p := lines[k-1][0]; p == ' ' || p == '+' {
				out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], "\n")
			}
		case l[0] == ' ':
			out = append(out, l[1:])
			next++
		case l[0] == '-':
			next++
		case l[0] == '+':
			out = append(out, l[1:])
		}
	}
	out = append(out, src[next:]...)
	return strings.Join(out, "")
}

// TestUnifiedDiffLocal: an edit of a long document, whose lines repeat,
// is one hunk around the line that changed, with three lines of context
// on either side.
func TestUnifiedDiffLocal(t *testing.T) {
	var lines []string
	for i := range 20000 {
		lines = append(lines, fmt.Sprintf("line %d\n", i%7))
	}
	old := strings.Join(lines, "")
	lines[10000] = "line three\n"
	got := UnifiedDiff("f", []byte(old), []byte(strings.Join(lines, "")))
	want := "--- a/f\n+++ b/f\n@@ -9998,7 +9998,7 @@\n line 1\n line 2\n line 3\n-line 4\n+line three\n line 5\n line 6\n line 0\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestEntryCommandRewritesNothing: the command of every entry dalo writes,
// on every table, holds nothing the harness rewrites in its settings
// before it runs it (Gemini CLI replaces $s by its environment's s, which
// turned a guard that read the status into $s into "exit 0"); and the
// guard still blocks with the table's status when the dispatcher cannot
// run, whatever the variables of the environment hold.
func TestEntryCommandRewritesNothing(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gone := filepath.Join(dir, "dispatchers", "ab", "dalo-hook") // never written
	for _, tb := range ts.All() {
		for _, ev := range slices.Sorted(maps.Keys(tb.Events)) {
			for _, failClosed := range []bool{false, true} {
				c := wantEntryCommand(tb, &dispatcherCopy{Dispatcher: Dispatcher{Hook: true}, Path: gone}, dir, ev, failClosed)
				cmd := c.String()
				if x := regexp.MustCompile(`\$(\w|\{)`).FindString(cmd); x != "" {
					t.Errorf("%s %s: the entry names a variable (%s): %s", tb.Key(), ev, x, cmd)
				}
				if x := tb.Expanded(cmd); x != "" {
					t.Errorf("%s %s: %s rewrites %s in the entry: %s", tb.Key(), ev, tb.Harness, x, cmd)
				}
				if !failClosed {
					continue
				}
				sh := exec.Command("sh", "-c", cmd)
				sh.Env = append(os.Environ(), "s=0", "p=0")
				sh.Stdin = strings.NewReader(`{"hook_event_name":"` + ev + `"}`)
				var stderr bytes.Buffer
				sh.Stderr = &stderr
				err := sh.Run()
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != tb.Blocking.Exit || !strings.Contains(stderr.String(), "exit status 127") {
					t.Errorf("%s %s: the dispatcher gone, the guard ended with %v, stderr %q; want exit %d naming status 127", tb.Key(), ev, err, stderr.String(), tb.Blocking.Exit)
				}
			}
		}
	}
}
