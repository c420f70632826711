package scenario

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"dalo/internal/fakemodel"
	"dalo/plan"
)

// Markers of the Claude matrix's tool scenario: the web gates' deny
// reason, and the source the notebook edit writes.
const (
	claudeWebDeny     = "CM-WEB-DENY-f27a"
	claudeNotebookOut = "CM-NOTEBOOK-CELL-84c0"
)

// claudeNotebook is a notebook of one code cell.
const claudeNotebook = `{"cells": [{"cell_type": "code", "execution_count": null, "id": "cell-1", "metadata": {}, "outputs": [], "source": ["print(1)"]}],
 "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
`

// claudeNativeTools runs a session whose model calls NotebookEdit,
// WebFetch and WebSearch, each gated by a fail_closed gate whose matcher
// names exactly that tool and which binds tool.name: each gate runs on its
// tool's call alone, given that name. The notebook edit is let through
// and changes the notebook; the web calls are denied, so nothing leaves
// the machine, and the model reads the reason as their result.
var claudeNativeTools = &Scenario{
	Name: "claude-native-tools", Test: "TestMatrixClaude/native_tools", Harnesses: []string{"claude"},
	Script: func(w *World) fakemodel.Script {
		nb := filepath.Join(w.Work, "cm.ipynb")
		return fakemodel.Script{
			{Tool: "Read", Input: map[string]any{"file_path": nb}},
			{Tool: "NotebookEdit", Input: map[string]any{"notebook_path": nb, "cell_id": "cell-1", "new_source": "print('" + claudeNotebookOut + "')"}},
			{Tool: "WebFetch", Input: map[string]any{"url": "https://example.com/cm-matrix", "prompt": "Summarize the page."}},
			{Tool: "WebSearch", Input: map[string]any{"query": "cm matrix probe"}},
			fakemodel.Say(ClaudeMatrixFinal),
		}
	},
	Play: func(w *World, c *Check) error {
		w.AllowedTools = "Read,NotebookEdit,WebFetch,WebSearch"
		if err := w.WriteFile(filepath.Join(w.Work, "cm.ipynb"), claudeNotebook); err != nil {
			return err
		}
		tools := []string{"NotebookEdit", "WebFetch", "WebSearch"}
		var hooks []MatrixHook
		for _, tool := range tools {
			result := `{"kind":"abstain"}`
			if tool != "NotebookEdit" {
				result = `{"kind":"deny","reason":"` + claudeWebDeny + `"}`
			}
			hooks = append(hooks, MatrixHook{ID: "gate-" + tool, Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectGate,
				Policy: plan.PolicyFailClosed, Visibility: plan.VisibilityUser, Tools: tool, Fields: []string{"tool.name"}, Result: result})
		}
		if _, ok, err := installAndRun(w, c, ClaudeMatrixFiles(hooks), "Use the tools you are given."); !ok {
			return err
		}
		for i, tool := range tools {
			runs, payloads := w.MatrixRuns("gate-"+tool), w.matrixPayloads(c, "gate-"+tool)
			if len(runs) != 1 || len(runs[0]) != 1 || runs[0][0] != tool || len(payloads) != 1 || payloads[0]["tool_name"] != tool {
				c.Failf("%s gate: runs (bound tool.name) %q, want one run given %q", tool, runs, tool)
				continue
			}
			if got := payloads[0]["tool_use_id"]; got != CallID("claude", i+1) {
				c.Failf("%s gate: tool_use_id %v, want %s", tool, got, CallID("claude", i+1))
			}
		}
		b, _ := os.ReadFile(filepath.Join(w.Work, "cm.ipynb"))
		if !strings.Contains(string(b), claudeNotebookOut) {
			c.Failf("NotebookEdit let through: the notebook is %q, want the new cell source", b)
		}
		for i, tool := range tools[1:] {
			if got := ToolResult(w.Server, CallID("claude", i+2)); !strings.Contains(got, claudeWebDeny) {
				c.Failf("%s denied: its result %q does not hold the reason %s", tool, got, claudeWebDeny)
			}
		}
		return nil
	},
}

