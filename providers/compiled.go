package providers

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sync"

	"cuelang.org/go/cue"
)

// Refresh compiled.json after changing a table or the rules; the test
// TestCompiledIsCurrent fails until it is refreshed.
//
//go:generate go run ./gen

// compiledJSON is compiled.json as Compile wrote it: Load decodes it
// instead of evaluating CUE, which costs tens of milliseconds per process.
//
//go:embed compiled.json
var compiledJSON []byte

// RefreshCommand is the command that rewrites compiled.json.
const RefreshCommand = "go generate ./providers"

// compiled is the layout of compiled.json.
type compiled struct {
	Note string `json:"note"`
	// Domain orders the answers of each (subject, phase, effect).
	Domain domain          `json:"domain"`
	Tables []compiledTable `json:"tables"`

	byKey map[string]*compiledTable // by name@version, once loaded
}

// domain is what a hook may say besides its (subject, phase, effect), in
// the order that indexes a compiled answer list: the answer to a question
// is at ((policy*len(visibilities) + visibility)*len(requirements) +
// requirement)*2 + has_fallback.
type domain struct {
	FailurePolicies []string `json:"failure_policies"`
	Visibilities    []string `json:"error_visibilities"`
	Requirements    []string `json:"requirements"`
}

// A compiledTable is one table as LoadFS decoded it, with #Capability's
// answer to every question of the admitted domain: Capabilities maps
// subject, phase and effect to indices into Answers, the distinct answers.
type compiledTable struct {
	File         string                                 `json:"file"`
	SHA256       string                                 `json:"sha256"` // of the CUE file
	Table        *Table                                 `json:"table"`
	Answers      []Capability                           `json:"answers"`
	Capabilities map[string]map[string]map[string][]int `json:"capabilities"`
	// Members maps every #MemberInstall question (its key) to an index
	// into MemberAnswers, the distinct answers.
	MemberAnswers []MemberAnswer `json:"member_answers"`
	Members       map[string]int `json:"members"`
}

// Compile compiles the embedded tables and rules from CUE and returns the
// contents of compiled.json: each table decoded, and #Capability's answer
// for every hook row of #Combinations, every effect admitted there, every
// #FailurePolicy, every #Visibility, every requirement #Capability takes,
// with and without a fallback. The output is deterministic.
func Compile() ([]byte, error) { return compileFS(embedded) }

