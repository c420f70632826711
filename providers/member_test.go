package providers

import (
	"strings"
	"testing"
)

// #MemberInstall: what install does with each kind of member, on a harness
// with subagents (Claude Code) and one without (Codex CLI).
func TestMemberInstall(t *testing.T) {
	ts := mustLoad(t)
	claude, _ := ts.Newest("claude")
	codex, _ := ts.Newest("codex")
	for _, tc := range []struct {
		table      *Table
		q          MemberQuestion
		action     string
		textPrefix string
	}{
		{claude, MemberQuestion{"skill", "required", MemberKept, false}, "installed", "installed to <skills>"},
		{codex, MemberQuestion{"skill", "optional", MemberKept, false}, "installed", "installed to <skills>"},
		{claude, MemberQuestion{"agent", "required", MemberKept, true}, "subagent", "installed as a subagent to <agents>"},
		{codex, MemberQuestion{"agent", "required", MemberKept, true}, "fallback", "cannot be installed as an agent, so its inline fallback <fallback> is installed instead"},
		{codex, MemberQuestion{"agent", "required", MemberKept, false}, "blocks", "cannot be installed as an agent and has no inline fallback: Codex"},
		{codex, MemberQuestion{"agent", "optional", MemberKept, false}, "omitted", "cannot be installed as an agent and has no inline fallback: Codex"},
		{claude, MemberQuestion{"skill", "required", MemberOmitted, false}, "blocks", "omitted by validation: <why>"},
		{claude, MemberQuestion{"skill", "optional", MemberOmitted, false}, "omitted", "omitted by validation: <why>"},
		{claude, MemberQuestion{"agent", "optional", MemberUnresolved, true}, "omitted", "does not resolve: <why>"},
		{codex, MemberQuestion{"skill", "required", MemberUnreachable, false}, "blocks", "<why>"},
		{claude, MemberQuestion{"other", "required", MemberKept, false}, "blocks", "install writes no <kind> members"},
		{claude, MemberQuestion{"instruction", "required", MemberOmitted, false}, "instruction", "not written by install; 'dalo instruction enable' can write it into <instructions>"},
	} {
		a, err := ts.MemberInstall(tc.table, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if a.Action != tc.action || !strings.HasPrefix(a.Text, tc.textPrefix) {
			t.Errorf("%s %+v: %+v, want %s, %q...", tc.table.Key(), tc.q, a, tc.action, tc.textPrefix)
		}
	}
	if MemberKind("plugin") != "other" || MemberKind("agent") != "agent" {
		t.Error("MemberKind")
	}
}
