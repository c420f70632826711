// Package plan holds the dispatch plan format: the contract between
// install (package store writes it) and `dalo hook dispatch` (package
// dispatch reads it on every harness event). It is a leaf package, imported
// by both, so that the dispatch hot path links no CUE and no validator.
//
// A plan holds everything dispatch needs: the hooks, and for every native
// event the harness's native protocol copied from the provider table (see
// [Native]), so that the hot path never evaluates CUE, never loads a
// provider table and never reads a manifest.
//
// The plan lives in the store ($DALO_HOME, see [Home]), whose layout package
// store documents; the part dispatch reads is described at [WriteIndex].
//
// The grant format ([Grant], [ToolBinds], [HookBinds], [Digest],
// [TreeDigest]) lives here too: dispatch re-checks, before every handler
// run, that both grants of the hook still exist with the digests the plan
// names and are what they bind, that the plan asks for nothing but what
// they bind, and that the staged tree holds exactly the bound files
// ([CheckTree]), each with its digest; it holds the shared lock of
// [HoldDispatch] for its whole run, so that no writer deletes a staged
// tree under it.
package plan

import (
	"fmt"
	"sort"
)

// Schema is the version of the plan format. 2 added the native protocol
// of each event (Natives) and the per-event index dispatch reads; 3 the
// response limits (Limits); 4 the result shapes and fail_closed actions
// (Rules) and each tool's interpreter; 5 one index pointer per schema
// (Pointer), so that a plan of a new schema and the harness entries that
// call a dispatcher reading it switch over in order.
const Schema = 5

// A Plan is every installed, approved hook of one provider, by native event.
type Plan struct {
	Schema   int                      `json:"schema"`
	Provider string                   `json:"provider"` // claude, codex
	Version  string                   `json:"version"`  // the provider table used: 2.1.233
	Events   map[string][]PlannedHook `json:"events"`   // native event → hooks, in stable hook-identity order
	// Natives is the native protocol of every event in Events, copied
	// from the provider table at install.
	Natives map[string]Native `json:"natives"`
	// Limits bound every handler's response, copied from the rules at
	// install.
	Limits Limits `json:"limits"`
	// Rules are the tables of the rules dispatch applies, copied from the
	// rules at install.
	Rules Rules `json:"rules"`
}

// Rules are the draft's tables dispatch applies to a handler's answer and
// to its failure, copied from the rules (cue/hooks.cue) at install so that
// dispatch reads them without evaluating CUE.
type Rules struct {
	// Results gives every result kind its shape (#ResultShapes).
	Results map[string]ResultShape `json:"results"`
	// FailClosed gives every effect that admits fail_closed what its
	// failing fail_closed hook does (#FailClosed): FailDeny or
	// FailContinue.
	FailClosed map[string]string `json:"fail_closed"`
}

// What a failing fail_closed hook does, as #FailClosed names it.
const (
	FailDeny     = "deny"     // deny the action the hook gates
	FailContinue = "continue" // ask for another workflow pass
)

// A ResultShape is the one key a result kind carries beside kind, and its
// type; a kind without one has the zero ResultShape.
type ResultShape struct {
	Key  string `json:"key,omitempty"`  // context, reason, input, output
	Type string `json:"type,omitempty"` // ShapeText or ShapeObject
}

// Types of a result key (#ResultShapes).
const (
	ShapeText   = "text"   // a string within result_text_bytes, without NUL, not blank
	ShapeObject = "object" // a JSON object
)

// Check reports rules that are missing or name what dispatch cannot
// apply: a plan without them is refused rather than misread.
func (r Rules) Check() error {
	if len(r.Results) == 0 {
		return fmt.Errorf("rules.results is empty")
	}
	for kind, s := range r.Results {
		if (s.Key == "") != (s.Type == "") || (s.Type != "" && s.Type != ShapeText && s.Type != ShapeObject) {
			return fmt.Errorf("rules.results.%s has key %q of type %q", kind, s.Key, s.Type)
		}
	}
	for effect, a := range r.FailClosed {
		if a != FailDeny && a != FailContinue {
			return fmt.Errorf("rules.fail_closed.%s is %q, not %s or %s", effect, a, FailDeny, FailContinue)
		}
	}
	return nil
}

// Limits are the draft's limits of a handler's response, copied from the
// rules (#Limits) at install so that dispatch enforces the numbers the
// rules hold without evaluating CUE. Each counts bytes.
type Limits struct {
	ResponseBytes       int `json:"response_bytes"`        // stdout of one handler
	ResultTextBytes     int `json:"result_text_bytes"`     // a result's context or reason
	RewrittenInputBytes int `json:"rewritten_input_bytes"` // a rewritten tool input, compact JSON
}

// Check reports a limit that is missing or not positive: zero would read
// as "nothing is admitted", not as "no limit", so a plan without its
// limits is refused rather than misread.
func (l Limits) Check() error {
	for _, f := range []struct {
		name string
		n    int
	}{
		{"response_bytes", l.ResponseBytes},
		{"result_text_bytes", l.ResultTextBytes},
		{"rewritten_input_bytes", l.RewrittenInputBytes},
	} {
		if f.n <= 0 {
			return fmt.Errorf("limits.%s is %d, not a positive byte count", f.name, f.n)
		}
	}
	return nil
}

