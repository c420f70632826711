package dispatch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"dalo/internal/regular"
	"dalo/plan"
)

// maxGrantFile bounds the read of one grant file of the ledger.
const maxGrantFile = 1 << 20

// reinstall ends every diagnostic of a plan that disagrees with its grants:
// install writes the plan from them again.
const reinstall = "; run 'dalo plugin install' again"

// checkTrust re-checks, just before a run of h on the native event of
// provider, everything the plan was built from (docs/design.md §7): both grants
// of the hook still exist in the ledger with the digests the plan names
// (revoke deletes the file; a new approval changes the digest) and with the
// kind, provider, package and item the plan names; each grant's digest is
// the digest of what it binds (a grant edited by hand is refused); the
// plan asks for nothing but what they bind, field by field; the staged
// root is the content address of the bound files; and the staged tree
// holds exactly those files, each with its sha256 and executable bit.
// The plan is only a fast copy of the grants: whoever edits it changes
// nothing a handler run does. The error says what differs.
//
// It also returns what the ledger's grant of the hook binds, when that
// grant is whole, even with an error: a failing hook is judged by the
// failure policy its grant binds, not by the one a plan may claim.
func checkTrust(home, provider, event string, h *plan.PlannedHook) (*plan.HookBinds, error) {
	pkg, ok := packageOf(h.Package)
	if !ok {
		return nil, fmt.Errorf("the plan's package %q is not SOURCE:NAME%s", h.Package, reinstall)
	}
	hookID := plan.GrantID(provider, pkg, "hook", h.Hook)
	toolID := plan.GrantID(provider, pkg, "tool", h.Tool.ID)
	// The hook's own grant, by the id the ledger gives it, is read first:
	// its policy judges every failure below. (Reading the two grants
	// concurrently was measured slower: the dispatcher is a short-lived
	// process, and a goroutine's start costs more than a grant's read.)
	hg, hb, err := readGrantFor(home, "hook", hookID, h.HookGrant.Digest)
	if err != nil {
		return nil, fmt.Errorf("hook grant: %w", err)
	}
	hbinds := hb.(*plan.HookBinds)
	if err := checkGrantRef("hook", h.HookGrant, hg, provider, h.Package, h.Hook); err != nil {
		return hbinds, err
	}
	if err := checkHook(h, hbinds, provider, event, hookID); err != nil {
		return hbinds, err
	}
	tg, tb, err := readGrantFor(home, "tool", toolID, h.ToolGrant.Digest)
	if err != nil {
		return hbinds, fmt.Errorf("tool grant: %w", err)
	}
	tbinds := tb.(*plan.ToolBinds)
	if err := checkGrantRef("tool", h.ToolGrant, tg, provider, h.Package, h.Tool.ID); err != nil {
		return hbinds, err
	}
	if hbinds.Tool != h.Tool.ID || hbinds.ToolDigest != tg.Digest {
		return hbinds, fmt.Errorf("hook grant %s binds tool %s with digest %s, not the tool grant %s with digest %s%s", hookID, hbinds.Tool, hbinds.ToolDigest, tg.ID, tg.Digest, reinstall)
	}
	if err := checkTool(home, &h.Tool, tbinds, toolID); err != nil {
		return hbinds, err
	}
	return hbinds, checkStaged(h.Tool.Root, tbinds.Files)
}

// packageOf splits a plan's SOURCE:NAME.
func packageOf(ref string) (plan.PackageIdentity, bool) {
	src, name, ok := strings.Cut(ref, ":")
	if !ok || src == "" || name == "" || strings.Contains(name, ":") || strings.Contains(ref, "+") {
		return plan.PackageIdentity{}, false
	}
	return plan.PackageIdentity{Source: src, Name: name}, true
}

