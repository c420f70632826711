package scenario

import "dalo/plan"

// The probe kit: a second author source for the effects, bindings,
// failure visibilities, runtimes and matchers the live kit does not cover.
// Its tests install it alone, so that none of the live kit's hooks (its
// deny, its continuation) is in the way. As in the live kit, a handler that
// must act on one scripted call matches the native payload on stdin and
// abstains otherwise; each one that fails exits with its own status, so
// that the diagnostic the model reads names the hook that failed.
const (
	ProbeID  = "probe"
	ProbePkg = "probe-kit"

	MarkStartContext = "PROBE-START-CONTEXT-13ab"
	MarkPreContext   = "PROBE-PRE-CONTEXT-5e7c"
	MarkPostContext  = "PROBE-POST-CONTEXT-b2d4"
	MarkNodeContext  = "PROBE-NODE-CONTEXT-80f1"
	MarkFileDeny     = "PROBE-FILE-DENY-4c6e"
	MarkProbeStderr  = "PROBE-HANDLER-STDERR-9a0d"
	MarkUserStderr   = "PROBE-USER-STDERR-e3f5"
)

// probeHooks is the probe kit's hooks, each with a tool of the same id:
// tools is the matcher's tool names, comma-separated ("" for none); env the
// variables the tool declares beside PATH; inputs each name=type=field, an
// input bound to an event field. Every handler is <id>.sh but
// node-context's, which runs under node.
var probeHooks = []struct {
	id, subject, phase, effect, policy, visibility, tools string
	argv, env                                             []string
	inputs                                                []string
}{
	{id: "start-context", subject: plan.SubjectSession, phase: plan.PhaseStart, effect: plan.EffectAddContext, policy: plan.PolicyReport, visibility: plan.VisibilityUser},
	{id: "start-report", subject: plan.SubjectSession, phase: plan.PhaseStart, effect: plan.EffectObserve, policy: plan.PolicyReport, visibility: plan.VisibilityModelAndUser,
		argv: []string{"${input.cwd}"}, inputs: []string{"cwd=path=session.cwd"}},
	{id: "prompt-observe", subject: plan.SubjectPrompt, phase: plan.PhaseBefore, effect: plan.EffectObserve, policy: plan.PolicyReport, visibility: plan.VisibilityUser,
		argv: []string{"${input.text}", "${input.mode}"}, env: []string{"LIVE_OUT"},
		inputs: []string{"text=string=prompt.text", "mode=string=session.permission_mode"}},
	{id: "prompt-report", subject: plan.SubjectPrompt, phase: plan.PhaseBefore, effect: plan.EffectObserve, policy: plan.PolicyReport, visibility: plan.VisibilityModelAndUser},
	{id: "node-context", subject: plan.SubjectPrompt, phase: plan.PhaseBefore, effect: plan.EffectAddContext, policy: plan.PolicyReport, visibility: plan.VisibilityUser,
		env: []string{"LIVE_OUT"}},
	{id: "pre-observe", subject: plan.SubjectToolCall, phase: plan.PhaseBefore, effect: plan.EffectObserve, policy: plan.PolicyReport, visibility: plan.VisibilityUser, tools: "Bash",
		argv: []string{"${input.tool}", "${input.call}"}, env: []string{"LIVE_OUT"},
		inputs: []string{"tool=string=tool.name", "call=string=tool.call_id"}},
	{id: "pre-context", subject: plan.SubjectToolCall, phase: plan.PhaseBefore, effect: plan.EffectAddContext, policy: plan.PolicyReport, visibility: plan.VisibilityUser, tools: "Bash"},
	{id: "pre-open", subject: plan.SubjectToolCall, phase: plan.PhaseBefore, effect: plan.EffectGate, policy: plan.PolicyFailOpen, visibility: plan.VisibilityModelAndUser, tools: "Bash"},
	{id: "pre-closed", subject: plan.SubjectToolCall, phase: plan.PhaseBefore, effect: plan.EffectGate, policy: plan.PolicyFailClosed, visibility: plan.VisibilityModelAndUser, tools: "Bash"},
	{id: "guarded", subject: plan.SubjectToolCall, phase: plan.PhaseBefore, effect: plan.EffectGate, policy: plan.PolicyFailClosed, visibility: plan.VisibilityUser, tools: "Bash",
		env: []string{"LIVE_OUT"}},
	{id: "file-gate", subject: plan.SubjectToolCall, phase: plan.PhaseBefore, effect: plan.EffectGate, policy: plan.PolicyFailClosed, visibility: plan.VisibilityUser, tools: "Write,apply_patch",
		argv: []string{"${input.tool}"}, env: []string{"LIVE_OUT"}, inputs: []string{"tool=string=tool.name"}},
	{id: "post-observe", subject: plan.SubjectToolCall, phase: plan.PhaseAfter, effect: plan.EffectObserve, policy: plan.PolicyReport, visibility: plan.VisibilityUser, tools: "Bash",
		argv: []string{"${input.tool}", "${input.call}"}, env: []string{"LIVE_OUT"},
		inputs: []string{"tool=string=tool.name", "call=string=tool.call_id"}},
	{id: "post-context", subject: plan.SubjectToolCall, phase: plan.PhaseAfter, effect: plan.EffectAddContext, policy: plan.PolicyReport, visibility: plan.VisibilityUser, tools: "Bash"},
	{id: "post-report", subject: plan.SubjectToolCall, phase: plan.PhaseAfter, effect: plan.EffectObserve, policy: plan.PolicyReport, visibility: plan.VisibilityModelAndUser, tools: "Bash"},
	{id: "stop-closed", subject: plan.SubjectWorkflow, phase: plan.PhaseStop, effect: plan.EffectContinueWorkflow, policy: plan.PolicyFailClosed, visibility: plan.VisibilityModelAndUser,
		argv: []string{"${input.cwd}"}, inputs: []string{"cwd=path=session.cwd"}},
}

