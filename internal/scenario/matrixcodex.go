package scenario

import (
	"fmt"
	"strconv"
	"strings"
)

// The Codex matrix kit: one hook per claim of the Codex table that the
// live and probe kits leave to a recording, a finding or documentation:
// every payload field bound on every event, outputs that print nothing on
// each row, failures shown to the user only on each row. Every handler
// records its bound inputs (one line a run, the arguments tab-separated)
// and its stdin in $LIVE_OUT, then fails when its stdin holds its crash
// word ("*" for every run), or answers its kind.
const (
	CodexMatrixID     = "mxc"
	CodexMatrixPkg    = "mxc-kit"
	CodexMatrixStderr = "MXC-HANDLER-STDERR-71d0"
	CodexMatrixFinal  = "MXC-FINAL-ANSWER-3e58"
	CodexPatchDeny    = "MXC-PATCH-DENY-a41f"
)

// A CodexMatrixHook is one hook of the Codex matrix kit and its handler
// (policy report, visibility user and a 5 s timeout unless set): Inputs
// are name=type=field, each passed as an argument in order; Crash is the
// word on stdin that makes the handler exit with status Exit; Answer is
// the result kind it answers otherwise ("deny" with CodexPatchDeny as
// reason when stdin holds "mxc-denied").
type CodexMatrixHook struct {
	ID, Subject, Phase, Effect, Policy, Visibility, Tools string
	Inputs                                                []string
	Crash                                                 string
	Exit                                                  int
	Answer                                                string
	TimeoutMS                                             int
	// Sleep makes the handler sleep that many seconds between writing
	// <id>.begin and <id>.end.
	Sleep int
}

// handler returns h's handler script.
func (h CodexMatrixHook) handler() string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	b.WriteString(`out="$LIVE_OUT/` + h.ID + `"` + "\n")
	b.WriteString(`for a in "$@"; do printf '%s\t' "$a"; done >> "$out.argv"; echo >> "$out.argv"` + "\n")
	b.WriteString(`in=$(cat); printf '%s\n' "$in" >> "$out.stdin"` + "\n")
	if h.Sleep > 0 {
		fmt.Fprintf(&b, "echo begin > \"$out.begin\"\nsleep %d\necho end > \"$out.end\"\n", h.Sleep)
	}
	switch h.Crash {
	case "":
	case "*":
		fmt.Fprintf(&b, "echo '%s' >&2; exit %d\n", CodexMatrixStderr, h.Exit)
	default:
		fmt.Fprintf(&b, "case \"$in\" in *%s*) echo '%s' >&2; exit %d ;; esac\n", h.Crash, CodexMatrixStderr, h.Exit)
	}
	answer := h.Answer
	if answer == "" {
		answer = "abstain"
	}
	if answer == "deny" {
		b.WriteString(`case "$in" in *mxc-denied*) echo '{"kind":"deny","reason":"` + CodexPatchDeny + `"}'; exit 0 ;; esac` + "\n")
		answer = "abstain"
	}
	b.WriteString(`echo '{"kind":"` + answer + `"}'` + "\n")
	return b.String()
}

// CodexMatrixFiles returns the Codex matrix kit's author source with hooks.
func CodexMatrixFiles(hooks ...CodexMatrixHook) map[string]string {
	k := Kit{Name: CodexMatrixPkg, Description: "One hook per claim of the Codex table a live run had not proved."}
	for _, h := range hooks {
		k.Hooks = append(k.Hooks, KitHook{ID: h.ID, Subject: h.Subject, Phase: h.Phase, Effect: h.Effect,
			Policy: h.Policy, Visibility: h.Visibility, TimeoutMS: h.TimeoutMS, Tools: ToolList(h.Tools),
			Inputs: h.Inputs, Env: []string{"PATH", "LIVE_OUT"}, Handler: h.handler()})
	}
	return k.Files()
}

// CodexMatrixRuns returns the bound inputs of each run of Codex matrix
// hook id, in order.
func (w *World) CodexMatrixRuns(id string) [][]string {
	out := w.Output(id + ".argv")
	if out == "" {
		return nil
	}
	var runs [][]string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		runs = append(runs, strings.Split(strings.TrimSuffix(line, "\t"), "\t"))
	}
	return runs
}

// codexDiag is the diagnostic dalo shows the user when hook h fails.
func codexDiag(h CodexMatrixHook) string {
	return "dalo: hook " + CodexMatrixID + ":" + CodexMatrixPkg + "/" + h.ID + " failed (" + h.Policy + "): handler exited with status " + strconv.Itoa(h.Exit)
}

// codexModelDiag is how the model reads hook h's diagnostic.
func codexModelDiag(h CodexMatrixHook) string {
	return "[" + CodexMatrixID + ":" + CodexMatrixPkg + "/" + h.ID + "] This hook failed: "
}

var (
	codexCommon = []string{"id=string=session.id", "cwd=path=session.cwd", "tp=path=transcript.path"}
	codexTool   = append(append([]string{}, codexCommon...), "mode=string=session.permission_mode", "tool=string=tool.name", "call=string=tool.call_id")
)

