package providers_test

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"dalo/internal/live"
	"dalo/providers"
)

// Every live test a table cites ran against that table's harness and
// passed: a test that exists (TestEvidenceTestsExist) proves nothing until
// it passes on the version. It reads what the live suite's runs wrote to
// DALO_LIVE_RESULTS (a directory), which .ci/run sets for this step after
// the live suite; without it there is nothing to check.
func TestEvidenceTestsPassed(t *testing.T) {
	dir := os.Getenv("DALO_LIVE_RESULTS")
	if dir == "" {
		t.Skip("needs the results of the live suite: DALO_LIVE_RESULTS=<dir its runs wrote to> (.ci/run sets it after the live suite)")
	}
	proof, err := live.ReadProof(dir)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range ts.All() {
		for _, line := range unproved(proof, tb) {
			t.Errorf("%s: %s", tb.Key(), line)
		}
	}
}

// unproved returns, for each test table tb cites that did not pass against
// it, a line naming the test, how it ended and the claims citing it.
func unproved(proof live.Proof, tb *providers.Table) []string {
	if _, ok := proof[tb.Key()]; !ok {
		return []string{"no run of the live suite drove its harness"}
	}
	claims, err := proof.Claims(tb)
	if err != nil {
		return []string{err.Error()}
	}
	cited := map[string][]string{} // "<test>: <outcome>" → claim paths
	for _, c := range claims {
		for i, test := range c.Tests() {
			switch o := c.Outcomes[i]; o {
			case "pass":
			case "":
				cited[test+" did not run"] = append(cited[test+" did not run"], c.Path)
			default:
				cited[test+" "+o+"ed"] = append(cited[test+" "+o+"ed"], c.Path)
			}
		}
	}
	var lines []string
	for what, paths := range cited {
		lines = append(lines, fmt.Sprintf("%s; %d claims cite it: %s", what, len(paths), strings.Join(paths, ", ")))
	}
	sort.Strings(lines)
	return lines
}

// The check holds each claim to its table's own run: a test that passed
// against another version, failed, or did not run proves nothing.
func TestEvidenceTestsPassedCheck(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	tb, ok := ts.Lookup("claude", "2.1.233")
	if !ok {
		t.Fatal("no claude@2.1.233 table")
	}
	claims, err := tb.Claims()
	if err != nil {
		t.Fatal(err)
	}
	// Every test the table cites passed against it, but TestToolCalls/claude
	// failed and TestProbeClaudeTools passed against another version only.
	pass := map[string]string{}
	for _, c := range claims {
		for _, ref := range c.Tests() {
			pass[strings.TrimPrefix(ref, live.Package+" ")] = "pass"
		}
	}
	pass["TestToolCalls/claude"] = "fail"
	delete(pass, "TestProbeClaudeTools")
	proof := live.Proof{tb.Key(): pass, "claude@9.9.9": {"TestProbeClaudeTools": "pass"}}

	got := unproved(proof, tb)
	if len(got) != 2 || !strings.HasPrefix(got[0], "internal/live TestProbeClaudeTools did not run; ") ||
		!strings.HasPrefix(got[1], "internal/live TestToolCalls/claude failed; ") ||
		!strings.Contains(got[1], "rows.tool_call.before.effects.rewrite_input") {
		t.Errorf("unproved = %q\nwant TestProbeClaudeTools not run and TestToolCalls/claude failed, naming the claims citing each", got)
	}
	if got := unproved(live.Proof{"codex@0.147.0": pass}, tb); len(got) != 1 || got[0] != "no run of the live suite drove its harness" {
		t.Errorf("a table no run drove: %q", got)
	}
}
