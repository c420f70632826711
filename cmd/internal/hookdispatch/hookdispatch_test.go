package hookdispatch

import (
	"strings"
	"testing"

	"dalo/plan"
)

// TestDocInterpreters: the help names the interpreter of every tool
// runtime the rules define (plan.Runtimes), and no placeholder is left.
func TestDocInterpreters(t *testing.T) {
	d := Doc()
	for rt, r := range plan.Runtimes {
		if r.Interpreter != "" && !strings.Contains(d, " "+r.Interpreter+" ") {
			t.Errorf("the help does not name %s, the interpreter of runtime %s", r.Interpreter, rt)
		}
	}
	if strings.Contains(d, "$interpreters") {
		t.Errorf("the help still holds its placeholder")
	}
}
