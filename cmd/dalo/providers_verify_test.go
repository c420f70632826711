package main

import (
	"strings"
	"testing"
)

// TestPrintVerifyColumns: each scenario's status starts in the same
// column, however long the longest scenario's name.
func TestPrintVerifyColumns(t *testing.T) {
	r := &verifyReport{Name: "claude", Version: "9.9.9", Path: "/bin/claude", Failed: "a scenario failed", Scenarios: []scenarioReport{
		{Name: "session", Status: "held"},
		{Name: "native-events-and-their-payloads", Status: "failed", Reason: "no PreToolUse"},
	}}
	var b strings.Builder
	printVerify(&b, r)
	lines := strings.Split(b.String(), "\n")
	want := []string{
		"  session                          held",
		"  native-events-and-their-payloads failed: no PreToolUse",
	}
	for i, w := range want {
		if lines[1+i] != w {
			t.Errorf("line %d: %q, want %q", 1+i, lines[1+i], w)
		}
	}
}
