package engine

import (
	"encoding/json"
	"slices"

	"dalo/plan"
	"dalo/providers"
)

// Report is validation report schema 1 (docs/design.md §5).
type Report struct {
	Schema        int             `json:"schema"`
	Valid         bool            `json:"valid"`
	Source        SourceInfo      `json:"source"`
	Packages      []PackageReport `json:"packages"`
	References    []Reference     `json:"references"`
	Capabilities  Capabilities    `json:"provider_hook_capabilities"`
	Authorization string          `json:"authorization"`
	Diagnostics   []Diagnostic    `json:"diagnostics"`

	// blocked indexes Blocked by package, built on the first call for
	// the references then held (blockedOf): asking of every package of a
	// large source must not scan every reference each time.
	blocked   map[string][]Reference
	blockedOf int
}

// SourceInfo is the report's source: the directory validated, and the
// source id its explicit same-source references name (validation unless
// --source-id says otherwise).
type SourceInfo struct {
	Path string `json:"path"`
	ID   string `json:"id"`
}

// A PackageReport is one package: Valid is its own contract (manifest,
// tools, hooks, the files they name) and nothing else; what its
// references resolve to is in Report.References (see Report.Blocked).
type PackageReport struct {
	Name    string         `json:"name"`
	ID      string         `json:"id"`
	Path    string         `json:"path"`
	Valid   bool           `json:"valid"`
	Members []MemberReport `json:"members"`
	Tools   []ToolReport   `json:"tools"`
	Hooks   []HookReport   `json:"hooks"`
}

// MemberReport is one member of a package as the manifest declares it;
// what it resolves to is its Reference.
type MemberReport struct {
	Ref         string    `json:"ref"`
	Requirement string    `json:"requirement"`
	Fallback    *Fallback `json:"fallback,omitempty"`
}

// ToolReport is the summary of one tool in report schema 1.
type ToolReport struct {
	ID           string `json:"id"`
	Runtime      string `json:"runtime"`
	Entry        string `json:"entry"`
	Availability string `json:"availability"`
}

// HookReport is the summary of one hook in report schema 1; what each
// provider does with it is in Report.Capabilities.
type HookReport struct {
	ID            string `json:"id"`
	Tool          string `json:"tool"`
	Subject       string `json:"subject"`
	Phase         string `json:"phase"`
	Effect        string `json:"effect"`
	Requirement   string `json:"requirement"`
	FailurePolicy string `json:"failure_policy"`
}

// Resolution of a reference.
const (
	Resolved    = "resolved"
	Unresolved  = "unresolved"
	OutOfSource = "out_of_source"
	InvalidRef  = "invalid"
)

// Reference is one reference of a package (Field is where it stands in
// the manifest) and its Resolution: Target is the file it resolved to,
// Reason why it did not, or why the member it names is invalid.
type Reference struct {
	Package     string `json:"package"`
	Field       string `json:"field"`
	Ref         string `json:"ref"`
	Requirement string `json:"requirement"`
	Resolution  string `json:"resolution"`
	Target      string `json:"target,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

// HookCapability is what one provider version does with one hook.
type HookCapability struct {
	Package     string `json:"package"`
	Hook        string `json:"hook"`
	Requirement string `json:"requirement"`
	Status      string `json:"status"` // supported, unsupported, omitted
	NativeEvent string `json:"native_event,omitempty"`
	Reason      string `json:"reason,omitempty"`
	// BlocksActivation is true for a required hook the provider cannot
	// honour: the package cannot be activated on that target.
	BlocksActivation bool `json:"blocks_activation,omitempty"`
}

// Capabilities is what each provider version does with each hook of a
// report's packages: a row a hook, in the order of its package and in
// that of the hook in its manifest, each with an answer a provider, in
// the order of Providers. Rows that ask a provider the same question
// share one list of answers. A HookCapability a hook and a provider was
// some 10 KB a package of twelve hooks on seven tables, more than the
// rest of what validating it held, and it grew with every harness
// version given a table.
type Capabilities struct {
	Providers []string // provider@version keys, sorted
	Rows      []CapabilityRow
}

// A CapabilityRow is one hook's answers: Answers[i] is Providers[i]'s.
type CapabilityRow struct {
	Package, Hook, Requirement string
	Answers                    []providers.Capability
}

// Of lists what provider does with each hook, in the order of the rows;
// nil for a provider the report does not speak of.
func (c Capabilities) Of(provider string) []HookCapability {
	i := slices.Index(c.Providers, provider)
	if i < 0 {
		return nil
	}
	out := make([]HookCapability, len(c.Rows))
	for r, row := range c.Rows {
		out[r] = row.capability(i)
	}
	return out
}

// Lookup is what provider does with hook of package pkg; false when the
// report has no answer for it (an invalid hook, an unselected provider).
func (c Capabilities) Lookup(pkg, hook, provider string) (HookCapability, bool) {
	i := slices.Index(c.Providers, provider)
	if i < 0 {
		return HookCapability{}, false
	}
	for _, row := range c.Rows {
		if row.Package == pkg && row.Hook == hook {
			return row.capability(i), true
		}
	}
	return HookCapability{}, false
}

// capability is what Providers[i] does with the row's hook.
func (row CapabilityRow) capability(i int) HookCapability {
	a := row.Answers[i]
	return HookCapability{
		Package: row.Package, Hook: row.Hook, Requirement: row.Requirement,
		Status: a.Status, NativeEvent: a.NativeEvent, Reason: a.Reason, BlocksActivation: a.BlocksActivation,
	}
}

// MarshalJSON writes c as report schema 1 has it: an object with a
// member a provider, the list Of gives, made one provider at a time.
func (c Capabilities) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, p := range c.Providers {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		list, err := json.Marshal(c.Of(p))
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), list...)
	}
	return append(b, '}'), nil
}

// Blocked returns the required references of package name that do not
// resolve to a valid asset (unresolved, out of source, invalid): each
// blocks the package's activation. The package's own validity
// (PackageReport.Valid) is its contract alone; a source with a blocked
// package is not valid.
func (r *Report) Blocked(name string) []Reference {
	if r.blocked == nil || r.blockedOf != len(r.References) {
		r.blocked = map[string][]Reference{}
		r.blockedOf = len(r.References)
		for _, ref := range r.References {
			if ref.Requirement == plan.RequirementRequired && ref.Resolution != Resolved {
				r.blocked[ref.Package] = append(r.blocked[ref.Package], ref)
			}
		}
	}
	return slices.Clip(r.blocked[name])
}

// Errors counts the error diagnostics of r.
func (r *Report) Errors() int {
	n := 0
	for _, d := range r.Diagnostics {
		if d.Severity == Error {
			n++
		}
	}
	return n
}
