package store

import (
	"bytes"
	"fmt"
	"strings"
)

// UnifiedDiff is the unified diff from old to new, with three lines of
// context, labelled a/name and b/name as git does; "" when they are equal.
func UnifiedDiff(name string, old, new []byte) string {
	if string(old) == string(new) {
		return ""
	}
	ops := diffAround(old, new)
	var out strings.Builder
	oldName, newName := "a/"+strings.TrimPrefix(name, "/"), "b/"+strings.TrimPrefix(name, "/")
	if old == nil {
		oldName = "/dev/null"
	}
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	const ctx = 3
	// Group the edits into hunks separated by more than 2*ctx equal lines.
	i := 0
	for i < len(ops) {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		oa, ob := ops[start].a, ops[start].b
		na, nb := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(oa, na), hunkRange(ob, nb))
		for _, o := range ops[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(o.text)
			if !strings.HasSuffix(o.text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

// diffAround is diffLines of old and new, from the end of their common
// leading lines to the start of their common trailing lines, with the
// three lines of context on either side that a hunk shows: an edit of a
// 50 MB settings.json splits a few lines, not the whole file twice. The
// common lines are found on the bytes, line by line, as diffLines would
// find them, so the hunks are the same.
func diffAround(old, new []byte) []diffOp {
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
	line := bytes.Count(old[:start], []byte("\n"))
	ops := diffLines(splitLines(string(old[start:end])), splitLines(string(new[start:eb+end-ea])))
	for k := range ops {
		ops[k].a += line
		ops[k].b += line
	}
	return ops
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

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// A diffOp is one line of the edit script; a and b are the line indexes
// (0-based) in old and new where it applies.
type diffOp struct {
	kind byte // ' ', '-', '+'
	text string
	a, b int
}

// diffLines is a longest-common-subsequence line diff. Configuration files
// are small; past a few million cells it gives up on finding common lines
// in the middle and replaces it whole.
func diffLines(a, b []string) []diffOp {
	var ops []diffOp
	// Common prefix and suffix first: most edits are local.
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		ops = append(ops, diffOp{' ', a[p], p, p})
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	if len(ma)*len(mb) > 4_000_000 {
		for i, l := range ma {
			ops = append(ops, diffOp{'-', l, p + i, p})
		}
		for j, l := range mb {
			ops = append(ops, diffOp{'+', l, p + len(ma), p + j})
		}
	} else {
		n, m := len(ma), len(mb)
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				ops = append(ops, diffOp{' ', ma[i], p + i, p + j})
				i++
				j++
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, diffOp{'-', ma[i], p + i, p + j})
				i++
			default:
				ops = append(ops, diffOp{'+', mb[j], p + i, p + j})
				j++
			}
		}
	}
	for k := 0; k < s; k++ {
		ia, ib := len(a)-s+k, len(b)-s+k
		ops = append(ops, diffOp{' ', a[ia], ia, ib})
	}
	return ops
}
