package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The grant format lives here, beside the plan, because it is the trust
// contract between approve and install (package store writes grants and
// plans from them) and dispatch, which re-reads both grants of a hook and
// holds the plan to what they bind before every run: dispatch must decode
// a grant whole without linking package store.

// A Grant is one approval in the ledger: a tool, a hook or a member (a
// skill or an agent) of one package, for one provider. Digest is the
// sha256 of the canonical JSON of Binds (a [ToolBinds], a [HookBinds] or a
// [MemberBinds]), which is everything the approval covers (docs/design.md
// §7); any change to what it binds needs a new grant.
type Grant struct {
	Schema     int             `json:"schema"`
	ID         string          `json:"id"`
	Digest     string          `json:"digest"`
	Kind       string          `json:"kind"` // tool, hook, skill, agent
	Provider   string          `json:"provider"`
	Package    string          `json:"package"` // source:name
	Source     string          `json:"source"`
	Item       string          `json:"item"` // the tool or hook id, the member's name
	ApprovedAt string          `json:"approved_at"`
	Binds      json.RawMessage `json:"binds"`
}

// PackageIdentity names a package: its source, its name and its declared id.
type PackageIdentity struct {
	Source string `json:"source"`
	Name   string `json:"name"`
	ID     string `json:"id,omitempty"`
}

// String is the package as commands take it: SOURCE:NAME.
func (p PackageIdentity) String() string { return p.Source + ":" + p.Name }

// A FileDigest is the reviewed content of one tool file.
type FileDigest struct {
	SHA256     string `json:"sha256"`
	Size       int64  `json:"size"`
	Executable bool   `json:"executable,omitempty"`
}

// ToolBinds is what a tool grant covers: the package, the digest of every
// file of the tool and the invocation contract.
type ToolBinds struct {
	Package      PackageIdentity       `json:"package"`
	Tool         string                `json:"tool"`
	Runtime      string                `json:"runtime"`
	Entry        string                `json:"entry"`
	Argv         []string              `json:"argv"`
	Env          []string              `json:"env"`
	Cwd          string                `json:"cwd"`
	Inputs       []PlannedInput        `json:"inputs"`
	Capabilities []string              `json:"capabilities"`
	Platforms    []string              `json:"platforms"`
	Files        map[string]FileDigest `json:"files"`
}

// HookBinds is what a hook grant covers: the package, the event binding
// (subject, phase, native event, matcher, bindings), the effect and how a
// failure is handled, and the tool grant it runs.
type HookBinds struct {
	Package     PackageIdentity `json:"package"`
	Provider    string          `json:"provider"`
	Hook        string          `json:"hook"`
	Tool        string          `json:"tool"`
	ToolDigest  string          `json:"tool_digest"`
	Subject     string          `json:"subject"`
	Phase       string          `json:"phase"`
	NativeEvent string          `json:"native_event"`
	// AlsoEvents are the further native events the hook runs on, where
	// the table asks the row's question there too (rows.also): a grant
	// binds every event its hook answers.
	AlsoEvents      []string         `json:"also_events,omitempty"`
	Effect          string           `json:"effect"`
	Requirement     string           `json:"requirement"`
	Matcher         []string         `json:"matcher"`
	Bindings        []PlannedBinding `json:"bindings"`
	TimeoutMS       int              `json:"timeout_ms"`
	FailurePolicy   string           `json:"failure_policy"`
	ErrorVisibility string           `json:"error_visibility"`
}

// MemberBinds is what a member grant covers: the exact bytes install
// writes where the harness reads them, a skill's directory (every file,
// by its path relative to the directory) or an agent's file (its one key
// is ""), each with its sha256, size and exec bit, for one provider. A
// harness runs what a skill or an agent says (inline commands, allowed
// tools, hooks, permission modes) without dalo's dispatcher in between,
// so the bytes are the whole of what the user trusts.
type MemberBinds struct {
	Package  PackageIdentity       `json:"package"`
	Provider string                `json:"provider"`
	Kind     string                `json:"kind"`   // skill, agent
	Member   string                `json:"member"` // its name: the reference's selector
	Ref      string                `json:"ref"`    // the reference as the manifest writes it
	Files    map[string]FileDigest `json:"files"`
}

// IsMemberKind says whether a grant of kind approves a member
// ([MemberKinds]).
func IsMemberKind(kind string) bool { return slices.Contains(MemberKinds, kind) }