// The exit status of each failing probe handler.
var ProbeExit = map[string]int{
	"start-report": 15, "prompt-report": 14, "pre-open": 11, "pre-closed": 12, "post-report": 13, "stop-closed": 16,
	"pre-context": 17, "post-context": 18, "prompt-observe": 19,
}

// probeHandlers is each handler's body after "#!/bin/sh".
var probeHandlers = map[string]string{
	"start-context": `echo '{"kind":"add_context","context":"` + MarkStartContext + `"}'`,
	"start-report": `cat > /dev/null
if [ -e "$1/crash-start" ]; then echo '` + MarkProbeStderr + `' >&2; exit 15; fi
echo '{"kind":"observe"}'`,
	"prompt-observe": `printf '%s\n' "$@" > "$LIVE_OUT/prompt.argv"
cat > "$LIVE_OUT/prompt.stdin"
case "$1" in
*prompt-user-crash*) echo '` + MarkUserStderr + `' >&2; exit 19 ;;
esac
echo '{"kind":"observe"}'`,
	"prompt-report": `in=$(cat)
case "$in" in
*prompt-report-crash*) echo '` + MarkProbeStderr + `' >&2; exit 14 ;;
esac
echo '{"kind":"observe"}'`,
	"pre-context": `in=$(cat)
case "$in" in
*pre-ctx*) echo '{"kind":"add_context","context":"` + MarkPreContext + `"}' ;;
*pre-user-crash*) echo '` + MarkUserStderr + `' >&2; exit 17 ;;
*) echo '{"kind":"abstain"}' ;;
esac`,
	"pre-open": `in=$(cat)
case "$in" in
*pre-open-crash*) echo '` + MarkProbeStderr + `' >&2; exit 11 ;;
esac
echo '{"kind":"abstain"}'`,
	"pre-closed": `in=$(cat)
case "$in" in
*pre-closed-crash*) echo '` + MarkProbeStderr + `' >&2; exit 12 ;;
esac
echo '{"kind":"abstain"}'`,
	"guarded": `in=$(cat)
case "$in" in
*"touch guarded"*) echo ran >> "$LIVE_OUT/guarded.ran" ;;
esac
echo '{"kind":"abstain"}'`,
	"file-gate": `echo "$1" >> "$LIVE_OUT/file-gate.argv"
in=$(cat)
case "$in" in
*file-denied*) echo '{"kind":"deny","reason":"` + MarkFileDeny + `"}' ;;
*) echo '{"kind":"abstain"}' ;;
esac`,
	"pre-observe": `printf '%s %s\n' "$1" "$2" >> "$LIVE_OUT/pre.argv"
echo '{"kind":"observe"}'`,
	"post-observe": `printf '%s %s\n' "$1" "$2" >> "$LIVE_OUT/post.argv"
echo '{"kind":"observe"}'`,
	"post-context": `in=$(cat)
case "$in" in
*post-ctx-out*) echo '{"kind":"add_context","context":"` + MarkPostContext + `"}' ;;
*post-user-crash*) echo '` + MarkUserStderr + `' >&2; exit 18 ;;
*) echo '{"kind":"abstain"}' ;;
esac`,
	"post-report": `in=$(cat)
case "$in" in
*post-report-crash*) echo '` + MarkProbeStderr + `' >&2; exit 13 ;;
esac
echo '{"kind":"observe"}'`,
	"stop-closed": `cat > /dev/null
if [ -e "$1/crash-stop" ]; then echo '` + MarkProbeStderr + `' >&2; exit 16; fi
echo '{"kind":"abstain"}'`,
}

// The node handler: runtime node, found on dalo's PATH by dispatch.
const probeNodeHandler = `import { writeFileSync, readFileSync } from "node:fs";
readFileSync(0);
writeFileSync(process.env.LIVE_OUT + "/node.ran", process.version + "\n");
process.stdout.write(JSON.stringify({kind: "add_context", context: "` + MarkNodeContext + `"}));
`

// ProbeFiles returns the probe kit's author source.
func ProbeFiles() map[string]string {
	k := Kit{Name: ProbePkg, Description: "Probes of effects, bindings, failures, runtimes and matchers."}
	for _, h := range probeHooks {
		kh := KitHook{ID: h.id, Subject: h.subject, Phase: h.phase, Effect: h.effect, Policy: h.policy, Visibility: h.visibility,
			Tools: ToolList(h.tools), Inputs: h.inputs, Argv: h.argv, Env: append([]string{"PATH"}, h.env...),
			Handler: "#!/bin/sh\n" + probeHandlers[h.id] + "\n"}
		if kh.Argv == nil {
			kh.Argv = []string{}
		}
		if h.id == "node-context" {
			kh.Runtime, kh.Entry, kh.Env, kh.Handler = plan.RuntimeNode, h.id+".mjs", h.env, probeNodeHandler
		}
		k.Hooks = append(k.Hooks, kh)
	}
	return k.Files()
}
