package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"dalo/store/plan"
)

// A Grant is one approval in the ledger: a tool or a hook of one package,
// for one provider. Digest is the sha256 of the canonical JSON of Binds,
// which is everything the approval covers (DECISIONS §7); any change to
// what it binds needs a new grant. Dispatch compares Digest with the plan's
// GrantRef before every run.
type Grant struct {
	Schema     int             `json:"schema"`
	ID         string          `json:"id"`
	Digest     string          `json:"digest"`
	Kind       string          `json:"kind"` // tool, hook
	Provider   string          `json:"provider"`
	Package    string          `json:"package"` // source:name
	Source     string          `json:"source"`
	Item       string          `json:"item"` // the tool or hook id
	ApprovedAt string          `json:"approved_at"`
	Binds      json.RawMessage `json:"binds"`
}

// PackageIdentity names a package: its source, its name and its declared id.
type PackageIdentity struct {
	Source string `json:"source"`
	Name   string `json:"name"`
	ID     string `json:"id,omitempty"`
}

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
	Inputs       []plan.PlannedInput   `json:"inputs"`
	Capabilities []string              `json:"capabilities"`
	Platforms    []string              `json:"platforms"`
	Files        map[string]FileDigest `json:"files"`
}

// HookBinds is what a hook grant covers: the package, the event binding
// (subject, phase, native event, matcher, bindings), the effect and how a
// failure is handled, and the tool grant it runs.
type HookBinds struct {
	Package         PackageIdentity       `json:"package"`
	Provider        string                `json:"provider"`
	Hook            string                `json:"hook"`
	Tool            string                `json:"tool"`
	ToolDigest      string                `json:"tool_digest"`
	Subject         string                `json:"subject"`
	Phase           string                `json:"phase"`
	NativeEvent     string                `json:"native_event"`
	Effect          string                `json:"effect"`
	Requirement     string                `json:"requirement"`
	Matcher         []string              `json:"matcher"`
	Bindings        []plan.PlannedBinding `json:"bindings"`
	TimeoutMS       int                   `json:"timeout_ms"`
	FailurePolicy   string                `json:"failure_policy"`
	ErrorVisibility string                `json:"error_visibility"`
}

