package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"dalo/internal/fakemodel"
	"dalo/plan"
	"dalo/providers"
)

// duplicateKeyCases are the hook files of duplicateKeys, each with a key
// twice, in the JSON after the file's own opening brace: PRE and START
// stand for the native events of tool_call/before and session/start,
// FIRST and LAST for a hook that touches the file first or last.
var duplicateKeyCases = []struct{ name, doc string }{
	// Two copies of "hooks": which is read?
	{"hooks twice", `"hooks": {"PRE": [{"matcher": "*", "hooks": [FIRST]}]}, "hooks": {"PRE": [{"matcher": "*", "hooks": [LAST]}]}}`},
	// A key twice inside the one entry: is the rest read?
	{"matcher twice", `"hooks": {"PRE": [{"matcher": "*", "matcher": "*", "hooks": [FIRST]}], "START": [{"hooks": [LAST]}]}}`},
}

// duplicateKeys proves what the harness reads of a hook file holding a key
// twice, as the table's config.hooks.duplicate_keys says, with hooks of
// the user's own that each touch a file when they run, in a world of its
// own per case: "last", the harness keeps the last copy of a key and reads
// the rest; "none", it reads none of the file's hooks. What the hook file
// holds besides hooks (Gemini CLI's auth) is kept. A harness that runs
// only hooks its user trusted (Codex) is not this scenario's: the live
// test TestDuplicateKeys trusts them as the user's review would.
var duplicateKeys = &Scenario{
	Name: "duplicate-keys", Test: "TestDuplicateKeys/%s", Harnesses: []string{"claude", "gemini"},
	Script: duplicateScript,
	Play: func(w *World, c *Check) error {
		tb, err := w.table()
		if err != nil {
			return err
		}
		for i, dc := range duplicateKeyCases {
			sub, err := NewWorld(w.Machine, filepath.Join(w.Root, fmt.Sprintf("case-%d", i)), duplicateScript)
			if err != nil {
				return err
			}
			sub.Logf = w.Logf
			err = duplicateKey(sub, c, tb, dc.name, dc.doc)
			sub.Close()
			if err != nil {
				return err
			}
		}
		return nil
	},
}

func duplicateScript(*World) fakemodel.Script {
	return fakemodel.Script{fakemodel.Run("echo hi"), fakemodel.Say("Done.")}
}

// duplicateKey writes the hook file doc (a case of duplicateKeys, named
// name) in w, runs a session and checks which copy ran.
func duplicateKey(w *World, c *Check, tb *providers.Table, name, doc string) error {
	pre, _ := tb.NativeEvent(plan.SubjectToolCall, plan.PhaseBefore)
	start, _ := tb.NativeEvent(plan.SubjectSession, plan.PhaseStart)
	hook := func(name string) string {
		return fmt.Sprintf(`{"type": "command", "command": "touch %s", "timeout": %d}`, filepath.Join(w.Out, name), tb.NativeTimeout(10000))
	}
	// The file as the user has it, its other members kept.
	file := w.HooksFile()
	head := "{"
	if b, err := os.ReadFile(file); err == nil {
		if inner := strings.TrimSpace(string(b)); len(inner) > 2 {
			head = strings.TrimSuffix(inner, "}") + ", "
		}
	}
	r := strings.NewReplacer("FIRST", hook("first"), "LAST", hook("last"), "PRE", pre, "START", start)
	if err := w.WriteFile(file, head+r.Replace(doc)); err != nil {
		return err
	}
	s, err := w.Run("Run the command you are given.")
	c.Session = s
	if err != nil {
		c.Failf("%s: the session failed: %v", name, err)
		return nil
	}
	ranFirst, ranLast := fileExists(filepath.Join(w.Out, "first")), fileExists(filepath.Join(w.Out, "last"))
	w.logf("%s: first copy ran = %v, last copy ran = %v", name, ranFirst, ranLast)
	switch reads := tb.Config.Hooks.DuplicateKeys.Reads; {
	case reads == providers.ReadsLast && name == "hooks twice" && (ranFirst || !ranLast):
		c.Failf("%s: first ran = %v, last ran = %v; want the last copy only", name, ranFirst, ranLast)
	case reads == providers.ReadsLast && name == "matcher twice" && (!ranFirst || !ranLast):
		c.Failf("%s: first ran = %v, last ran = %v; want both (the last matcher kept, the rest read)", name, ranFirst, ranLast)
	case reads == providers.ReadsNone && (ranFirst || ranLast):
		c.Failf("%s: a hook ran (first %v, last %v); want no hook of the file", name, ranFirst, ranLast)
	}
	return nil
}