// readGrantFor reads the grant id of the ledger, or, when the ledger's is
// missing or not the one the plan names by its digest want, the grant of
// that id an update is writing (plan.PendingDir) if it is that one. The
// errors are the ledger's.
func readGrantFor(home, kind, id, want string) (*plan.Grant, any, error) {
	g, binds, err := readGrant(home, "grants", kind, id)
	if err == nil && g.Digest == want {
		return g, binds, nil
	}
	if pg, pb, perr := readGrant(home, plan.PendingDir, kind, id); perr == nil && pg.Digest == want {
		return pg, pb, nil
	}
	return g, binds, err
}

// readGrant reads the grant id in the directory dir of the store (the
// ledger, or the pending grants), a regular file of bounded size, and
// decodes what it binds, a *plan.ToolBinds or a *plan.HookBinds by kind,
// refusing it unless its digest is the digest of that.
func readGrant(home, dir, kind, id string) (*plan.Grant, any, error) {
	if id == "" || !filepath.IsLocal(id) || filepath.Base(id) != id {
		return nil, nil, fmt.Errorf("grant id %q is not a file name", id)
	}
	name := filepath.Join(home, dir, plan.GrantFile(id))
	f, _, err := regular.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s is revoked (%s does not exist)", id, name)
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGrantFile+1))
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > maxGrantFile {
		return nil, nil, fmt.Errorf("reading %s: over %d bytes", name, maxGrantFile)
	}
	// The binds are decoded in the same pass as the grant, into the type
	// of the kind its id says, and digested as plan.Grant.Decode does:
	// one scan of the file, on the hot path.
	g, binds, err := plan.DecodeGrant(data, kind)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %v", name, err)
	}
	if g.ID != id || g.Kind != kind {
		return nil, nil, fmt.Errorf("%s is corrupt: it is the %s grant %q", name, g.Kind, g.ID)
	}
	d, err := plan.Digest(binds)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %v", name, err)
	}
	if d != g.Digest {
		return nil, nil, fmt.Errorf("%s was edited since it was approved: digest %s is not the digest of what it binds (%s)", name, g.Digest, d)
	}
	return g, binds, nil
}

// checkGrantRef holds the grant g, of kind, to the plan's reference to it
// and to the plan's provider, package and item.
func checkGrantRef(kind string, ref plan.GrantRef, g *plan.Grant, provider, pkg, item string) error {
	switch {
	case ref.ID != g.ID:
		return fmt.Errorf("the plan's %s_grant names %q, not %s, the grant of %s %s%s", kind, ref.ID, g.ID, kind, item, reinstall)
	case g.Kind != kind || g.Provider != provider || g.Package != pkg || g.Item != item:
		return fmt.Errorf("%s grant %s is of %s %s of %s on %s, not of %s %s of %s on %s%s", kind, g.ID, g.Kind, g.Item, g.Package, g.Provider, kind, item, pkg, provider, reinstall)
	case g.Digest != ref.Digest:
		return fmt.Errorf("%s grant: %s changed since install (it has digest %q, the plan wants %q)%s", kind, g.ID, g.Digest, ref.Digest, reinstall)
	}
	return nil
}

// differs is the diagnostic of a plan field that is not what a grant binds.
func differs(field, kind, id string) error {
	return fmt.Errorf("the plan's %s differs from what %s grant %s binds%s", field, kind, id, reinstall)
}

// checkHook holds the plan's hook to what its grant binds. The matcher is
// compared as bound, order included: install copies it verbatim, so no
// plan of an honest install differs in it, and a matcher is what decides
// whether a gate runs at all.
func checkHook(h *plan.PlannedHook, b *plan.HookBinds, provider, event, id string) error {
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"package", b.Package.String() == h.Package},
		{"provider", b.Provider == provider},
		{"hook id", b.Hook == h.Hook},
		{"native event", b.NativeEvent == event || slices.Contains(b.AlsoEvents, event)},
		{"subject", b.Subject == h.Subject},
		{"phase", b.Phase == h.Phase},
		{"effect", b.Effect == h.Effect},
		{"requirement", b.Requirement == h.Requirement},
		{"matcher (tool_names)", slices.Equal(b.Matcher, h.ToolNames)},
		{"bindings", slices.Equal(b.Bindings, h.Bindings)},
		{"timeout_ms", b.TimeoutMS == h.TimeoutMS},
		{"failure_policy", b.FailurePolicy == h.FailurePolicy},
		{"error_visibility", b.ErrorVisibility == h.ErrorVisibility},
		{"tool", b.Tool == h.Tool.ID},
	} {
		if !f.ok {
			return differs(f.name, "hook", id)
		}
	}
	return nil
}

