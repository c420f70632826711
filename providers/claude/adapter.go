// Package claude adapts dalo's hook dispatch to Claude Code's native hook
// protocol, as recorded with Claude Code 2.1.233 (providers/testdata).
// Its provider table (which events and hooks are supported) is the CUE file
// beside this one; this adapter only translates payloads and results.
package claude

import (
	"bytes"
	"encoding/json"

	"dalo/dispatch"
)

// Adapter is the dispatch.Adapter of Claude Code.
type Adapter struct{}

var toolEvents = []string{"PreToolUse", "PostToolUse", "PostToolUseFailure"}

// fields says where Claude Code keeps each portable field. permission_mode
// is absent from SessionStart and SessionEnd; agent_id appears inside
// subagents.
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

// Fields reads the portable fields of a Claude Code payload.
func (Adapter) Fields(event string, payload []byte) (dispatch.Fields, error) {
	return dispatch.ExtractFields(event, payload, fields, "agent_id")
}

// Render answers Claude Code on stdout with exit status 0:
//
//   - context: hookSpecificOutput.additionalContext with hookEventName, on
//     SessionStart, UserPromptSubmit, PreToolUse, PostToolUse and
//     PostToolUseFailure (seen reaching the model). On Stop, context would
//     resume the turn, so there it goes to the user instead;
//   - deny on PreToolUse: permissionDecision "deny" with
//     permissionDecisionReason; on UserPromptSubmit: decision "block" with
//     reason (the prompt is dropped);
//   - a rewrite: updatedInput alone, never with a permissionDecision, so
//     that Claude's own permission flow still decides; a portable allow has
//     no native form for the same reason;
//   - a replacement on PostToolUse: updatedToolOutput, the handler's object
//     as given (for Bash: stdout, stderr, interrupted, isImage);
//   - continue on Stop: decision "block" with reason;
//   - the user channel: systemMessage, which Claude Code documents as a
//     message shown to the user and not to the model.
//
// SessionEnd ignores output: anything for the user goes to stderr with exit
// status 1 (a non-blocking error Claude shows to the user).
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
			user = append(user, "dalo: "+what+" cannot be delivered on Claude Code "+event)
		}
	}
	switch event {
	case "SessionStart", "PostToolUseFailure":
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
			hso["updatedInput"] = o.UpdatedInput
		}
		lost("a continuation", len(o.Continue) > 0)
		lost("an output replacement", o.UpdatedOutput != nil)
	case "PostToolUse":
		context()
		if o.UpdatedOutput != nil {
			hso["updatedToolOutput"] = o.UpdatedOutput
		}
		lost("a denial", len(o.Deny) > 0)
		lost("a continuation", len(o.Continue) > 0)
		lost("an input rewrite", o.UpdatedInput != nil)
	case "Stop":
		if len(o.Continue) > 0 {
			out["decision"] = "block"
			out["reason"] = dispatch.JoinNotes(o.Continue)
		}
		if ctx := dispatch.Results(o.Context); len(ctx) > 0 {
			user = append(user, "dalo: hook context cannot reach the model on Stop without resuming the turn; shown here instead:\n"+dispatch.JoinNotes(ctx))
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
