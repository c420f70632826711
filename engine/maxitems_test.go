package engine

import (
	"errors"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
)

// TestMaxItems: the bound an over-long list is told it passed is read from
// the list's definition (list.MaxItems), not from the text of CUE's error,
// so the message holds whatever the error says.
func TestMaxItems(t *testing.T) {
	ctx := cuecontext.New()
	for _, c := range []struct {
		src  string
		want int64
		ok   bool
	}{
		{`[...int] & list.MaxItems(3)`, 3, true},
		{`list.UniqueItems() & [...string] & list.MaxItems(7)`, 7, true},
		{`[...int] & list.UniqueItems()`, 0, false},
		{`[...int]`, 0, false},
	} {
		src := "x: " + c.src
		if strings.Contains(c.src, "list.") {
			src = "import \"list\"\n" + src
		}
		def := ctx.CompileString(src).LookupPath(cue.ParsePath("x"))
		if err := def.Err(); err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		n, ok := maxItems(def)
		if n != c.want || ok != c.ok {
			t.Errorf("maxItems(%s) = %d, %t; want %d, %t", c.src, n, ok, c.want, c.ok)
		}
	}
	def := ctx.CompileString("import \"list\"\nx: [...int] & list.MaxItems(3)").LookupPath(cue.ParsePath("x"))
	if got, want := listMessage(def, "x", 4, errors.New("an error that names no bound")), "array has 4 entries, more than the 3 allowed"; got != want {
		t.Errorf("listMessage = %q, want %q", got, want)
	}
}
