package engine

import "strings"

// The typed view of a manifest whose shape passed #Manifest. Field names
// follow PLUGIN.toml. The store reads packages through these types; the
// dispatcher never sees them: it must not link the validator (deps_test.go,
// hotPathDeps), so install copies what it needs into the types of package
// plan (PlannedHook, ToolBinds, HookBinds), which dispatch reads.

// Manifest is a PLUGIN.toml of schema 1. Providers is the inert,
// adapter-owned data the draft exempts from the schema: read within the
// reader's limits, never interpreted.
type Manifest struct {
	SchemaVersion int            `toml:"schema_version" json:"schema_version"`
	Plugin        Plugin         `toml:"plugin" json:"plugin"`
	Tools         []Tool         `toml:"tool" json:"tool,omitempty"`
	Hooks         []Hook         `toml:"hook" json:"hook,omitempty"`
	Providers     map[string]any `toml:"providers" json:"providers,omitempty"`
}

// Plugin is the manifest's [plugin] table: the package's name (its
// directory's), description, optional id and informational version, and
// its references.
type Plugin struct {
	Name        string    `toml:"name" json:"name"`
	Description string    `toml:"description" json:"description"`
	ID          string    `toml:"id" json:"id,omitempty"`
	Version     string    `toml:"version" json:"version,omitempty"`
	Members     []Member  `toml:"members" json:"members,omitempty"`
	Requires    []Require `toml:"requires" json:"requires,omitempty"`
}

// Member is one [[plugin.members]] entry: a skill, instruction or agent
// reference with its requirement, and for an agent an optional inline
// fallback.
type Member struct {
	Ref         string    `toml:"ref" json:"ref"`
	Requirement string    `toml:"requirement" json:"requirement"`
	Fallback    *Fallback `toml:"fallback" json:"fallback,omitempty"`
}

// Fallback is an agent member's fallback = { kind = "inline", skill = ... }:
// the skill, itself a required member, that stands in where a harness
// cannot hold the agent.
type Fallback struct {
	Kind  string `toml:"kind" json:"kind"`
	Skill string `toml:"skill" json:"skill"`
}

// Require is one [[plugin.requires]] entry: a plugin reference, required
// or optional.
type Require struct {
	Ref         string `toml:"ref" json:"ref"`
	Requirement string `toml:"requirement" json:"requirement"`
}

// Tool is one [[tool]], tool descriptor 1: the files of a local handler
// and how it is invoked. A grant binds all of it (plan.ToolBinds).
type Tool struct {
	SchemaVersion  int      `toml:"schema_version" json:"schema_version"`
	ID             string   `toml:"id" json:"id"`
	Entry          string   `toml:"entry" json:"entry"`
	Files          []string `toml:"files" json:"files,omitempty"`
	Runtime        string   `toml:"runtime" json:"runtime"`
	RuntimeVersion string   `toml:"runtime_version" json:"runtime_version,omitempty"`
	Argv           []string `toml:"argv" json:"argv"`
	Cwd            string   `toml:"cwd" json:"cwd"`
	Availability   string   `toml:"availability" json:"availability"`
	Env            []string `toml:"env" json:"env,omitempty"`
	Capabilities   []string `toml:"capabilities" json:"capabilities,omitempty"`
	Platforms      []string `toml:"platforms" json:"platforms,omitempty"`
	Inputs         []Input  `toml:"inputs" json:"inputs,omitempty"`
}

// Input is a declared input of a tool, which argv may interpolate as a
// whole argument and a hook binds to an event field. Required is nil
// when the manifest leaves it out (IsRequired applies the default).
type Input struct {
	Name     string `toml:"name" json:"name"`
	Type     string `toml:"type" json:"type"`
	Required *bool  `toml:"required" json:"required,omitempty"`
}

// IsRequired applies the default: an input is required unless it says not.
func (i Input) IsRequired() bool { return i.Required == nil || *i.Required }

// Hook is one [[hook]], hook descriptor 1: the event it runs on (subject
// and phase), the tool it runs with its bindings, its effect and how a
// failure is handled.
type Hook struct {
	SchemaVersion   int       `toml:"schema_version" json:"schema_version"`
	ID              string    `toml:"id" json:"id"`
	Tool            string    `toml:"tool" json:"tool"`
	Subject         string    `toml:"subject" json:"subject"`
	Phase           string    `toml:"phase" json:"phase"`
	Effect          string    `toml:"effect" json:"effect"`
	Requirement     string    `toml:"requirement" json:"requirement"`
	Fallback        string    `toml:"fallback" json:"fallback,omitempty"`
	TimeoutMS       int       `toml:"timeout_ms" json:"timeout_ms"`
	FailurePolicy   string    `toml:"failure_policy" json:"failure_policy"`
	Retry           string    `toml:"retry" json:"retry"`
	ErrorVisibility string    `toml:"error_visibility" json:"error_visibility"`
	BlockingScope   string    `toml:"blocking_scope" json:"blocking_scope"`
	Matcher         *Matcher  `toml:"matcher" json:"matcher,omitempty"`
	Bindings        []Binding `toml:"bindings" json:"bindings,omitempty"`
}

// Matcher is a tool_call hook's matcher: exact native tool names; an
// empty list matches every covered call.
type Matcher struct {
	ToolNames []string `toml:"tool_names" json:"tool_names"`
}

// Binding binds a tool input to a portable event field of the same type.
type Binding struct {
	Input string `toml:"input" json:"input"`
	Field string `toml:"field" json:"field"`
}

// Ref is a parsed reference: kind:selector or kind:source:selector.
type Ref struct {
	Kind, Source, Selector string
}

// ParseRef splits a reference that passed the grammar of #Ref.
func ParseRef(s string) Ref {
	// Cut, not SplitN: a reference is parsed for every member of every
	// package, and the slice of its parts was an allocation each.
	kind, rest, ok := strings.Cut(s, ":")
	if !ok {
		return Ref{Kind: s}
	}
	if src, sel, ok := strings.Cut(rest, ":"); ok {
		return Ref{Kind: kind, Source: src, Selector: sel}
	}
	return Ref{Kind: kind, Selector: rest}
}
