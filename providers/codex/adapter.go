// Package codex adapts dalo's hook dispatch to Codex's native hook
// protocol, as recorded with Codex 0.147.0 (providers/testdata). Its
// provider table is the CUE file beside this one; this adapter only
// translates payloads and results.
package codex

import (
	"bytes"
	"encoding/json"

	"dalo/dispatch"
)

// Adapter is the dispatch.Adapter of Codex.
type Adapter struct{}

var toolEvents = []string{"PreToolUse", "PostToolUse"}

// fields says where Codex keeps each portable field. Its transcript_path
// may be null (a missing field); shell calls are tool_name "Bash".
var fields = []dispatch.Source{
	{Field: "session.id", Key: "session_id", Type: "string"},
	{Field: "session.cwd", Key: "cwd", Type: "path"},
	{Field: "transcript.path", Key: "transcript_path", Type: "path"},
	{Field: "session.permission_mode", Key: "permission_mode", Type: "string"},
	{Field: "session.end_reason", Key: "reason", Type: "string", Events: []string{"SessionEnd"}},
	{Field: "prompt.text", Key: "prompt", Type: "string", Events: []string{"UserPromptSubmit"}},
	{Field: "tool.call_id", Key: "tool_use_id", Type: "string", Events: toolEvents},
	{Field: "tool.name", Key: "tool_name", Type: "string", Events: toolEvents},
	{Field: "workflow.last_message", Key: "last_assistant_message", Type: "string", Events: []string{"Stop"}},
	{Field: "workflow.already_continued", Key: "stop_hook_active", Type: "boolean", Events: []string{"Stop"}},
}

// Fields reads the portable fields of a Codex payload.
func (Adapter) Fields(event string, payload []byte) (dispatch.Fields, error) {
	return dispatch.ExtractFields(event, payload, fields, "agent_id")
}

// Render answers Codex on stdout with exit status 0. Codex rejects unknown
// keys, so only these appear:
//
//   - context: hookSpecificOutput.additionalContext with hookEventName, on
//     SessionStart, UserPromptSubmit, PreToolUse and PostToolUse (seen
//     reaching the model); Stop has no context field, so there it goes to
//     the user;
//   - deny on PreToolUse: permissionDecision "deny" with
//     permissionDecisionReason; on UserPromptSubmit: decision "block" with
//     reason;
//   - a rewrite: permissionDecision "allow" beside updatedInput, which
//     Codex needs (updatedInput alone was ignored); Codex's own approval and
//     sandbox checks still apply. A portable allow alone has no native form:
//     allow grants nothing the harness withheld;
//   - continue on Stop: decision "block" with reason;
//   - output replacement: not offered (Codex ignored updatedToolOutput), so
//     the user is told and the output stays;
//   - the user channel: systemMessage, a field of every Codex hook output
//     that Codex shows to the user.
//
// SessionEnd ignores output: anything for the user goes to stderr with exit
// status 1.
func (Adapter) Render(event string, o *dispatch.Outcome) dispatch.Native {
	if o.Empty() {
		return dispatch.Native{}
	}
	user := append([]string(nil), o.User...)
	out := map[string]any{}
	hso := map[string]any{}
	context := func() {
		if len(o.Context) > 0 {
			hso["additionalContext"] = dispatch.JoinNotes(o.Context)
		}
	}
	lost := func(what string, present bool) {
		if present {
			user = append(user, "dalo: "+what+" cannot be delivered on Codex "+event)
		}
	}
	switch event {
	case "SessionStart":
		context()
		lost("a denial", len(o.Deny) > 0)
		lost("a continuation", len(o.Continue) > 0)
		lost("an input rewrite", o.UpdatedInput != nil)
		lost("an output replacement", o.UpdatedOutput != nil)
	case "UserPromptSubmit":
		context()
		if len(o.Deny) > 0 {
			out["decision"] = "block"
			out["reason"] = dispatch.JoinNotes(o.Deny)
		}
		lost("a continuation", len(o.Continue) > 0)
		lost("an input rewrite", o.UpdatedInput != nil)
		lost("an output replacement", o.UpdatedOutput != nil)
	case "PreToolUse":
		context()
		if len(o.Deny) > 0 {
			hso["permissionDecision"] = "deny"
			hso["permissionDecisionReason"] = dispatch.JoinNotes(o.Deny)
		} else if o.UpdatedInput != nil {
			hso["permissionDecision"] = "allow"
			hso["updatedInput"] = o.UpdatedInput
		}
		lost("a continuation", len(o.Continue) > 0)
		lost("an output replacement", o.UpdatedOutput != nil)
	case "PostToolUse":
		context()
		lost("a denial", len(o.Deny) > 0)
		lost("a continuation", len(o.Continue) > 0)
		lost("an input rewrite", o.UpdatedInput != nil)
		lost("an output replacement", o.UpdatedOutput != nil)
	case "Stop":
		if len(o.Continue) > 0 {
			out["decision"] = "block"
			out["reason"] = dispatch.JoinNotes(o.Continue)
		}
		if ctx := dispatch.Results(o.Context); len(ctx) > 0 {
			user = append(user, "dalo: hook context cannot reach the model on Stop; shown here instead:\n"+dispatch.JoinNotes(ctx))
		}
		lost("a denial", len(o.Deny) > 0)
		lost("an input rewrite", o.UpdatedInput != nil)
		lost("an output replacement", o.UpdatedOutput != nil)
	default: // SessionEnd, and any event without a native output
		msgs := user
		if ctx := dispatch.Results(o.Context); len(ctx) > 0 {
			msgs = append(msgs, "dalo: hook context cannot reach the model on "+event+":\n"+dispatch.JoinNotes(ctx))
		}
		if len(msgs) == 0 {
			return dispatch.Native{}
		}
		return dispatch.Native{Stderr: []byte(dispatch.JoinUser(msgs) + "\n"), Exit: 1}
	}
	if len(hso) > 0 {
		hso["hookEventName"] = event
		out["hookSpecificOutput"] = hso
	}
	if len(user) > 0 {
		out["systemMessage"] = dispatch.JoinUser(user)
	}
	if len(out) == 0 {
		return dispatch.Native{}
	}
	return dispatch.Native{Stdout: encode(out)}
}

func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // maps of strings and raw JSON: cannot fail
	return b.Bytes()
}
