package live

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"dalo/plan"
	provtables "dalo/providers"
)

// Results is what one run of the live suite proved: the provider tables it
// drove and the outcome of each test. A run writes it when it ends
// (DALO_LIVE_RESULTS, else <DALO_HARNESS_DIR>/results/<tables>.json), so
// that a later step can hold each table's claims to the tests they cite:
// a test that exists is not a test that passed.
type Results struct {
	// Tables maps the key of each table the run drove (claude@2.1.233)
	// to what its harness printed for --version.
	Tables map[string]string `json:"tables"`
	// Tests maps each test and subtest that ran, by its full name
	// (TestSession/claude), to its outcome.
	Tests map[string]Outcome `json:"tests"`
}

// An Outcome is how one test ended, and against which tables.
type Outcome struct {
	// Status is "pass", "fail" or "skip". A test whose every subtest
	// skipped is "skip", whatever go test printed for it.
	Status string `json:"status"`
	// Tables are the keys of the tables whose harness the test or one of
	// its subtests ran.
	Tables []string `json:"tables,omitempty"`
}

// Write writes r to path, creating its directory.
func (r *Results) Write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return plan.WriteFile(path, "."+filepath.Base(path), append(b, '\n'), 0o644, nil)
}

// A Proof is what the runs of the live suite proved, by table: for each
// table key, the outcome ("pass" or "fail") of each test that drove that
// table's harness.
type Proof map[string]map[string]string

// Status returns how test (a name as go test prints it, TestSession/claude)
// ended against table (name@version): "pass", "fail", or "" when no run
// drove that table's harness in it.
func (p Proof) Status(table, test string) string {
	return p[table][test]
}

// ReadProof reads the results of every run written in dir (its *.json
// files). A test failed against a table when some run of it failed there,
// and passed when some run passed and none failed.
func ReadProof(dir string) (Proof, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no live test results in %s: run the live suite first", dir)
	}
	p := Proof{}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var r Results
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for key := range r.Tables {
			if p[key] == nil {
				p[key] = map[string]string{}
			}
		}
		for name, o := range r.Tests {
			if o.Status == "skip" {
				continue
			}
			for _, key := range o.Tables {
				if p[key] == nil {
					p[key] = map[string]string{}
				}
				if p[key][name] != "fail" {
					p[key][name] = o.Status
				}
			}
		}
	}
	return p, nil
}

// ResultsName is the file name a run that drove tables writes its results
// under: the keys joined by "+".
func ResultsName(tables []string) string {
	return strings.Join(tables, "+") + ".json"
}

// A ClaimProof is one claim of a provider table with how each live test it
// cites ended against that table.
type ClaimProof struct {
	provtables.ClaimEvidence
	// Outcomes is Status of each of Tests(), in order.
	Outcomes []string
}

// Proved reports whether the claim cites a live test and every test it
// cites passed against its table.
func (c ClaimProof) Proved() bool {
	return len(c.Outcomes) > 0 && !slices.ContainsFunc(c.Outcomes, func(o string) bool { return o != "pass" })
}

// Failed reports whether a test the claim cites failed against its table:
// the harness contradicts the claim.
func (c ClaimProof) Failed() bool {
	return slices.Contains(c.Outcomes, "fail")
}

// Claims returns every claim of t with the outcome of each test it cites.
// A test of another package than this one did not run here ("").
func (p Proof) Claims(t *provtables.Table) ([]ClaimProof, error) {
	claims, err := t.Claims()
	if err != nil {
		return nil, err
	}
	out := make([]ClaimProof, len(claims))
	for i, c := range claims {
		out[i].ClaimEvidence = c
		for _, ref := range c.Tests() {
			status := ""
			if name, ok := strings.CutPrefix(ref, Package+" "); ok {
				status = p.Status(t.Key(), name)
			}
			out[i].Outcomes = append(out[i].Outcomes, status)
		}
	}
	return out, nil
}

// Package is this package's directory in the module, as a test: evidence
// names it.
const Package = "internal/live"
