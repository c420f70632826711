package dispatch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"dalo/internal/regular"
	"dalo/store/plan"
)

// maxGrantFile bounds the read of one grant file of the ledger.
const maxGrantFile = 1 << 20

// checkTrust re-checks, just before a run, what the plan was built from:
// both grants still exist in the ledger with the digests the plan names
// (revoke deletes the file; a new approval changes the digest), and every
// staged file of the tool still has its sha256. The error says which.
func checkTrust(home string, h *plan.PlannedHook) error {
	for _, g := range []struct {
		what string
		ref  plan.GrantRef
	}{{"tool", h.ToolGrant}, {"hook", h.HookGrant}} {
		if err := checkGrant(home, g.ref); err != nil {
			return fmt.Errorf("%s grant: %w", g.what, err)
		}
	}
	return checkStaged(&h.Tool)
}

func checkGrant(home string, ref plan.GrantRef) error {
	if ref.ID == "" || !filepath.IsLocal(ref.ID) || filepath.Base(ref.ID) != ref.ID {
		return fmt.Errorf("grant id %q is not a file name", ref.ID)
	}
	name := filepath.Join(home, "grants", ref.ID+".json")
	f, _, err := regular.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s is revoked (%s does not exist)", ref.ID, name)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGrantFile))
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	var g struct {
		Digest string `json:"digest"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		return fmt.Errorf("reading %s: %v", name, err)
	}
	if g.Digest != ref.Digest {
		return fmt.Errorf("%s changed since install (%s has digest %q, the plan wants %q)", ref.ID, name, g.Digest, ref.Digest)
	}
	return nil
}

// checkStaged hashes every staged file of t, the entry included.
func checkStaged(t *plan.PlannedTool) error {
	if !filepath.IsAbs(t.Root) {
		return fmt.Errorf("staged tool root %q is not absolute", t.Root)
	}
	if _, ok := t.Files[t.Entry]; !ok {
		return fmt.Errorf("staged entry %s has no digest in the plan", t.Entry)
	}
	buf := make([]byte, 32<<10)
	for rel, want := range t.Files {
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("staged file %q is outside the tool root", rel)
		}
		name := filepath.Join(t.Root, rel)
		f, fi, err := regular.Open(name)
		if err != nil {
			return fmt.Errorf("staged file changed: %v", err)
		}
		size := fi.Size()
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
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			return fmt.Errorf("staged file changed: %s has sha256 %s, approved %s", name, got, want)
		}
	}
	return nil
}