// canonical is the canonical JSON of v: compact, fields in declaration
// order, map keys sorted, no HTML escaping.
func canonical(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Digest is the sha256 of the canonical JSON of v, in hex.
func Digest(v any) (string, error) {
	c, err := canonical(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// GrantID is the id of the grant of one tool or hook of a package for a
// provider. '+' appears in no part, so ids cannot collide.
func GrantID(provider string, pkg PackageIdentity, kind, item string) string {
	return strings.Join([]string{provider, pkg.Source, pkg.Name, kind, item}, "+")
}

// ParseGrantID splits a grant id GrantID built into its provider, package,
// kind and item. Revoke matches ledger file names with it, so that a grant
// whose file is corrupt can still be revoked.
func ParseGrantID(id string) (provider string, pkg PackageIdentity, kind, item string, err error) {
	parts := strings.Split(id, "+")
	if len(parts) != 5 {
		return "", PackageIdentity{}, "", "", fmt.Errorf("grant id %q: want PROVIDER+SOURCE+NAME+KIND+ITEM", id)
	}
	for _, p := range parts {
		if p == "" {
			return "", PackageIdentity{}, "", "", fmt.Errorf("grant id %q: empty part", id)
		}
	}
	if parts[3] != "tool" && parts[3] != "hook" {
		return "", PackageIdentity{}, "", "", fmt.Errorf("grant id %q: kind %q is neither tool nor hook", id, parts[3])
	}
	return parts[0], PackageIdentity{Source: parts[1], Name: parts[2]}, parts[3], parts[4], nil
}

// A GrantUse is an installed hook whose plan names a grant: dispatch runs
// it only while the ledger holds that grant with Digest.
type GrantUse struct {
	Provider      string
	Package       string // source:name
	Hook          string
	Digest        string // the digest the plan wants
	Effect        string
	FailurePolicy string // what the hook does when it cannot run
}

// Failing says what the user sees while dispatch cannot run the hook (its
// grant revoked or replaced): its failure policy applies at every event it
// matches.
func (u GrantUse) Failing() string {
	switch {
	case u.FailurePolicy == "fail_closed" && u.Effect == "continue_workflow":
		return "under its fail_closed policy every stop it matches asks for another workflow pass, with a failure message"
	case u.FailurePolicy == "fail_closed":
		return "under its fail_closed policy every action it guards is denied, with a failure message"
	}
	return fmt.Sprintf("under its %s policy every event it matches shows you a failure message", u.FailurePolicy)
}

// GrantUses lists the installed hooks, on any provider, whose plans name
// grant id (as their tool grant or their hook grant).
func (s *Store) GrantUses(id string) ([]GrantUse, error) {
	provider, _, _, _, err := ParseGrantID(id)
	if err != nil {
		return nil, err
	}
	in, err := s.Installed(provider)
	if err != nil {
		return nil, err
	}
	var out []GrantUse
	for _, ip := range in.Packages {
		for _, h := range ip.Hooks {
			for _, ref := range []plan.GrantRef{h.Hook.ToolGrant, h.Hook.HookGrant} {
				if ref.ID == id {
					out = append(out, GrantUse{Provider: provider, Package: ip.Package, Hook: h.Hook.Hook, Digest: ref.Digest, Effect: h.Hook.Effect, FailurePolicy: h.Hook.FailurePolicy})
				}
			}
		}
	}
	return out, nil
}

// newGrant makes the grant of binds.
func newGrant(kind, provider string, pkg PackageIdentity, item string, binds any, now string) (*Grant, error) {
	c, err := canonical(binds)
	if err != nil {
		return nil, err
	}
	d, err := Digest(binds)
	if err != nil {
		return nil, err
	}
	return &Grant{
		Schema: 1, ID: GrantID(provider, pkg, kind, item), Digest: d,
		Kind: kind, Provider: provider, Package: pkg.String(), Source: pkg.Source, Item: item,
		ApprovedAt: now, Binds: c,
	}, nil
}

// Verify checks that the digest is the digest of what the grant binds.
func (g *Grant) Verify() error {
	var v any
	switch g.Kind {
	case "tool":
		v = new(ToolBinds)
	case "hook":
		v = new(HookBinds)
	default:
		return fmt.Errorf("unknown grant kind %q", g.Kind)
	}
	if err := json.Unmarshal(g.Binds, v); err != nil {
		return fmt.Errorf("binds: %v", err)
	}
	d, err := Digest(v)
	if err != nil {
		return err
	}
	if d != g.Digest {
		return fmt.Errorf("digest %s is not the digest of what it binds (%s)", g.Digest, d)
	}
	return nil
}

func (s *Store) grantPath(id string) string { return s.path("grants", id+".json") }

// Grant reads one grant; a missing grant is fs.ErrNotExist.
func (s *Store) Grant(id string) (*Grant, error) {
	var g Grant
	if err := readJSON(s.grantPath(id), &g); err != nil {
		return nil, err
	}
	if g.ID != id {
		return nil, fmt.Errorf("%s is corrupt: its id is %q", s.grantPath(id), g.ID)
	}
	if err := g.Verify(); err != nil {
		return nil, fmt.Errorf("%s is corrupt: %v", s.grantPath(id), err)
	}
	return &g, nil
}

// Grants reads the whole ledger, sorted by id. A corrupt grant is an error
// naming its file.
func (s *Store) Grants() ([]*Grant, error) {
	ents, err := os.ReadDir(s.path("grants"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the ledger: %w", err)
	}
	var out []*Grant
	for _, e := range ents {
		name := e.Name()
		if isTemp(name) || !strings.HasSuffix(name, ".json") {
			continue
		}
		g, err := s.Grant(strings.TrimSuffix(name, ".json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // revoked while we listed
		}
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// PutGrants writes grants to the ledger, one atomic file each, under the
// lock the caller holds.
func (s *Store) PutGrants(gs []*Grant) error {
	if err := os.MkdirAll(s.path("grants"), 0o700); err != nil {
		return fmt.Errorf("writing the ledger: %w", err)
	}
	for i, g := range gs {
		var b bytes.Buffer
		if err := json.Indent(&b, mustJSON(g), "", "  "); err != nil {
			return err
		}
		b.WriteByte('\n')
		if err := writeFile(s.grantPath(g.ID), b.Bytes(), 0o600); err != nil {
			return err
		}
		if i == 0 {
			step("approve:first-grant")
		}
	}
	return nil
}

// DeleteGrants removes grants from the ledger under the lock the caller
// holds; they stop being honoured at the next dispatch.
func (s *Store) DeleteGrants(ids []string) error {
	for i, id := range ids {
		if err := os.Remove(s.grantPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("revoking %s: %w", id, err)
		}
		if i == 0 {
			step("revoke:first-grant")
		}
	}
	return plan.SyncDir(s.path("grants"))
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own types, which always marshal
	}
	return data
}
