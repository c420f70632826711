package engine

import (
	"slices"

	"dalo/plan"
)

// Report is validation report schema 1 (docs/design.md §5).
type Report struct {
	Schema        int                         `json:"schema"`
	Valid         bool                        `json:"valid"`
	Source        SourceInfo                  `json:"source"`
	Packages      []PackageReport             `json:"packages"`
	References    []Reference                 `json:"references"`
	Capabilities  map[string][]HookCapability `json:"provider_hook_capabilities"`
	Authorization string                      `json:"authorization"`
	Diagnostics   []Diagnostic                `json:"diagnostics"`

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
