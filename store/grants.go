package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"

	"dalo/plan"
)

// A GrantUse is an installed hook whose plan names a grant: dispatch runs
// it only while the ledger holds that grant with Digest.
type GrantUse struct {
	Provider      string
	Project       string // the project whose scope holds the install; "" the user's own
	Package       string // source:name
	Hook          string
	Digest        string // the digest the plan wants
	Effect        string
	FailurePolicy string // what the hook does when it cannot run
}

// Failing says what the user sees while dispatch cannot run the hook (its
// grant revoked or replaced): its failure policy applies at every event it
// matches, and under fail_closed it does what the rules say for its effect
// (#FailClosed), as dispatch does.
func (u GrantUse) Failing() string {
	if u.FailurePolicy == plan.PolicyFailClosed {
		switch plan.FailClosed[u.Effect] {
		case plan.FailDeny:
			return "under its fail_closed policy every action it guards is denied, with a failure message"
		case plan.FailContinue:
			return fmt.Sprintf("under its fail_closed policy every stop it matches asks for another workflow pass, with a failure message (at most %d passes in a row, then the agent may stop)", plan.FailClosedPasses)
		}
	}
	return fmt.Sprintf("under its %s policy every event it matches shows you a failure message", u.FailurePolicy)
}

// GrantUses lists the installed hooks, on any provider, whose plans name
// grant id (as their tool grant or their hook grant).
func (s *Store) GrantUses(id string) ([]GrantUse, error) {
	provider, _, _, _, err := plan.ParseGrantID(id)
	if err != nil {
		return nil, err
	}
	// The ledger serves every scope: a project's installs use its grants
	// as the user's own do.
	scopes, err := s.allScopes()
	if err != nil {
		return nil, err
	}
	var out []GrantUse
	for _, sc := range scopes {
		in, err := sc.Installed(provider)
		if err != nil {
			return nil, err
		}
		for _, ip := range in.Packages {
			for _, h := range ip.Hooks {
				for _, ref := range []plan.GrantRef{h.Hook.ToolGrant, h.Hook.HookGrant} {
					u := GrantUse{Provider: provider, Project: sc.Project(), Package: ip.Package, Hook: h.Hook.Hook, Digest: ref.Digest, Effect: h.Hook.Effect, FailurePolicy: h.Hook.FailurePolicy}
					// A hook installed on several native events uses it once.
					if ref.ID == id && !slices.Contains(out, u) {
						out = append(out, u)
					}
				}
			}
		}
	}
	return out, nil
}

// Where says where the hook is installed: on its provider, in the user's
// own configuration or in a project's.
func (u GrantUse) Where() string {
	if u.Project == "" {
		return u.Provider
	}
	return u.Provider + " in project " + u.Project
}

// Reinstall says, quoted, the command that installs the hook again with
// the grants approved now: 'dalo sync' in a project dalo synced.
func (u GrantUse) Reinstall() string {
	if u.Project == "" {
		return fmt.Sprintf("'dalo plugin install %s --provider %s'", u.Package, u.Provider)
	}
	return "'dalo sync' in " + u.Project
}

func (s *Store) grantPath(id string) string { return s.path("grants", plan.GrantFile(id)) }

// Grant reads one grant; a missing grant is fs.ErrNotExist.
func (s *Store) Grant(id string) (*plan.Grant, error) {
	g, err := s.readGrant(s.grantPath(id))
	if err != nil {
		return nil, err
	}
	if g.ID != id {
		return nil, fmt.Errorf("%s is corrupt: its id is %q", s.grantPath(id), g.ID)
	}
	return g, nil
}

// grantFile reads the grant in the ledger's file name, whatever its id.
func (s *Store) grantFile(name string) (*plan.Grant, error) {
	g, err := s.readGrant(s.path("grants", name))
	if err != nil {
		return nil, err
	}
	if plan.GrantFile(g.ID) != name {
		return nil, fmt.Errorf("%s is corrupt: it holds grant %q", s.path("grants", name), g.ID)
	}
	return g, nil
}

func (s *Store) readGrant(file string) (*plan.Grant, error) {
	var g plan.Grant
	if err := readJSON(file, &g); err != nil {
		return nil, err
	}
	if err := g.Verify(); err != nil {
		return nil, fmt.Errorf("%s is corrupt: %v", file, err)
	}
	return &g, nil
}

// grantIDOf is the id of the grant in the ledger's file name: the name, or
// for a hashed one the id the file holds ("" when it cannot be read).
func (s *Store) grantIDOf(name string) string {
	id, ok := strings.CutSuffix(name, ".json")
	if !ok || !strings.HasPrefix(id, "h-") {
		return id
	}
	var g struct {
		ID string `json:"id"`
	}
	if readJSON(s.path("grants", name), &g) != nil || plan.GrantFile(g.ID) != name {
		return ""
	}
	return g.ID
}

// Grants reads the whole ledger, sorted by id. A corrupt grant is an error
// naming its file.
func (s *Store) Grants() ([]*plan.Grant, error) {
	ents, err := os.ReadDir(s.path("grants"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the ledger: %w", err)
	}
	var out []*plan.Grant
	for _, e := range ents {
		name := e.Name()
		if isTemp(name) || !strings.HasSuffix(name, ".json") {
			continue
		}
		g, err := s.grantFile(name)
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
func (s *Store) PutGrants(gs []*plan.Grant) error {
	if err := os.MkdirAll(s.path("grants"), 0o700); err != nil {
		return fmt.Errorf("writing the ledger: %w", err)
	}
	for i, g := range gs {
		if err := writeFile(s.grantPath(g.ID), grantBytes(g), 0o600); err != nil {
			return err
		}
		if i == 0 {
			step("approve:first-grant")
		}
	}
	return nil
}

// grantBytes is a grant's file in the ledger: indented JSON.
func grantBytes(g *plan.Grant) []byte {
	var b bytes.Buffer
	json.Indent(&b, mustJSON(g), "", "  ") // our own JSON: it indents
	b.WriteByte('\n')
	return b.Bytes()
}

// DeleteGrants removes grants from the ledger, and any pending grant of
// the same id (see plan.PendingDir), under the lock the caller holds; they
// stop being honoured at the next dispatch.
func (s *Store) DeleteGrants(ids []string) error {
	for i, id := range ids {
		if err := os.Remove(s.grantPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("revoking %s: %w", id, err)
		}
		if err := os.Remove(s.path(plan.PendingDir, plan.GrantFile(id))); err != nil && !errors.Is(err, fs.ErrNotExist) {
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