// Parts of a composed outcome, as a provider table names them: each is
// rendered through the event's channel of that name, or, when the event
// has none, reported to the user with the event's Undelivered message.
const (
	PartContext       = "context"        // model-visible context, $context
	PartDeny          = "deny"           // the pre-action gate denies, $reason
	PartContinue      = "continue"       // another workflow pass, $reason
	PartRewriteInput  = "rewrite_input"  // the rewritten tool input, $input
	PartReplaceOutput = "replace_output" // the replaced tool output, $output
	PartUser          = "user"           // messages for the user only, $user
)

// A Native is how one harness version speaks on one native event: where
// the portable fields are in its payload, and how each part of a composed
// outcome is rendered. Install copies it from the provider table.
type Native struct {
	// Harness and Event name the native event in messages: Claude Code,
	// PreToolUse.
	Harness string `json:"harness"`
	Event   string `json:"event"`
	// Fields says where each portable field is in the native payload.
	Fields []Field `json:"fields"`
	// ActorKey, when set, names the top-level key whose non-empty string
	// value marks a subagent: actor.kind is then "subagent" and actor.id
	// the value; otherwise both are "main".
	ActorKey string `json:"actor_key,omitempty"`
	// Channels renders each part the event can carry (Part* names).
	Channels map[string]Output `json:"channels"`
	// Undelivered is what the user reads when an outcome holds a part the
	// event has no channel for; $context stands for the hook context.
	Undelivered map[string]string `json:"undelivered,omitempty"`
}

// A Field is one portable field read from a top-level native key.
type Field struct {
	Field string `json:"field"` // portable name: session.id
	Key   string `json:"key"`   // native key: session_id
	Type  string `json:"type"`  // string, path or boolean
}

// An Output is a native output template: in Stdout, a JSON object, a
// string that is exactly a placeholder ($context, $reason, $input, $output,
// $user) is replaced by its value; in Stderr every placeholder is. Exit is
// the dispatcher's exit status when the output is used.
type Output struct {
	Stdout map[string]any `json:"stdout,omitempty"`
	Stderr string         `json:"stderr,omitempty"`
	Exit   int            `json:"exit,omitempty"`
	// UserOnly, on the deny channel, says the harness shows the reason to
	// the user and never to the model, so that a failure's reason there is
	// its detailed diagnostic, as the user reads it, not the generic
	// explanation meant for a model (the table's user_only).
	UserOnly bool `json:"user_only,omitempty"`
}

// A PlannedHook is one hook with its tool, as approved and staged.
type PlannedHook struct {
	Package         string           `json:"package"` // source:name
	Hook            string           `json:"hook"`
	Subject         string           `json:"subject"`
	Phase           string           `json:"phase"`
	Effect          string           `json:"effect"`
	Requirement     string           `json:"requirement"`
	ToolNames       []string         `json:"tool_names,omitempty"` // matcher; empty: every covered call
	TimeoutMS       int              `json:"timeout_ms"`
	FailurePolicy   string           `json:"failure_policy"`
	ErrorVisibility string           `json:"error_visibility"`
	Bindings        []PlannedBinding `json:"bindings,omitempty"`
	ResultKinds     []string         `json:"result_kinds"` // from #ResultKinds, abstain included
	ToolGrant       GrantRef         `json:"tool_grant"`
	HookGrant       GrantRef         `json:"hook_grant"`
	Tool            PlannedTool      `json:"tool"`
}

// A PlannedBinding feeds a tool input from an event field of the given type.
type PlannedBinding struct {
	Input string `json:"input"`
	Field string `json:"field"`
	Type  string `json:"type"`
}

// A GrantRef names a grant of the ledger and the digest it must still have.
type GrantRef struct {
	ID     string `json:"id"`
	Digest string `json:"digest"`
}

// A PlannedTool is the staged tool a hook runs.
type PlannedTool struct {
	ID      string `json:"id"`
	Root    string `json:"root"` // absolute path of the staged, read-only tool root (the cwd)
	Runtime string `json:"runtime"`
	// Interpreter runs the entry, found on dalo's PATH; empty, the entry
	// runs itself (#Runtimes, copied at install). No grant binds it:
	// dispatch runs the one of [Runtimes] and refuses a plan whose copy
	// differs.
	Interpreter string `json:"interpreter,omitempty"`
	// InterpreterArgs go to the interpreter before the entry (#Runtimes,
	// copied at install): python3's -E -s -B.
	InterpreterArgs []string          `json:"interpreter_args,omitempty"`
	Entry           string            `json:"entry"`
	Argv            []string          `json:"argv"`
	Env             []string          `json:"env,omitempty"`
	Inputs          []PlannedInput    `json:"inputs,omitempty"`
	Files           map[string]string `json:"files"` // path relative to Root → sha256 hex, entry included
}

// A Runtime is how the entry of a tool of one runtime runs (#Runtimes):
// with Interpreter, found on dalo's PATH ("" runs the entry itself), and
// Args before the entry. Dispatch takes it from [Runtimes], generated from
// the rules, not from the plan.
type Runtime struct {
	Interpreter string   `json:"interpreter"`
	Args        []string `json:"args,omitempty"`
}

// A PlannedInput is a declared tool input.
type PlannedInput struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

// SortHooks puts hooks in stable hook-identity order, package then hook
// id: the order hooks of one event run in and their results compose in
// (docs/design.md §7).
func SortHooks(hooks []PlannedHook) {
	sort.SliceStable(hooks, func(i, j int) bool {
		if hooks[i].Package != hooks[j].Package {
			return hooks[i].Package < hooks[j].Package
		}
		return hooks[i].Hook < hooks[j].Hook
	})
}
