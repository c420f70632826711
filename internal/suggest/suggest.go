// Package suggest finds, among the names a place admits, the one a
// mistyped name was most likely meant to be: the basis of every "did you
// mean" of dalo, for commands, flags, fields and values alike.
package suggest

import (
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// Distance is the optimal string alignment distance between a and b: the
// number of single-character insertions, deletions, substitutions and
// transpositions of adjacent characters that turn one into the other.
// Transpositions count one, as people type them (timout, tiemout).
func Distance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// Three rows: two before the current one, for transpositions.
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}

// Close reports whether a name at distance d from a candidate of the
// given length is close enough to suggest it: one edit in names of up to
// four characters, two up to eight, three beyond. Short names change
// meaning with fewer edits (log, lag), so they get fewer.
func Close(d, length int) bool {
	switch {
	case length <= 4:
		return d <= 1
	case length <= 8:
		return d <= 2
	}
	return d <= 3
}

// Closest returns the candidate nearest to name, or "" when none is close
// enough to suggest (see Close) or name is a candidate itself. Case is
// ignored in the comparison; among equally near candidates the first wins,
// so a caller that passes them sorted gets a stable answer.
//
// A candidate is measured only as far as it could still be suggested:
// one whose length alone puts it out of reach is skipped, and the others
// are measured within a band of the edits Close allows (fewer once a
// nearer one is found), stopping once a row exceeds them. Measuring
// each in full, a source of 1,000 skills whose packages named 3,500 that
// were not there spent most of its validation here.
//
// Before it is measured, a candidate's characters are counted against
// name's: an edit changes the counts by two at most (a substitution; a
// transposition none), so counts that differ by more than twice the
// edits allowed put it out of reach too. Characters are counted by their
// low seven bits, which can only make counts agree more, and so keeps
// that a bound. Hooks naming MCP tools of their own each had every tool
// of every table measured for a hint.
func Closest(name string, candidates []string) string {
	best, bestD := "", -1
	s := []rune(strings.ToLower(name))
	var t []rune
	var rows [3][]int
	var count [128]int32 // of s's characters, then less t's while one is counted
	for _, r := range s {
		count[r&127]++
	}
	for _, c := range candidates {
		if c == name {
			return ""
		}
		n := utf8.RuneCountInString(c)
		k := closeLimit(n)
		if bestD >= 0 {
			k = min(k, bestD-1)
		}
		if k < 0 || n-len(s) > k || len(s)-n > k {
			continue
		}
		t = t[:0]
		differ := len(s) // the counts' differences, summed
		for _, r := range c {
			r = unicode.ToLower(r)
			t = append(t, r)
			if count[r&127] > 0 {
				differ--
			} else {
				differ++
			}
			count[r&127]--
		}
		for _, r := range t {
			count[r&127]++
		}
		if differ > 2*k {
			continue
		}
		measured.Add(1)
		if d := within(s, t, k, &rows); d <= k {
			best, bestD = c, d
		}
	}
	return best
}

// measured counts the candidates Closest measured: a test holds a name
// far from every candidate to none.
var measured atomic.Int64

// closeLimit is the most edits Close allows from a candidate of length
// runes.
func closeLimit(length int) int {
	switch {
	case length <= 4:
		return 1
	case length <= 8:
		return 2
	}
	return 3
}

// within returns the Distance between s and t when it is at most k, and
// k+1 when it is more. It fills only the cells of the band within k of
// the diagonal, and stops at a row none of whose cells is within k:
// their values never shrink down the rows. rows are its reused rows.
func within(s, t []rune, k int, rows *[3][]int) int {
	far := k + 1
	if len(s)-len(t) > k || len(t)-len(s) > k {
		return far
	}
	for i := range rows {
		if cap(rows[i]) < len(t)+1 {
			rows[i] = make([]int, len(t)+1)
		}
		rows[i] = rows[i][:len(t)+1]
	}
	prev2, prev, cur := rows[0], rows[1], rows[2]
	for j := range prev {
		prev[j] = min(j, far)
	}
	for i := 1; i <= len(s); i++ {
		lo, hi := max(1, i-k), min(len(t), i+k)
		cur[lo-1] = min(i, far) // cur[0] is i; left of the band, far
		if lo > 1 {
			cur[lo-1] = far
		}
		least := cur[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost, far)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
			least = min(least, d)
		}
		if hi < len(t) {
			cur[hi+1] = far // right of the band, read by the next row
		}
		if least > k {
			return far
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(t)], far)
}
