// Package suggest finds, among the names a place admits, the one a
// mistyped name was most likely meant to be: the basis of every "did you
// mean" of dalo, for commands, flags, fields and values alike.
package suggest

import "strings"

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
func Closest(name string, candidates []string) string {
	best, bestD := "", -1
	lower := strings.ToLower(name)
	for _, c := range candidates {
		if c == name {
			return ""
		}
		d := Distance(lower, strings.ToLower(c))
		if !Close(d, len([]rune(c))) {
			continue
		}
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
