// Package unidiff writes the unified diff dalo shows of a file it is about
// to change: a user's hooks file, trust file or instruction file, or a
// package's file between two versions.
package unidiff

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/diff"
)

// Diff is the unified diff from old to new, with three lines of
// context, labelled a/name and b/name as git does (old nil: /dev/null);
// "" when they are equal. It is Go's own anchored diff (go-internal/diff)
// of the lines from three before the first that differs to three after
// the last: an edit of a 50 MB settings.json diffs a few lines, not the
// whole file twice.
func Diff(name string, old, new []byte) string {
	if bytes.Equal(old, new) {
		return ""
	}
	oldName, newName := "a/"+strings.TrimPrefix(name, "/"), "b/"+strings.TrimPrefix(name, "/")
	if old == nil {
		oldName = "/dev/null"
	}
	const ctx = 3
	i := 0 // the common leading lines end here, in both
	for i < len(old) && i < len(new) {
		ea, eb := lineEnd(old, i), lineEnd(new, i)
		if ea != eb || !bytes.Equal(old[i:ea], new[i:eb]) {
			break
		}
		i = ea
	}
	ea, eb := len(old), len(new) // the common trailing lines start here
	for ea > i && eb > i {
		sa, sb := lineStart(old, ea), lineStart(new, eb)
		if sa < i || sb < i || !bytes.Equal(old[sa:ea], new[sb:eb]) {
			break
		}
		ea, eb = sa, sb
	}
	start := i
	for k := 0; k < ctx && start > 0; k++ {
		start = lineStart(old, start)
	}
	end := ea
	for k := 0; k < ctx && end < len(old); k++ {
		end = lineEnd(old, end)
	}
	skipped := bytes.Count(old[:start], []byte("\n"))
	// Without its first line, "diff OLD NEW", which git and diff -u do
	// not write.
	_, d, _ := bytes.Cut(diff.Diff(oldName, old[start:end], newName, new[start:eb+end-ea]), []byte("\n"))
	return hunkHeader.ReplaceAllStringFunc(string(d), func(h string) string {
		m := hunkHeader.FindStringSubmatch(h)
		return fmt.Sprintf("@@ -%s +%s @@", hunkRange(m[1], m[2], skipped), hunkRange(m[3], m[4], skipped))
	})
}

// hunkHeader is a hunk's header line as go-internal/diff writes it.
var hunkHeader = regexp.MustCompile(`(?m)^@@ -(\d+),(\d+) \+(\d+),(\d+) @@$`)

// hunkRange is a range of a hunk header, its start moved by the lines
// the diff skipped; a range of one line is written without its count, as
// diff -u does.
func hunkRange(start, count string, skipped int) string {
	n, _ := strconv.Atoi(start)
	s := strconv.Itoa(n + skipped)
	if count == "1" {
		return s
	}
	return s + "," + count
}

// lineEnd returns where the line of doc that starts at i ends, after its
// newline if it has one.
func lineEnd(doc []byte, i int) int {
	if j := bytes.IndexByte(doc[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(doc)
}

// lineStart returns where the line of doc that ends at end (after its
// newline, or at the end of doc) starts.
func lineStart(doc []byte, end int) int {
	return bytes.LastIndexByte(doc[:end-1], '\n') + 1
}
