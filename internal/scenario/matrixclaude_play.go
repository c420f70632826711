package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"dalo/plan"
)

// claudeFields runs a session with an observer on every native event
// binding every field the table says its payload holds; each handler
// records what it was given. Each value is right: one non-empty session id
// (the one the stream names), the project dir, the transcript Claude wrote,
// the permission mode, the prompt, the tool and the ids the model gave its
// calls, the model's final text; each equals the payload key the table
// names. The observers print nothing: the session goes on unchanged.
var claudeFields = &Scenario{
	Name: "claude-fields", Test: "TestMatrixClaude/fields", Harnesses: []string{"claude"},
	Script: ClaudeMatrixScript,
	Play: func(w *World, c *Check) error {
		var hooks []MatrixHook
		for _, e := range ClaudeMatrixEvents {
			hooks = append(hooks, MatrixHook{ID: "f-" + e.Event, Subject: e.Subject, Phase: e.Phase, Effect: plan.EffectObserve,
				Policy: plan.PolicyReport, Visibility: plan.VisibilityUser, Tools: e.Tools, Fields: e.Fields, Result: `{"kind":"observe"}`})
		}
		const prompt = "Run the matrix commands, cm-fields-prompt."
		s, ok, err := runMatrix(w, c, ClaudeMatrixID, ClaudeMatrixPkg, ClaudeMatrixFiles(hooks), prompt)
		if !ok {
			return err
		}
		sid := streamSessionID(s)
		if sid == "" {
			c.Failf("the stream names no session id")
		}
		calls := map[string][]string{
			"PreToolUse":         {CallID("claude", 0), CallID("claude", 1)},
			"PostToolUse":        {CallID("claude", 0)},
			"PostToolUseFailure": {CallID("claude", 1)},
		}
		want := func(f string, e MatrixEvent, i int) string {
			switch f {
			case "session.id":
				return sid
			case "session.permission_mode":
				return "default" // -p --allowedTools (finding 8)
			case "prompt.text":
				return prompt
			case "tool.name":
				return "Bash"
			case "tool.call_id":
				return calls[e.Event][i]
			case "workflow.last_message":
				return ClaudeMatrixFinal
			case "workflow.already_continued":
				return "false"
			case "session.end_reason":
				return "other" // a headless run that ended normally (finding 7)
			}
			return ""
		}
		projects := filepath.Join(w.Home, ".claude", "projects")
		var transcript string
		for _, e := range ClaudeMatrixEvents {
			n := 1
			if cs := calls[e.Event]; cs != nil {
				n = len(cs)
			}
			for i, got := range matrixBound(w, c, "f-"+e.Event, e, n, claudeKeys) {
				for f, v := range got {
					bad := ""
					switch f {
					case "session.id":
						if v == "" || v != sid {
							bad = "the session id the stream names, " + sid
						}
					case "session.cwd":
						if !SamePath(v, w.Work) {
							bad = "the project dir " + w.Work
						}
					case "transcript.path":
						if transcript == "" {
							transcript = v
						}
						if v != transcript || filepath.Dir(filepath.Dir(v)) != projects || filepath.Base(v) != sid+".jsonl" {
							bad = "one path " + filepath.Join(projects, "<project>", sid+".jsonl")
						}
					default:
						if v != want(f, e, i) {
							bad = want(f, e, i)
						}
					}
					if bad != "" {
						c.Failf("%s run %d: bound %s = %q, want %s", e.Event, i, f, v, bad)
					}
				}
			}
		}
		// The transcript is the one Claude Code wrote for this session.
		if b, err := os.ReadFile(transcript); err != nil || !strings.Contains(string(b), "cm-fields-prompt") {
			c.Failf("transcript.path %q: the file does not hold the session's prompt (%v)", transcript, err)
		}
		claudeUnchanged(w, c, s, prompt)
		return nil
	},
}