// installAndRun installs the Claude matrix kit files and runs prompt in a
// session, as the live suite's matrix tests did (no stream), failing c
// when the session fails; ok says it ran.
func installAndRun(w *World, c *Check, files map[string]string, prompt string) (s Session, ok bool, err error) {
	if _, err := w.InstallSource(ClaudeMatrixID, ClaudeMatrixPkg, files); err != nil {
		return Session{}, false, err
	}
	s, err = w.Run(prompt)
	c.Session = s
	if err != nil {
		c.Failf("the session failed: %v", err)
		return s, false, nil
	}
	return s, true, nil
}

// matrixPayloads is MatrixPayloads, each line that is not a payload a
// failed check.
func (w *World) matrixPayloads(c *Check, id string) []map[string]any {
	ps, bad := w.MatrixPayloads(id)
	for _, b := range bad {
		c.Failf("hook %s: stdin %s is not the native payload", id, b)
	}
	return ps
}

// claudeActor runs a session whose model starts a subagent (an agent file
// offering it Bash alone) in the foreground; the subagent runs a command
// that succeeds and one that fails, as the main agent does after it.
// Observers on the tool events bind actor.kind and actor.id: inside the
// subagent they are "subagent" and the payload's agent_id (the table's
// actor key), beside an agent_type naming the agent; in the main agent
// both are "main" and the payload has no agent_id. Observers on the other
// events, which fire in the main agent only, are given "main".
var claudeActor = &Scenario{
	Name: "claude-actor", Test: "TestMatrixClaude/actor", Harnesses: []string{"claude"},
	Script: func(*World) fakemodel.Script {
		return fakemodel.Script{
			// The main agent starts the subagent; the subagent, offered
			// no Agent tool, is answered an error for this step, then
			// runs the next two, as the main agent does once it returns.
			{Tool: "Agent", Input: map[string]any{"description": "Matrix probe", "prompt": "Run the probe commands.",
				"subagent_type": "cm-probe", "run_in_background": false}},
			fakemodel.Run("echo cm-out-$((6*7)); touch cm-ran"),
			fakemodel.Run("exit 7"),
			fakemodel.Say(ClaudeMatrixFinal),
		}
	},
	Play: func(w *World, c *Check) error {
		w.AllowedTools = "Bash,Agent"
		if err := w.WriteFile(filepath.Join(w.ConfigHome(), "agents", "cm-probe.md"),
			"---\nname: cm-probe\ndescription: Runs the matrix probe commands.\ntools: Bash\n---\nRun the commands you are given.\n"); err != nil {
			return err
		}
		var hooks []MatrixHook
		for _, e := range ClaudeMatrixEvents {
			fields := []string{"actor.kind", "actor.id"}
			if e.Tools != "" {
				fields = append(fields, "tool.call_id")
			}
			hooks = append(hooks, MatrixHook{ID: "actor-" + e.Event, Subject: e.Subject, Phase: e.Phase, Effect: plan.EffectObserve,
				Policy: plan.PolicyReport, Visibility: plan.VisibilityUser, Fields: fields, Result: `{"kind":"observe"}`})
		}
		if _, ok, err := installAndRun(w, c, ClaudeMatrixFiles(hooks), "Start the matrix probe agent."); !ok {
			return err
		}
		agent := claudeActorRuns(w, c)
		if agent == "" {
			c.Failf("no hook ran inside the subagent")
		}
		if got := ToolResult(w.Server, CallID("claude", 0)); !strings.Contains(got, ClaudeMatrixFinal) {
			c.Failf("the subagent's answer %q did not reach the main agent as the Agent result", got)
		}
		return nil
	},
}

