package scenario

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/providers"
)

// results returns a result per scenario of harness: held, but for those
// failed names, which failed with their reason.
func results(harness string, failed map[string]string) []Result {
	var out []Result
	for _, s := range All {
		if !s.For(harness) {
			continue
		}
		r := Result{Scenario: s, Harness: harness}
		if why, ok := failed[s.Name]; ok {
			r.Failures = []string{why}
		}
		out = append(out, r)
	}
	return out
}

// draftLocal drafts the table of name@version from its nearest shipped
// table and loads it as a local table, failing t unless it loads.
func draftLocal(t *testing.T, name, version, output string, rs []Result) (*Draft, *providers.Table) {
	t.Helper()
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	near, ok := ts.Nearest(name, version)
	if !ok {
		t.Fatalf("no table near %s@%s", name, version)
	}
	d, err := DraftTable(near, version, output, rs, Verified{Date: "2026-12-02", Dalo: "v0.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Table == nil {
		return d, nil
	}
	dir := t.TempDir()
	file := filepath.Join(dir, name, version+".cue")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, d.Table, 0o644); err != nil {
		t.Fatal(err)
	}
	local, err := providers.WithLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range local.Broken() {
		t.Fatalf("the drafted table does not load: %v\n%s", b, d.Table)
	}
	tb, ok := local.Lookup(name, version)
	if !ok || !tb.LocalTable() {
		t.Fatalf("the drafted table %s@%s is not a local table of WithLocal", name, version)
	}
	return d, tb
}

// near returns the nearest shipped table of name@version.
func near(t *testing.T, name, version string) *providers.Table {
	t.Helper()
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	tb, ok := ts.Nearest(name, version)
	if !ok {
		t.Fatalf("no table near %s@%s", name, version)
	}
	return tb
}

// claim returns the evidence of the claim at path of tb.
func claim(t *testing.T, tb *providers.Table, path string) []string {
	t.Helper()
	claims, err := tb.Claims()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range claims {
		if c.Path == path {
			return c.Evidence
		}
	}
	t.Fatalf("%s has no claim %s", tb.Key(), path)
	return nil
}

// Every scenario held: the claims they try cite them as verified, and no
// other claim of the nearest table is promised on the new version.
func TestDraftTableHeld(t *testing.T) {
	for _, tc := range []struct{ name, version, output string }{
		{"claude", "2.1.331", "2.1.331 (Claude Code)"},
		{"codex", "0.169.0", "codex-cli 0.169.0"},
		{"gemini", "0.60.0", "0.60.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, tb := draftLocal(t, tc.name, tc.version, tc.output, results(tc.name, nil))
			if tb == nil {
				t.Fatalf("no table drafted; blocked by %v", d.Blocked)
			}
			if d.Held == 0 || d.Untried == 0 || d.Failed != 0 {
				t.Errorf("held %d, untried %d, failed %d: want some held, some untried, none failed", d.Held, d.Untried, d.Failed)
			}
			if tb.Verified == nil || tb.Verified.Date != "2026-12-02" || tb.VersionOutput.Text != tc.output {
				t.Errorf("verified = %+v, version_output = %q", tb.Verified, tb.VersionOutput.Text)
			}
			// The core: a gate denies a tool call, context reaches the
			// model before the prompt.
			gate, ok := tb.Output("tool_call", "before", "gate", "deny")
			if !ok {
				t.Fatalf("tool_call/before gate deny is not supported on the drafted table")
			}
			if got := strings.Join(gate.Evidence, " | "); !strings.Contains(got, "verified: tool-calls 2026-12-02") {
				t.Errorf("gate deny evidence = %q, want the tool-calls scenario", got)
			}
			if _, ok := tb.Output("prompt", "before", "add_context", "add_context"); !ok {
				t.Errorf("prompt/before add_context is not supported on the drafted table")
			}
			// A context hook's failure shown to the user: what a package
			// that adds context needs to install.
			prompt, _ := tb.Row("prompt", "before")
			if d := prompt.Failures["fail_open"]["user"]; d.Status != "supported" || !strings.Contains(strings.Join(d.Evidence, " "), "verified: gate-context 2026-12-02") {
				t.Errorf("prompt/before fail_open user = %+v, want supported, verified by gate-context", d)
			}
			// A claim no scenario tries is unsupported, or where it cannot
			// be (a payload's keys) says it was not tried: never verified,
			// never with the nearest table's evidence.
			nearClaims, err := near(t, tc.name, tc.version).Claims()
			if err != nil {
				t.Fatal(err)
			}
			drafted, err := tb.Claims()
			if err != nil {
				t.Fatal(err)
			}
			byPath := map[string][]string{}
			for _, c := range drafted {
				byPath[c.Path] = c.Evidence
			}
			untried := 0
			for _, c := range nearClaims {
				if Cites(tc.name, c.Evidence) || c.Path == ".version_output" {
					continue
				}
				untried++
				for _, ev := range byPath[c.Path] {
					if !strings.HasPrefix(ev, "doc: not tried on this machine") {
						t.Errorf("%s, which no scenario tries, has the evidence %q on the drafted table", c.Path, ev)
					}
				}
			}
			if untried == 0 {
				t.Errorf("every claim of the nearest table is tried: this check proves nothing")
			}
			t.Logf("%d claims no scenario tries", untried)
			for _, ev := range claim(t, tb, "config.home") {
				if strings.HasPrefix(ev, "test: ") || strings.HasPrefix(ev, "recording: ") || strings.HasPrefix(ev, "run: ") {
					t.Errorf("config.home evidence %q is inherited from the nearest table", ev)
				}
			}
		})
	}
}

