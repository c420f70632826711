// Package plan holds the dispatch plan format: the contract between
// install (package store writes it) and `dalo hook dispatch` (package
// dispatch reads it on every harness event). It is a leaf package, imported
// by both, so that the dispatch hot path links no CUE and no validator.
//
// A plan holds everything dispatch needs, so that the hot path parses one small JSON file
// and never evaluates CUE or reads a manifest.
//
// Layout of the store ($DALO_HOME):
//
//	sources.json              the user's source registry
//	grants/<grant-id>.json    the approval ledger, one Grant per file; revoke deletes
//	staged/<sha256>/          content-addressed, read-only staged tool trees
//	plans/<provider>.json     the dispatch Plan of one provider, written by install
//	lock                      the advisory lock writers hold
//
// Dispatch re-checks, before every handler run, that both grants of the hook
// still exist with the digests the plan names, and that every staged file
// still has its digest.
package plan

// Schema is the version of the plan format.
const Schema = 1

// A Plan is every installed, approved hook of one provider, by native event.
type Plan struct {
	Schema   int                      `json:"schema"`
	Provider string                   `json:"provider"` // claude, codex
	Version  string                   `json:"version"`  // the provider table used: 2.1.233
	Events   map[string][]PlannedHook `json:"events"`   // native event → hooks, in stable hook-identity order
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
	ID      string            `json:"id"`
	Root    string            `json:"root"` // absolute path of the staged, read-only tool root (the cwd)
	Runtime string            `json:"runtime"`
	Entry   string            `json:"entry"`
	Argv    []string          `json:"argv"`
	Env     []string          `json:"env,omitempty"`
	Inputs  []PlannedInput    `json:"inputs,omitempty"`
	Files   map[string]string `json:"files"` // path relative to Root → sha256 hex, entry included
}

// A PlannedInput is a declared tool input.
type PlannedInput struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}