// claudeActorRuns checks the runs of claudeActor's observers and returns
// the subagent's actor.id, "" when no hook ran inside it.
func claudeActorRuns(w *World, c *Check) string {
	// The calls each agent makes, by event, "<kind> <call id>".
	want := map[string][]string{
		"PreToolUse":         {"main toolu_fake_0", "main toolu_fake_1", "main toolu_fake_2", "subagent toolu_fake_1", "subagent toolu_fake_2"},
		"PostToolUse":        {"main toolu_fake_0", "main toolu_fake_1", "subagent toolu_fake_1"},
		"PostToolUseFailure": {"main toolu_fake_2", "subagent toolu_fake_2"},
	}
	agent := ""
	for _, e := range ClaudeMatrixEvents {
		id := "actor-" + e.Event
		runs, payloads := w.MatrixRuns(id), w.matrixPayloads(c, id)
		if len(runs) == 0 || len(runs) != len(payloads) {
			c.Failf("%s observer: %d runs, %d payloads; want at least one each, as many", e.Event, len(runs), len(payloads))
			continue
		}
		// The events other than the tool events fire in the main agent
		// only (the table gives them no actor key): once each.
		if e.Tools == "" && len(runs) != 1 {
			c.Failf("%s observer: %d runs, want 1: it fires in the main agent only", e.Event, len(runs))
		}
		var got []string
		for i, argv := range runs {
			if len(argv) < 2 {
				c.Failf("%s observer run %d: argv %q", e.Event, i, argv)
				continue
			}
			kind, aid := argv[0], argv[1]
			pid, has := payloads[i]["agent_id"].(string)
			switch {
			case kind == "main" && aid == "main" && !has:
			case kind == "subagent" && has && aid == pid && aid != "" && payloads[i]["agent_type"] == "cm-probe":
				if agent == "" {
					agent = aid
				}
				if aid != agent {
					c.Failf("%s: actor.id %q, want the one subagent's %q", e.Event, aid, agent)
				}
			default:
				c.Failf("%s run %d: actor.kind %q, actor.id %q with payload agent_id %q (present %v), agent_type %v",
					e.Event, i, kind, aid, pid, has, payloads[i]["agent_type"])
			}
			if e.Tools != "" && len(argv) == 3 {
				got = append(got, kind+" "+argv[2])
			}
		}
		if e.Tools != "" {
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(want[e.Event], ",") {
				c.Failf("%s runs (actor.kind, tool.call_id) = %q, want %q", e.Event, got, want[e.Event])
			}
		}
	}
	return agent
}

// claudePromptClosed runs a session whose fail_closed prompt gate with
// error_visibility model_and_user crashes: the prompt is erased and the
// model is never asked; the user is shown the diagnostic as the block
// reason, a warning.
var claudePromptClosed = &Scenario{
	Name: "claude-prompt-closed", Test: "TestMatrixClaude/prompt_fail_closed", Harnesses: []string{"claude"},
	Script: ClaudeMatrixScript,
	Play: func(w *World, c *Check) error {
		w.StreamJSON = true
		if _, err := w.InstallSource(ClaudeMatrixID, ClaudeMatrixPkg, ClaudeMatrixFiles([]MatrixHook{{ID: "prompt-closed", Subject: plan.SubjectPrompt,
			Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailClosed, Visibility: plan.VisibilityModelAndUser, Exit: 41}})); err != nil {
			return err
		}
		s, err := w.Run("Run the matrix commands, cm-blocked-prompt.")
		c.Session = s
		w.logf("claude exit: %v", err)
		if s.TimedOut {
			c.Failf("the session failed: %v", err)
			return nil
		}
		for _, q := range w.Server.Requests() {
			if q.Method == "POST" {
				c.Failf("blocked prompt: the model was asked (%s %s)", q.Method, q.Path)
				break
			}
		}
		if w.Exists("cm-ran") {
			c.Failf("blocked prompt: the model's command ran")
		}
		diag := "dalo: hook " + ClaudeMatrixID + ":" + ClaudeMatrixPkg + "/prompt-closed failed (fail_closed): handler exited with status 41"
		msgs := UserMessages(s.Stdout)
		m, ok := Shown(msgs, "UserPromptSubmit operation blocked by hook:", diag)
		if !ok || m.Level != "warning" {
			c.Failf("blocked prompt: the user was not shown %q as a warning (found %v: %+v)", diag, ok, msgs)
		} else {
			w.logf("user channel, blocked prompt: %q", m.Text)
		}
		return nil
	},
}
