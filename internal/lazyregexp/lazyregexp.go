// Package lazyregexp holds regular expressions compiled on first use. A
// package-level regexp.MustCompile runs when the binary starts, for every
// command, whether or not the command matches anything with it: the
// patterns of dalo's importer and git sources alone cost each run of dalo
// a millisecond before main (GODEBUG=inittrace=1).
package lazyregexp

import (
	"regexp"
	"sync"
	"testing"
)

// A Regexp is a regexp.Regexp compiled the first time it is used.
type Regexp struct {
	expr string
	once sync.Once
	rx   *regexp.Regexp
}

// New returns expr, to compile on first use. In a test binary it is
// compiled at once, so that a pattern that does not compile fails every
// test of its package, as regexp.MustCompile at init would.
func New(expr string) *Regexp {
	r := &Regexp{expr: expr}
	if testing.Testing() {
		r.re()
	}
	return r
}

func (r *Regexp) re() *regexp.Regexp {
	r.once.Do(func() { r.rx = regexp.MustCompile(r.expr) })
	return r.rx
}

// MatchString reports whether s holds a match (regexp.Regexp.MatchString).
func (r *Regexp) MatchString(s string) bool { return r.re().MatchString(s) }

// FindString is regexp.Regexp.FindString.
func (r *Regexp) FindString(s string) string { return r.re().FindString(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.re().FindStringSubmatch(s) }

// FindAllString is regexp.Regexp.FindAllString.
func (r *Regexp) FindAllString(s string, n int) []string { return r.re().FindAllString(s, n) }

// FindAllStringIndex is regexp.Regexp.FindAllStringIndex.
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int { return r.re().FindAllStringIndex(s, n) }

// FindAllStringSubmatch is regexp.Regexp.FindAllStringSubmatch.
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.re().FindAllStringSubmatch(s, n)
}

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string { return r.re().ReplaceAllString(src, repl) }