func compileFS(fsys fs.FS) ([]byte, error) {
	ts, root, err := compileTables(fsys)
	if err != nil {
		return nil, err
	}
	var combos map[string]map[string]struct {
		Effects map[string]bool `json:"effects"`
	}
	if err := root.LookupPath(cue.ParsePath("#Combinations")).Decode(&combos); err != nil {
		return nil, fmt.Errorf("provider tables: #Combinations: %w", err)
	}
	var d domain
	for _, e := range []struct {
		path string
		to   *[]string
	}{
		{"#FailurePolicy", &d.FailurePolicies},
		{"#Visibility", &d.Visibilities},
		{"#Capability.requirement", &d.Requirements},
	} {
		if *e.to, err = enum(root.LookupPath(cue.ParsePath(e.path))); err != nil {
			return nil, fmt.Errorf("provider tables: %s: %w", e.path, err)
		}
	}
	out := compiled{
		Note:   "Written by " + RefreshCommand + " from the provider tables and the rules; do not edit.",
		Domain: d,
	}
	for _, t := range ts.all {
		src, err := fs.ReadFile(fsys, t.File)
		if err != nil {
			return nil, fmt.Errorf("provider table %s: %w", t.File, err)
		}
		ct := compiledTable{File: t.File, SHA256: digest(src), Table: t, Capabilities: map[string]map[string]map[string][]int{}}
		seen := map[Capability]int{}
		for _, s := range slices.Sorted(maps.Keys(combos)) {
			ct.Capabilities[s] = map[string]map[string][]int{}
			for _, p := range slices.Sorted(maps.Keys(combos[s])) {
				ct.Capabilities[s][p] = map[string][]int{}
				for _, e := range slices.Sorted(maps.Keys(combos[s][p].Effects)) {
					var idx []int
					for _, fp := range d.FailurePolicies {
						for _, vis := range d.Visibilities {
							for _, req := range d.Requirements {
								for _, fb := range []bool{false, true} {
									for _, mn := range []bool{false, true} {
										c, err := ts.Capability(t, Question{s, p, e, fp, vis, req, fb, mn})
										if err != nil {
											return nil, err
										}
										i, ok := seen[c]
										if !ok {
											i = len(ct.Answers)
											seen[c] = i
											ct.Answers = append(ct.Answers, c)
										}
										idx = append(idx, i)
									}
								}
							}
						}
					}
					ct.Capabilities[s][p][e] = idx
				}
			}
		}
		if err := compileMembers(ts, root, t, &ct); err != nil {
			return nil, err
		}
		out.Tables = append(out.Tables, ct)
	}
	b, err := json.MarshalIndent(out, "", "\t")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// compileMembers asks #MemberInstall every question it takes on t.
func compileMembers(ts *Tables, root cue.Value, t *Table, ct *compiledTable) error {
	def := root.LookupPath(cue.ParsePath("#MemberInstall"))
	var enums [3][]string
	for i, f := range []string{"kind", "requirement", "validation"} {
		var err error
		if enums[i], err = enum(def.LookupPath(cue.MakePath(cue.Str(f)))); err != nil {
			return fmt.Errorf("provider tables: #MemberInstall.%s: %w", f, err)
		}
	}
	ct.Members = map[string]int{}
	seen := map[MemberAnswer]int{}
	for _, k := range enums[0] {
		for _, req := range enums[1] {
			for _, v := range enums[2] {
				for _, fb := range []bool{false, true} {
					q := MemberQuestion{k, req, v, fb}
					a, err := ts.MemberInstall(t, q)
					if err != nil {
						return err
					}
					i, ok := seen[a]
					if !ok {
						i = len(ct.MemberAnswers)
						seen[a] = i
						ct.MemberAnswers = append(ct.MemberAnswers, a)
					}
					ct.Members[q.key()] = i
				}
			}
		}
	}
	return nil
}

// answer returns the compiled answer to q on t, or false when q is outside
// the compiled domain.
func (c *compiled) answer(t *Table, q Question) (Capability, bool) {
	ct, ok := c.byKey[t.Key()]
	if !ok {
		return Capability{}, false
	}
	idx := ct.Capabilities[q.Subject][q.Phase][q.Effect]
	fp := slices.Index(c.Domain.FailurePolicies, q.FailurePolicy)
	vis := slices.Index(c.Domain.Visibilities, q.ErrorVisibility)
	req := slices.Index(c.Domain.Requirements, q.Requirement)
	if idx == nil || fp < 0 || vis < 0 || req < 0 {
		return Capability{}, false
	}
	i := ((fp*len(c.Domain.Visibilities)+vis)*len(c.Domain.Requirements) + req) * 4
	if q.HasFallback {
		i += 2
	}
	if q.MatchesNothing {
		i++
	}
	if i >= len(idx) || idx[i] < 0 || idx[i] >= len(ct.Answers) {
		return Capability{}, false
	}
	return ct.Answers[idx[i]], true
}

// enum returns the strings of a disjunction of string literals.
func enum(v cue.Value) ([]string, error) {
	op, args := v.Expr()
	if op != cue.OrOp {
		return nil, fmt.Errorf("not a disjunction of strings: %v", v)
	}
	out := make([]string, 0, len(args))
	for _, a := range args {
		s, err := a.String()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out, nil
}

func digest(src []byte) string {
	sum := sha256.Sum256(src)
	return hex.EncodeToString(sum[:])
}

// loadCompiled decodes compiled.json for the tables in fsys. When it does
// not hold exactly fsys's tables (a table was added or edited and nobody
// ran RefreshCommand), it compiles them from CUE instead: slower, never
// wrong about a table. Questions outside the compiled domain go to the
// tables compiled from CUE, made on first need.
func loadCompiled(data []byte, fsys fs.FS) (*Tables, error) {
	var c compiled
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("provider tables: compiled.json: %w; run %s", err, RefreshCommand)
	}
	if !matches(c, fsys) {
		return LoadFS(fsys)
	}
	ts := &Tables{
		byKey:    make(map[string]*Table, len(c.Tables)),
		memo:     map[string]Capability{},
		compiled: &c,
		fromCUE:  sync.OnceValues(func() (*Tables, error) { return LoadFS(fsys) }),
	}
	c.byKey = make(map[string]*compiledTable, len(c.Tables))
	for i := range c.Tables {
		ct := &c.Tables[i]
		t := ct.Table
		t.File = ct.File
		if err := t.compilePatterns(); err != nil {
			return nil, fmt.Errorf("provider tables: compiled.json: %s: %w; run %s", t.File, err, RefreshCommand)
		}
		ts.add(t)
		c.byKey[t.Key()] = ct
	}
	ts.sort()
	return ts, nil
}

// matches says whether c was compiled from exactly the tables in fsys.
func matches(c compiled, fsys fs.FS) bool {
	names, err := fs.Glob(fsys, "*/*.cue")
	if err != nil || len(names) != len(c.Tables) {
		return false
	}
	sums := make(map[string]string, len(c.Tables))
	for _, ct := range c.Tables {
		if ct.Table == nil {
			return false
		}
		sums[ct.File] = ct.SHA256
	}
	for _, n := range names {
		src, err := fs.ReadFile(fsys, n)
		if err != nil || sums[n] != digest(src) {
			return false
		}
	}
	return true
}