// A core scenario that fails leaves the version without a table.
func TestDraftTableBlocked(t *testing.T) {
	d, tb := draftLocal(t, "claude", "2.1.331", "2.1.331 (Claude Code)",
		results("claude", map[string]string{"tool-calls": "gate deny: the denied command ran"}))
	if tb != nil || d.Table != nil {
		t.Fatal("a table was drafted though the gate did not stop the action")
	}
	if len(d.Blocked) != 1 || d.Blocked[0].Why() != "gate deny: the denied command ran" {
		t.Errorf("blocked = %+v, want tool-calls with its reason", d.Blocked)
	}
}

// A scenario that is not core and fails turns what it tries unsupported,
// with the reason the run showed.
func TestDraftTableFailed(t *testing.T) {
	const why = "blocked prompt: the model was asked (POST /v1/messages)"
	d, tb := draftLocal(t, "claude", "2.1.331", "2.1.331 (Claude Code)",
		results("claude", map[string]string{"prompt-crash": why}))
	if tb == nil {
		t.Fatalf("no table drafted; blocked by %v", d.Blocked)
	}
	if d.Failed == 0 {
		t.Fatal("no claim failed")
	}
	row, _ := tb.Row("prompt", "before")
	del, ok := row.Failures["fail_closed"]["user"]
	if !ok || del.Status != "unsupported" || !strings.Contains(del.Reason, why) {
		t.Errorf("prompt/before fail_closed user delivery = %+v, want unsupported because %q", del, why)
	}
	if !strings.Contains(strings.Join(del.Evidence, " "), "verified: prompt-crash 2026-12-02") {
		t.Errorf("its evidence = %q, want the run that showed it", del.Evidence)
	}
}

// An error of a scenario (a step that could not run) is its reason.
func TestResultWhy(t *testing.T) {
	r := Result{Err: errors.New("dalo plugin install: exit status 1\nstdout:\n...")}
	if r.Held() || r.Why() != "dalo plugin install: exit status 1" {
		t.Errorf("Held = %v, Why = %q", r.Held(), r.Why())
	}
}

// What a harness printed becomes a local table's reason as it is: a
// quote, a CUE interpolation \( and a backslash in it still make a table
// that loads, and the reason reads back exactly.
func TestDraftReasonEscaped(t *testing.T) {
	const why = `claude said "no" \(x) and \u0041 \\ {server} ` + "\x7f"
	_, tb := draftLocal(t, "claude", "2.1.339", "2.1.339 (Claude Code)", results("claude", map[string]string{"prompt-crash": why}))
	if tb == nil {
		t.Fatal("a failed prompt-crash, which is no core scenario, blocked the table")
	}
	b, err := json.Marshal(tb.Rows)
	if err != nil {
		t.Fatal(err)
	}
	var rows any
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	if n := countSuffix(rows, why); n == 0 {
		t.Fatalf("no reason of the table ends in the run's %q:\n%s", why, b)
	}
}

// countSuffix counts the strings in v that end in suffix.
func countSuffix(v any, suffix string) int {
	n := 0
	switch v := v.(type) {
	case string:
		if strings.HasSuffix(v, suffix) {
			n++
		}
	case map[string]any:
		for _, e := range v {
			n += countSuffix(e, suffix)
		}
	case []any:
		for _, e := range v {
			n += countSuffix(e, suffix)
		}
	}
	return n
}

// A version without PreSkillShellCommand (Claude Code 2.1.331, as verify
// found it) fails the skill-shell scenarios: the table drafted from
// claude@2.1.332 shows that event not shown and loses the gate's also on
// it, and keeps
// every tool_call/before effect, its gates first: a scenario of a further
// event does not take a row's effects with it.
func TestDraftTableSkillShellFailed(t *testing.T) {
	const why = "PreSkillShellCommand payloads []: want one, tool_name Bash"
	d, tb := draftLocal(t, "claude", "2.1.331", "2.1.331 (Claude Code)",
		results("claude", map[string]string{"skill-shell": why, "skill-shell-deny": why, "skill-shell-gate": "dalo's gate ran with tool names []"}))
	if tb == nil {
		t.Fatalf("no table drafted; blocked by %v", d.Blocked)
	}
	row, _ := tb.Row("tool_call", "before")
	for name, e := range row.Effects {
		if e.Status != "supported" {
			t.Errorf("tool_call/before %s: %s (%s), want supported", name, e.Status, e.Reason)
		}
	}
	if _, ok := row.Also["PreSkillShellCommand"]; ok {
		t.Errorf("tool_call/before still installs gates on PreSkillShellCommand too: %+v", row.Also)
	}
	if ev := tb.Events["PreSkillShellCommand"]; !strings.Contains(strings.Join(ev.Evidence, " "), "not shown on this machine") {
		t.Errorf("events.PreSkillShellCommand evidence %q, want it not shown on this machine", ev.Evidence)
	}

	// Where they held, the gate is installed there too.
	_, tb = draftLocal(t, "claude", "2.1.333", "2.1.333 (Claude Code)", results("claude", nil))
	if got := tb.AlsoEvents("tool_call", "before", "gate"); len(got) != 1 || got[0] != "PreSkillShellCommand" {
		t.Errorf("every scenario held: tool_call/before gates also on %q, want PreSkillShellCommand", got)
	}
}
