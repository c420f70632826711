package unidiff

import (
	"fmt"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	new := "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\nk\n"
	want := "--- a/f\n+++ b/f\n@@ -2,9 +2,10 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n i\n j\n+k\n"
	if got := Diff("f", []byte(old), []byte(new)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := Diff("f", []byte(old), []byte(old)); got != "" {
		t.Errorf("equal: %q", got)
	}
	want = "--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+x\n"
	if got := Diff("f", nil, []byte("x\n")); got != want {
		t.Errorf("created:\n%s", got)
	}
}

// TestDiffApplies: the diff of a long document, found around the
// lines that differ, patches the old text into the new one, whatever the
// edit, at the start, the middle, the end, without a final newline.
func TestDiffApplies(t *testing.T) {
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
			d := Diff("f", []byte(pair[0]), []byte(pair[1]))
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

// TestDiffLocal: an edit of a long document, whose lines repeat,
// is one hunk around the line that changed, with three lines of context
// on either side.
func TestDiffLocal(t *testing.T) {
	var lines []string
	for i := range 20000 {
		lines = append(lines, fmt.Sprintf("line %d\n", i%7))
	}
	old := strings.Join(lines, "")
	lines[10000] = "line three\n"
	got := Diff("f", []byte(old), []byte(strings.Join(lines, "")))
	want := "--- a/f\n+++ b/f\n@@ -9998,7 +9998,7 @@\n line 1\n line 2\n line 3\n-line 4\n+line three\n line 5\n line 6\n line 0\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
