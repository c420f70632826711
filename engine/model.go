package engine

import "strings"

// The typed view of a manifest whose shape passed #Manifest. Field names
// follow PLUGIN.toml; the store and the dispatcher use the same types.

type Manifest struct {
	SchemaVersion int            `toml:"schema_version" json:"schema_version"`
	Plugin        Plugin         `toml:"plugin" json:"plugin"`
	Tools         []Tool         `toml:"tool" json:"tool,omitempty"`
	Hooks         []Hook         `toml:"hook" json:"hook,omitempty"`
	Providers     map[string]any `toml:"providers" json:"providers,omitempty"`
}

type Plugin struct {
	Name        string    `toml:"name" json:"name"`
	Description string    `toml:"description" json:"description"`
	ID          string    `toml:"id" json:"id,omitempty"`
	Version     string    `toml:"version" json:"version,omitempty"`
	Members     []Member  `toml:"members" json:"members,omitempty"`
	Requires    []Require `toml:"requires" json:"requires,omitempty"`
}

type Member struct {
	Ref         string    `toml:"ref" json:"ref"`
	Requirement string    `toml:"requirement" json:"requirement"`
	Fallback    *Fallback `toml:"fallback" json:"fallback,omitempty"`
}

type Fallback struct {
	Kind  string `toml:"kind" json:"kind"`
	Skill string `toml:"skill" json:"skill"`
}

type Require struct {
	Ref         string `toml:"ref" json:"ref"`
	Requirement string `toml:"requirement" json:"requirement"`
}

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

type Input struct {
	Name     string `toml:"name" json:"name"`
	Type     string `toml:"type" json:"type"`
	Required *bool  `toml:"required" json:"required,omitempty"`
}

// IsRequired applies the default: an input is required unless it says not.
func (i Input) IsRequired() bool { return i.Required == nil || *i.Required }

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

type Matcher struct {
	ToolNames []string `toml:"tool_names" json:"tool_names"`
}

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
	var r Ref
	parts := strings.SplitN(s, ":", 3)
	switch len(parts) {
	case 2:
		r.Kind, r.Selector = parts[0], parts[1]
	case 3:
		r.Kind, r.Source, r.Selector = parts[0], parts[1], parts[2]
	default:
		r.Kind = s
	}
	return r
}
