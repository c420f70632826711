// Package plan holds the contract between install and dispatch: what
// install (package store) writes and `dalo hook dispatch` (package
// dispatch) reads on every harness event. It is a leaf package, imported
// by both, so that the dispatch hot path links no CUE and no validator.
//
// A plan holds what install decided: the hooks, and for every native
// event the harness's native protocol copied from the provider table (see
// [Native]), so that the hot path never evaluates CUE, never loads a
// provider table and never reads a manifest.
//
// The rules dispatch and the store apply are not in a plan: the result
// kinds and shapes, the limits, the failure policies and what fail_closed
// does, how each runtime runs, and the providers and native events there
// are. go generate ./providers compiles them from the CUE rules and the
// provider tables into known.go, so that the validator, install and
// dispatch read one answer, built into the binary, and a test fails while
// it is stale.
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
	"slices"
	"sort"
	"strings"
)

// Schema is the version of the plan format. 2 added the native protocol
// of each event (Natives) and the per-event index dispatch reads; 3 the
// response limits; 4 the result shapes and fail_closed actions and each
// tool's interpreter; 5 one index pointer per schema (Pointer), so that a
// plan of a new schema and the harness entries that call a dispatcher
// reading it switch over in order; 6 dropped the copies of the rules (the
// limits, result shapes and kinds, fail_closed actions, interpreters):
// dispatch reads them from the rules compiled into it (known.go), never
// from a plan. A plan of schema 5 is read by the schema-5 dispatcher its
// entries call until install or remove rewrites it (see DropOtherSchemas).
const Schema = 6

// A Plan is every installed, approved hook of one provider, by native event.
type Plan struct {
	Schema   int                      `json:"schema"`
	Provider string                   `json:"provider"` // a provider table's name: claude, codex, gemini...
	Version  string                   `json:"version"`  // the provider table used: 2.1.233
	Events   map[string][]PlannedHook `json:"events"`   // native event → hooks, in stable hook-identity order
	// Natives is the native protocol of every event in Events, copied
	// from the provider table at install.
	Natives map[string]Native `json:"natives"`
}

// What a failing fail_closed hook does, as #FailClosed names it
// ([FailClosed]): the part of an outcome it renders.
const (
	FailDeny     = PartDeny     // deny the action the hook gates
	FailContinue = PartContinue // ask for another workflow pass
)

// A ResultShape is the one key a result kind carries beside kind, and its
// type ([ResultShapes]); a kind without one has the zero ResultShape.
type ResultShape struct {
	Key  string // context, reason, input, output
	Type string // ShapeText or ShapeObject
}

// Types of a result key (#ResultShapes).
const (
	ShapeText   = "text"   // a string within result_text_bytes, without NUL, not blank
	ShapeObject = "object" // a JSON object
)

// Limits are the draft's reference limits (#Limits), each a count of
// bytes, characters, entries or milliseconds as its name says; the rules'
// numbers are [DraftLimits]. The validator enforces them all; dispatch
// bounds a handler's response by the last three. go generate fills
// DraftLimits by the json names, and fails on a limit of the rules this
// type lacks.
type Limits struct {
	ManifestBytes           int   `json:"manifest_bytes"`
	StringBytes             int   `json:"string_bytes"`
	ArrayEntries            int   `json:"array_entries"`
	TOMLNesting             int   `json:"toml_nesting"`
	PackageEntries          int   `json:"package_entries"`
	DirectoryDepth          int   `json:"directory_depth"`
	FileBytes               int64 `json:"file_bytes"`
	PackageBytes            int64 `json:"package_bytes"`
	MatcherToolNames        int   `json:"matcher_tool_names"`
	Bindings                int   `json:"bindings"`
	IDChars                 int   `json:"id_chars"`
	TimeoutMinMS            int   `json:"timeout_min_ms"`
	TimeoutMaxMS            int   `json:"timeout_max_ms"`
	FrontMatterBytes        int   `json:"front_matter_bytes"`
	SkillNameChars          int   `json:"skill_name_chars"`
	SkillDescriptionChars   int   `json:"skill_description_chars"`
	SkillCompatibilityChars int   `json:"skill_compatibility_chars"`
	ResponseBytes           int   `json:"response_bytes"`        // stdout of one handler
	ResultTextBytes         int   `json:"result_text_bytes"`     // a result's context or reason
	RewrittenInputBytes     int   `json:"rewritten_input_bytes"` // a rewritten tool input, compact JSON
}

// PartUser is the user's channel beside the parts of a composed outcome
// (#Part, PartContext and the rest in known.go): messages for the user
// only, $user. A part an event has no channel for is reported to the user
// with the event's Undelivered message.
const PartUser = "user"

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
	ID   string `json:"id"`
	Root string `json:"root"` // absolute path of the staged, read-only tool root (the cwd)
	// Runtime runs the entry as [Runtimes] says for it: no grant binds
	// the interpreter, the rules do.
	Runtime string            `json:"runtime"`
	Entry   string            `json:"entry"`
	Argv    []string          `json:"argv"`
	Env     []string          `json:"env,omitempty"`
	Inputs  []PlannedInput    `json:"inputs,omitempty"`
	Files   map[string]string `json:"files"` // path relative to Root → sha256 hex, entry included
}

// A Runtime is how the entry of a tool of one runtime runs ([Runtimes]):
// with Interpreter, found on dalo's PATH ("" runs the entry itself), and
// Args before the entry.
type Runtime struct {
	Interpreter string
	Args        []string
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

// ToolRunsOn says whether a tool that declares platforms runs on the
// system whose GOOS is goos, as the rules decide it ([ToolRuns]).
// Validation admits only the platforms the rules name; a list it would
// refuse runs nowhere.
func ToolRunsOn(platforms []string, goos string) bool {
	set := slices.Clone(platforms)
	slices.Sort(set)
	set = slices.Compact(set)
	if _, ok := SystemPlatforms[goos]; !ok {
		goos = ""
	}
	return ToolRuns[strings.Join(set, ",")][goos]
}