// codexFieldHooks bind every field the table declares for each native
// event (SessionStart's permission_mode is not bindable on session/start:
// the handler's stdin shows it) and answer observe; codexNothingHooks
// answer abstain or allow on each row and effect that prints nothing.
var codexFieldHooks = []CodexMatrixHook{
	{ID: "start-fields", Subject: "session", Phase: "start", Effect: "observe", Inputs: codexCommon, Answer: "observe"},
	{ID: "prompt-fields", Subject: "prompt", Phase: "before", Effect: "observe",
		Inputs: append(append([]string{}, codexCommon...), "mode=string=session.permission_mode", "text=string=prompt.text"), Answer: "observe"},
	{ID: "pre-fields", Subject: "tool_call", Phase: "before", Effect: "observe", Tools: "Bash", Inputs: codexTool, Answer: "observe"},
	{ID: "post-fields", Subject: "tool_call", Phase: "after", Effect: "observe", Tools: "Bash", Inputs: codexTool, Answer: "observe"},
	{ID: "stop-fields", Subject: "workflow", Phase: "stop", Effect: "observe",
		Inputs: append(append([]string{}, codexCommon...), "mode=string=session.permission_mode",
			"last=string=workflow.last_message", "again=boolean=workflow.already_continued"), Answer: "observe"},
	{ID: "end-fields", Subject: "session", Phase: "end", Effect: "observe",
		Inputs: append(append([]string{}, codexCommon...), "reason=string=session.end_reason"), Answer: "observe"},
}

var codexNothingHooks = []CodexMatrixHook{
	{ID: "start-observe-abstain", Subject: "session", Phase: "start", Effect: "observe", Answer: "abstain"},
	{ID: "start-context-abstain", Subject: "session", Phase: "start", Effect: "add_context", Answer: "abstain"},
	{ID: "end-observe-abstain", Subject: "session", Phase: "end", Effect: "observe", Answer: "abstain"},
	{ID: "prompt-observe-abstain", Subject: "prompt", Phase: "before", Effect: "observe", Answer: "abstain"},
	{ID: "prompt-context-abstain", Subject: "prompt", Phase: "before", Effect: "add_context", Answer: "abstain"},
	{ID: "prompt-gate-abstain", Subject: "prompt", Phase: "before", Effect: "gate", Answer: "abstain"},
	{ID: "prompt-gate-allow", Subject: "prompt", Phase: "before", Effect: "gate", Answer: "allow"},
	{ID: "pre-observe-abstain", Subject: "tool_call", Phase: "before", Effect: "observe", Tools: "Bash", Answer: "abstain"},
	{ID: "pre-context-abstain", Subject: "tool_call", Phase: "before", Effect: "add_context", Tools: "Bash", Answer: "abstain"},
	{ID: "pre-gate-allow", Subject: "tool_call", Phase: "before", Effect: "gate", Tools: "Bash", Answer: "allow"},
	{ID: "post-observe-abstain", Subject: "tool_call", Phase: "after", Effect: "observe", Tools: "Bash", Answer: "abstain"},
	{ID: "post-context-abstain", Subject: "tool_call", Phase: "after", Effect: "add_context", Tools: "Bash", Answer: "abstain"},
	{ID: "stop-observe-abstain", Subject: "workflow", Phase: "stop", Effect: "observe", Answer: "abstain"},
}

// codexFailHooks fail under each policy and visibility the table promises
// on a row where no other scenario makes them fail; each exits with its
// own status, so that a diagnostic names the hook that failed.
var codexFailHooks = []CodexMatrixHook{
	{ID: "start-open-user", Subject: "session", Phase: "start", Effect: "add_context", Policy: "fail_open", Visibility: "user", Crash: "*", Exit: 21},
	{ID: "start-report-user", Subject: "session", Phase: "start", Effect: "observe", Policy: "report", Visibility: "user", Crash: "*", Exit: 22},
	{ID: "start-open-model", Subject: "session", Phase: "start", Effect: "add_context", Policy: "fail_open", Visibility: "model_and_user", Crash: "*", Exit: 23},
	{ID: "prompt-open-user", Subject: "prompt", Phase: "before", Effect: "add_context", Policy: "fail_open", Visibility: "user", Crash: "mxc-prompt-crash", Exit: 24},
	{ID: "prompt-open-model", Subject: "prompt", Phase: "before", Effect: "add_context", Policy: "fail_open", Visibility: "model_and_user", Crash: "mxc-prompt-crash", Exit: 25},
	{ID: "prompt-closed-model", Subject: "prompt", Phase: "before", Effect: "gate", Policy: "fail_closed", Visibility: "model_and_user", Crash: "mxc-prompt-closed-crash", Exit: 26},
	{ID: "pre-report-model", Subject: "tool_call", Phase: "before", Effect: "observe", Policy: "report", Visibility: "model_and_user", Tools: "Bash", Crash: "mxc-pre-crash", Exit: 27},
	{ID: "post-open-user", Subject: "tool_call", Phase: "after", Effect: "add_context", Policy: "fail_open", Visibility: "user", Tools: "Bash", Crash: "mxc-post-crash", Exit: 28},
	{ID: "post-open-model", Subject: "tool_call", Phase: "after", Effect: "add_context", Policy: "fail_open", Visibility: "model_and_user", Tools: "Bash", Crash: "mxc-post-crash", Exit: 29},
	{ID: "stop-open-user", Subject: "workflow", Phase: "stop", Effect: "continue_workflow", Policy: "fail_open", Visibility: "user", Crash: "*", Exit: 30},
	{ID: "stop-report-user", Subject: "workflow", Phase: "stop", Effect: "observe", Policy: "report", Visibility: "user", Crash: "*", Exit: 31},
	{ID: "end-report-user", Subject: "session", Phase: "end", Effect: "observe", Policy: "report", Visibility: "user", Crash: "*", Exit: 32},
}
