package lazyregexp

import (
	"reflect"
	"regexp"
	"testing"
)

// TestSameAsRegexp: each method answers what regexp's does.
func TestSameAsRegexp(t *testing.T) {
	const expr = `(\w+)=(\d+)`
	const s = "a=1, b=22; c=x d=333"
	r, rx := New(expr), regexp.MustCompile(expr)
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"MatchString", r.MatchString(s), rx.MatchString(s)},
		{"FindString", r.FindString(s), rx.FindString(s)},
		{"FindStringSubmatch", r.FindStringSubmatch(s), rx.FindStringSubmatch(s)},
		{"FindAllString", r.FindAllString(s, -1), rx.FindAllString(s, -1)},
		{"FindAllStringIndex", r.FindAllStringIndex(s, 2), rx.FindAllStringIndex(s, 2)},
		{"FindAllStringSubmatch", r.FindAllStringSubmatch(s, -1), rx.FindAllStringSubmatch(s, -1)},
		{"ReplaceAllString", r.ReplaceAllString(s, "$2=$1"), rx.ReplaceAllString(s, "$2=$1")},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

// TestCompiledInTests: in a test binary New compiles at once, so that a
// pattern that does not compile fails its package's tests at init.
func TestCompiledInTests(t *testing.T) {
	if r := New(`a+`); r.rx == nil {
		t.Error("not compiled in a test binary")
	}
	defer func() {
		if recover() == nil {
			t.Error("New of a pattern that does not compile did not panic")
		}
	}()
	New(`a(`)
}
