package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"dalo/plan"
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
		answer = plan.KindAbstain
	}
	if answer == plan.KindDeny {
		b.WriteString(`case "$in" in *mxc-denied*) echo '{"kind":"deny","reason":"` + CodexPatchDeny + `"}'; exit 0 ;; esac` + "\n")
		answer = plan.KindAbstain
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
	{ID: "start-fields", Subject: plan.SubjectSession, Phase: plan.PhaseStart, Effect: plan.EffectObserve, Inputs: codexCommon, Answer: plan.KindObserve},
	{ID: "prompt-fields", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectObserve,
		Inputs: append(append([]string{}, codexCommon...), "mode=string=session.permission_mode", "text=string=prompt.text"), Answer: plan.KindObserve},
	{ID: "pre-fields", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectObserve, Tools: "Bash", Inputs: codexTool, Answer: plan.KindObserve},
	{ID: "post-fields", Subject: plan.SubjectToolCall, Phase: plan.PhaseAfter, Effect: plan.EffectObserve, Tools: "Bash", Inputs: codexTool, Answer: plan.KindObserve},
	{ID: "stop-fields", Subject: plan.SubjectWorkflow, Phase: plan.PhaseStop, Effect: plan.EffectObserve,
		Inputs: append(append([]string{}, codexCommon...), "mode=string=session.permission_mode",
			"last=string=workflow.last_message", "again=boolean=workflow.already_continued"), Answer: plan.KindObserve},
	{ID: "end-fields", Subject: plan.SubjectSession, Phase: plan.PhaseEnd, Effect: plan.EffectObserve,
		Inputs: append(append([]string{}, codexCommon...), "reason=string=session.end_reason"), Answer: plan.KindObserve},
}

var codexNothingHooks = []CodexMatrixHook{
	{ID: "start-observe-abstain", Subject: plan.SubjectSession, Phase: plan.PhaseStart, Effect: plan.EffectObserve, Answer: plan.KindAbstain},
	{ID: "start-context-abstain", Subject: plan.SubjectSession, Phase: plan.PhaseStart, Effect: plan.EffectAddContext, Answer: plan.KindAbstain},
	{ID: "end-observe-abstain", Subject: plan.SubjectSession, Phase: plan.PhaseEnd, Effect: plan.EffectObserve, Answer: plan.KindAbstain},
	{ID: "prompt-observe-abstain", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectObserve, Answer: plan.KindAbstain},
	{ID: "prompt-context-abstain", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectAddContext, Answer: plan.KindAbstain},
	{ID: "prompt-gate-abstain", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Answer: plan.KindAbstain},
	{ID: "prompt-gate-allow", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Answer: plan.KindAllow},
	{ID: "pre-observe-abstain", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectObserve, Tools: "Bash", Answer: plan.KindAbstain},
	{ID: "pre-context-abstain", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectAddContext, Tools: "Bash", Answer: plan.KindAbstain},
	{ID: "pre-gate-allow", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Tools: "Bash", Answer: plan.KindAllow},
	{ID: "post-observe-abstain", Subject: plan.SubjectToolCall, Phase: plan.PhaseAfter, Effect: plan.EffectObserve, Tools: "Bash", Answer: plan.KindAbstain},
	{ID: "post-context-abstain", Subject: plan.SubjectToolCall, Phase: plan.PhaseAfter, Effect: plan.EffectAddContext, Tools: "Bash", Answer: plan.KindAbstain},
	{ID: "stop-observe-abstain", Subject: plan.SubjectWorkflow, Phase: plan.PhaseStop, Effect: plan.EffectObserve, Answer: plan.KindAbstain},
}

// codexFailHooks fail under each policy and visibility the table promises
// on a row where no other scenario makes them fail; each exits with its
// own status, so that a diagnostic names the hook that failed.
var codexFailHooks = []CodexMatrixHook{
	{ID: "start-open-user", Subject: plan.SubjectSession, Phase: plan.PhaseStart, Effect: plan.EffectAddContext, Policy: plan.PolicyFailOpen, Visibility: plan.VisibilityUser, Crash: "*", Exit: 21},
	{ID: "start-report-user", Subject: plan.SubjectSession, Phase: plan.PhaseStart, Effect: plan.EffectObserve, Policy: plan.PolicyReport, Visibility: plan.VisibilityUser, Crash: "*", Exit: 22},
	{ID: "start-open-model", Subject: plan.SubjectSession, Phase: plan.PhaseStart, Effect: plan.EffectAddContext, Policy: plan.PolicyFailOpen, Visibility: plan.VisibilityModelAndUser, Crash: "*", Exit: 23},
	{ID: "prompt-open-user", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectAddContext, Policy: plan.PolicyFailOpen, Visibility: plan.VisibilityUser, Crash: "mxc-prompt-crash", Exit: 24},
	{ID: "prompt-open-model", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectAddContext, Policy: plan.PolicyFailOpen, Visibility: plan.VisibilityModelAndUser, Crash: "mxc-prompt-crash", Exit: 25},
	{ID: "prompt-closed-model", Subject: plan.SubjectPrompt, Phase: plan.PhaseBefore, Effect: plan.EffectGate, Policy: plan.PolicyFailClosed, Visibility: plan.VisibilityModelAndUser, Crash: "mxc-prompt-closed-crash", Exit: 26},
	{ID: "pre-report-model", Subject: plan.SubjectToolCall, Phase: plan.PhaseBefore, Effect: plan.EffectObserve, Policy: plan.PolicyReport, Visibility: plan.VisibilityModelAndUser, Tools: "Bash", Crash: "mxc-pre-crash", Exit: 27},
	{ID: "post-open-user", Subject: plan.SubjectToolCall, Phase: plan.PhaseAfter, Effect: plan.EffectAddContext, Policy: plan.PolicyFailOpen, Visibility: plan.VisibilityUser, Tools: "Bash", Crash: "mxc-post-crash", Exit: 28},
	{ID: "post-open-model", Subject: plan.SubjectToolCall, Phase: plan.PhaseAfter, Effect: plan.EffectAddContext, Policy: plan.PolicyFailOpen, Visibility: plan.VisibilityModelAndUser, Tools: "Bash", Crash: "mxc-post-crash", Exit: 29},
	{ID: "stop-open-user", Subject: plan.SubjectWorkflow, Phase: plan.PhaseStop, Effect: plan.EffectContinueWorkflow, Policy: plan.PolicyFailOpen, Visibility: plan.VisibilityUser, Crash: "*", Exit: 30},
	{ID: "stop-report-user", Subject: plan.SubjectWorkflow, Phase: plan.PhaseStop, Effect: plan.EffectObserve, Policy: plan.PolicyReport, Visibility: plan.VisibilityUser, Crash: "*", Exit: 31},
	{ID: "end-report-user", Subject: plan.SubjectSession, Phase: plan.PhaseEnd, Effect: plan.EffectObserve, Policy: plan.PolicyReport, Visibility: plan.VisibilityUser, Crash: "*", Exit: 32},
}