// Digest is the sha256 of the canonical JSON of v, in hex.
func Digest(v any) (string, error) {
	c, err := Canonical(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// TreeDigest is the content address of a set of tool files: the digest of
// their canonical listing. A tool's staged tree is staged/<TreeDigest>.
func TreeDigest(files map[string]FileDigest) string {
	d, _ := Digest(files) // a map of plain structs always marshals
	return d
}

// GrantID is the id of the grant of one tool, hook or member of a package
// for a provider. '+' appears in no part but the last (a member's name may
// hold one), so ids cannot collide.
func GrantID(provider string, pkg PackageIdentity, kind, item string) string {
	return strings.Join([]string{provider, pkg.Source, pkg.Name, kind, item}, "+")
}

// PendingDir is the directory, under the store, of the grants an update
// ('dalo plugin update') writes before it switches the plan to them, in
// files named as the ledger's (GrantFile). The user approved them; dispatch
// holds a hook to one only where the ledger's grant of that id is not the
// one its plan names and this one is: for the moment between the switch
// and the update moving them into the ledger, so that the update leaves
// the previous install or the new one in force, never neither. A writer
// finding them after an update was killed moves them into the ledger if
// the plans name them, and drops them if not.
const PendingDir = "pending"

// GrantFile is the file name, under the ledger's directory, of grant id:
// id.json, or, for an id too long to be a file name within a temporary
// file's name, h-<sha256 of id>.json (a hash cannot be an id, which holds
// '+'). An id grows with the package's name and the hook's or tool's id,
// and no file name of the store may grow without bound.
func GrantFile(id string) string {
	if len(id) <= maxNameBytes {
		return id + ".json"
	}
	return HashedName(id) + ".json"
}

// HashedName is the name of a store file for a component too long to be
// one: h-<sha256 of it>.
func HashedName(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "h-" + hex.EncodeToString(sum[:])
}

// maxNameBytes bounds a name the store derives from a package's names:
// with its suffix and a temporary file's prefix and random part, it stays
// well under the 255 bytes of a file name.
const maxNameBytes = 128

// ParseGrantID splits a grant id GrantID built into its provider, package,
// kind and item. Revoke matches ledger file names with it, so that a grant
// whose file is corrupt can still be revoked.
func ParseGrantID(id string) (provider string, pkg PackageIdentity, kind, item string, err error) {
	parts := strings.SplitN(id, "+", 5)
	if len(parts) != 5 {
		return "", PackageIdentity{}, "", "", fmt.Errorf("grant id %q: want PROVIDER+SOURCE+NAME+KIND+ITEM", id)
	}
	for _, p := range parts {
		if p == "" {
			return "", PackageIdentity{}, "", "", fmt.Errorf("grant id %q: empty part", id)
		}
	}
	if parts[3] != "tool" && parts[3] != "hook" && !IsMemberKind(parts[3]) {
		return "", PackageIdentity{}, "", "", fmt.Errorf("grant id %q: kind %q is none of tool, hook, skill, agent", id, parts[3])
	}
	return parts[0], PackageIdentity{Source: parts[1], Name: parts[2]}, parts[3], parts[4], nil
}

// NewGrant makes the grant of binds, a *ToolBinds, a *HookBinds or a
// *MemberBinds.
func NewGrant(kind, provider string, pkg PackageIdentity, item string, binds any, now string) (*Grant, error) {
	c, err := Canonical(binds)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(c)
	return &Grant{
		Schema: 1, ID: GrantID(provider, pkg, kind, item), Digest: hex.EncodeToString(sum[:]),
		Kind: kind, Provider: provider, Package: pkg.String(), Source: pkg.Source, Item: item,
		ApprovedAt: now, Binds: c,
	}, nil
}

// Decode decodes what g binds, a *ToolBinds, a *HookBinds or a
// *MemberBinds by its kind,
// and checks that its digest is the digest of that: a grant whose binds
// were edited, its digest kept, is refused. It digests what the bytes
// decode to, encoded canonically again, not the bytes: the ledger file
// holds them indented and HTML-escaped (json.Marshal escapes <, > and &
// in a json.RawMessage).
func (g *Grant) Decode() (any, error) {
	var v any
	switch g.Kind {
	case GrantTool:
		v = new(ToolBinds)
	case GrantHook:
		v = new(HookBinds)
	case GrantSkill, GrantAgent:
		v = new(MemberBinds)
	default:
		return nil, fmt.Errorf("unknown grant kind %q", g.Kind)
	}
	if err := json.Unmarshal(g.Binds, v); err != nil {
		return nil, fmt.Errorf("binds: %v", err)
	}
	d, err := Digest(v)
	if err != nil {
		return nil, err
	}
	if d != g.Digest {
		return nil, fmt.Errorf("digest %s is not the digest of what it binds (%s)", g.Digest, d)
	}
	return v, nil
}

// Verify checks that the digest is the digest of what the grant binds.
func (g *Grant) Verify() error {
	_, err := g.Decode()
	return err
}
