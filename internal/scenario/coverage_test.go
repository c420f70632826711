package scenario

import (
	"strings"
	"testing"

	"dalo/providers"
)

// coverageFloor is how many claims of each shipped table cite a live test
// that is a scenario, so that dalo providers verify proves them on a
// version with no table: raise it when a live test moves into a scenario,
// and never lower it. A table not named here has no floor.
var coverageFloor = map[string]int{
	"claude@2.1.233":  216,
	"claude@2.1.332":  229,
	"codex@0.147.0":   172,
	"codex@0.171.0":   175,
	"copilot@1.0.102": 171,
	"gemini@0.61.0":   182,
	"qwen@0.24.4":     206,
}

// TestCoverage counts, for each shipped table, the claims whose evidence
// cites a live test a scenario is (those verify can prove on an untabled
// version), logs each count and the live tests the other claims cite most,
// and fails when a count falls below its floor.
func TestCoverage(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range ts.All() {
		claims, err := tb.Claims()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		untried := map[string]int{}
		for _, c := range claims {
			if Cites(tb.Name, c.Evidence) {
				n++
				continue
			}
			for _, e := range c.Evidence {
				if ref, ok := strings.CutPrefix(e, "test: internal/live "); ok {
					untried[ref]++
				}
			}
		}
		t.Logf("%s: %d of %d claims cite a scenario", tb.Key(), n, len(claims))
		for ref, k := range untried {
			if k >= 3 {
				t.Logf("  %s: %d claims cite the live test %s, no scenario", tb.Key(), k, ref)
			}
		}
		if floor := coverageFloor[tb.Key()]; n < floor {
			t.Errorf("%s: %d claims cite a scenario, below the floor of %d: a claim lost its scenario, or a scenario its name", tb.Key(), n, floor)
		}
	}
}

// TestScenariosListedOnce holds All to each scenario once: verify runs
// All in order, and one listed twice ran twice and was reported twice.
func TestScenariosListedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All {
		if seen[s.Name] {
			t.Errorf("scenario %s is in All more than once", s.Name)
		}
		seen[s.Name] = true
	}
}