// checkTool holds the plan's tool to what its grant binds, and its staged
// root to the content address of the bound files under home.
func checkTool(home string, t *plan.PlannedTool, b *plan.ToolBinds, id string) error {
	files := len(t.Files) == len(b.Files)
	for rel, sum := range t.Files {
		if d, ok := b.Files[rel]; !ok || d.SHA256 != sum {
			files = false
		}
	}
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"tool id", b.Tool == t.ID},
		{"runtime", b.Runtime == t.Runtime},
		{"entry", b.Entry == t.Entry},
		{"argv", slices.Equal(b.Argv, t.Argv)},
		{"env", slices.Equal(b.Env, t.Env)},
		{"inputs", slices.Equal(b.Inputs, t.Inputs)},
		{"files", files},
	} {
		if !f.ok {
			return differs(f.name, "tool", id)
		}
	}
	// The interpreter is no part of a grant: it is the rules' for the
	// bound runtime (plan.Runtimes), and no plan names one (see
	// newCommand).
	if _, ok := plan.Runtimes[t.Runtime]; !ok {
		return fmt.Errorf("runtime %q of tool grant %s is not one this dalo runs%s", t.Runtime, id, reinstall)
	}
	if _, ok := b.Files[t.Entry]; !ok {
		return fmt.Errorf("tool grant %s binds no file %s, its entry%s", id, t.Entry, reinstall)
	}
	if want := filepath.Join(home, "staged", plan.TreeDigest(b.Files)); t.Root != want {
		return fmt.Errorf("the plan's tool root %s is not %s, where the files tool grant %s binds are staged%s", t.Root, want, id, reinstall)
	}
	return nil
}

// checkStaged checks that the staged tree root holds exactly files (see
// plan.CheckTree), each a regular file with its size, sha256 and
// executable bit.
func checkStaged(root string, files map[string]plan.FileDigest) error {
	if err := plan.CheckTree(root, files); err != nil {
		return fmt.Errorf("staged tree changed: %v", err)
	}
	buf := make([]byte, 32<<10)
	for rel, want := range files {
		if !filepath.IsLocal(filepath.FromSlash(rel)) {
			return fmt.Errorf("staged file %q is outside the tool root", rel)
		}
		name := filepath.Join(root, filepath.FromSlash(rel))
		f, fi, err := regular.Open(name)
		if err != nil {
			return fmt.Errorf("staged file changed: %v", err)
		}
		size := fi.Size()
		if exec := fi.Mode().Perm()&0o100 != 0; exec != want.Executable {
			f.Close()
			return fmt.Errorf("staged file changed: %s has mode %v, approved executable %t", name, fi.Mode().Perm(), want.Executable)
		}
		// Read no more than the size fstat gave: a file that grows while
		// it is read is changed, and is never read without end.
		h := sha256.New()
		n, err := io.CopyBuffer(h, io.LimitReader(f, size+1), buf)
		f.Close()
		if err != nil {
			return fmt.Errorf("staged file changed: reading %s: %v", name, err)
		}
		if n > size {
			return fmt.Errorf("staged file changed: %s grew while it was read", name)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != want.SHA256 || n != want.Size {
			return fmt.Errorf("staged file changed: %s has sha256 %s, approved %s", name, got, want.SHA256)
		}
	}
	return nil
}