// matrixBound returns, for each of the want runs of the observer id of
// event e, the value bound to each of e's fields, checking that there were
// want runs and that each value is the one of the payload key keys names.
func matrixBound(w *World, c *Check, id string, e MatrixEvent, want int, keys map[string]string) []map[string]string {
	runs := w.MatrixRuns(id)
	payloads, bad := w.MatrixPayloads(id)
	for _, b := range bad {
		c.Failf("hook %s: stdin %s is not the native payload", id, b)
	}
	if len(runs) != want || len(payloads) != want {
		c.Failf("%s observer: %d runs (%d payloads), want %d", e.Event, len(runs), len(payloads), want)
		return nil
	}
	var out []map[string]string
	for i, argv := range runs {
		if len(argv) != len(e.Fields) {
			c.Failf("%s observer run %d: argv %q, want one value per field %q", e.Event, i, argv, e.Fields)
			out = append(out, nil)
			continue
		}
		got := map[string]string{}
		for j, f := range e.Fields {
			got[f] = argv[j]
			// The table's key: the bound value is the payload's.
			if pv, ok := payloads[i][keys[f]]; !ok || fmt.Sprint(pv) != argv[j] {
				c.Failf("%s %s = %q, payload %s = %v (present %v)", e.Event, f, argv[j], keys[f], pv, ok)
			}
		}
		out = append(out, got)
	}
	return out
}

// claudeEffects are the effects each row admits (cue/provider.cue
// #Combinations, the rows of the Claude table).
var claudeEffects = map[string][]string{
	"SessionStart":       {plan.EffectObserve, plan.EffectAddContext},
	"UserPromptSubmit":   {plan.EffectObserve, plan.EffectAddContext, plan.EffectGate},
	"PreToolUse":         {plan.EffectObserve, plan.EffectAddContext, plan.EffectGate, plan.EffectRewriteInput},
	"PostToolUse":        {plan.EffectObserve, plan.EffectAddContext, plan.EffectReplaceOutput},
	"PostToolUseFailure": {plan.EffectObserve, plan.EffectAddContext},
	"Stop":               {plan.EffectObserve, plan.EffectContinueWorkflow},
	"SessionEnd":         {plan.EffectObserve},
}

// claudeNothing runs a session in which a hook of every effect of every
// row abstains, and a gate before the prompt and one before each tool call
// allows: each handler ran, and the session went on exactly as without
// hooks (claudeUnchanged): abstain and allow print nothing, and a portable
// allow grants nothing, so Claude's ordinary permission flow ran the
// allowed command.
var claudeNothing = &Scenario{
	Name: "claude-nothing", Test: "TestMatrixClaude/outputs_nothing", Harnesses: []string{"claude"},
	Script: ClaudeMatrixScript,
	Play: func(w *World, c *Check) error {
		var hooks []MatrixHook
		runs := map[string]int{}
		for _, e := range ClaudeMatrixEvents {
			n := 1
			if e.Event == "PreToolUse" {
				n = 2
			}
			for _, eff := range claudeEffects[e.Event] {
				h := MatrixHook{ID: "abstain-" + e.Event + "-" + eff, Subject: e.Subject, Phase: e.Phase, Effect: eff,
					Policy: plan.PolicyReport, Visibility: plan.VisibilityUser, Tools: e.Tools, Result: `{"kind":"abstain"}`}
				hooks = append(hooks, h)
				runs[h.ID] = n
				if eff == plan.EffectGate {
					h.ID, h.Result = "allow-"+e.Event, `{"kind":"allow"}`
					hooks = append(hooks, h)
					runs[h.ID] = n
				}
			}
		}
		const prompt = "Run the matrix commands, cm-nothing-prompt."
		s, ok, err := runMatrix(w, c, ClaudeMatrixID, ClaudeMatrixPkg, ClaudeMatrixFiles(hooks), prompt)
		if !ok {
			return err
		}
		for _, h := range hooks {
			if got := len(w.MatrixRuns(h.ID)); got != runs[h.ID] {
				c.Failf("hook %s ran %d times, want %d", h.ID, got, runs[h.ID])
			}
		}
		claudeUnchanged(w, c, s, prompt)
		return nil
	},
}
