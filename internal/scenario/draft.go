package scenario

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/format"
	cuejson "cuelang.org/go/encoding/json"

	"dalo/providers"
)

// A Draft is what a run of the scenarios proved of one harness version,
// as a provider table written from the nearest table's claims.
type Draft struct {
	// Table is the source of the local table, in the #Provider schema
	// with its verified field; nil when Blocked.
	Table []byte
	// Held, Failed and Untried count the claims by what became of them.
	Held, Failed, Untried int
	// Blocked are the core scenarios that failed: a version on which one
	// fails gets no table.
	Blocked []Result
}

// A Verified is the date a table was verified on this machine, and the
// dalo that did it: the verified field of a local table.
type Verified struct {
	Date string `json:"date"`
	Dalo string `json:"dalo"`
}

// DraftTable writes the table of harness version (whose --version printed
// versionOutput) from near, the nearest table, and results, the runs of
// the scenarios on that version. Each claim of near whose cited live
// tests a scenario tried, and none of them failed, holds: its evidence
// becomes "verified: <scenario> <date>". A claim a scenario failed turns
// unsupported with what the run showed as its reason. A claim no scenario
// tried (a doc:, another version's recording or finding, a live test no
// scenario is) is unsupported too: evidence is never inherited. A claim
// that cannot be unsupported (where the harness keeps its configuration,
// a native payload's keys) keeps its value with a doc: evidence saying
// that this machine did not show it. A core scenario that failed blocks
// the table.
func DraftTable(near *providers.Table, version, versionOutput string, results []Result, v Verified) (*Draft, error) {
	d := &Draft{}
	for _, r := range results {
		if r.Scenario.Core && !r.Held() {
			d.Blocked = append(d.Blocked, r)
		}
	}
	if len(d.Blocked) > 0 {
		return d, nil
	}
	src, err := providers.Source(near)
	if err != nil {
		return nil, err
	}
	data, err := tableData(near.File, src)
	if err != nil {
		return nil, err
	}
	byName := map[string]Result{}
	for _, r := range results {
		byName[r.Scenario.Name] = r
	}
	data["version"] = version
	if in, ok := data["install"].(string); ok {
		data["install"] = strings.ReplaceAll(in, near.Version, version)
	}
	dw := draftWalk{near: near, version: version, date: v.Date, results: byName, d: d, shown: map[string]bool{}}
	dw.object(data, "")
	if vo, ok := data["version_output"].(map[string]any); ok {
		// The harness printed it here, before any scenario ran.
		vo["text"] = versionOutput
		vo["evidence"] = []any{"verified: version " + v.Date}
	}
	data["verified"] = map[string]any{"date": v.Date, "dalo": v.Dalo}
	d.Table, err = formatTable(near, version, v, data)
	return d, err
}

// tableData returns a table's own data, as its file writes it: no field
// the schema computes (a row's event), hidden fields resolved away.
func tableData(file string, src []byte) (map[string]any, error) {
	v := cuecontext.New().CompileBytes(src, cue.Filename(file))
	if err := v.Err(); err != nil {
		return nil, fmt.Errorf("provider table %s: %w", file, err)
	}
	b, err := v.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("provider table %s: %w", file, err)
	}
	var data map[string]any
	return data, json.Unmarshal(b, &data)
}

// draftWalk rewrites every claim of a table's data.
type draftWalk struct {
	near    *providers.Table
	version string
	date    string
	results map[string]Result
	d       *Draft
	// shown are the paths of the claims a scenario held.
	shown map[string]bool
}

func (w *draftWalk) object(obj map[string]any, path string) {
	if evs, ok := obj["evidence"].([]any); ok {
		if !w.claim(obj, path, evs) {
			for k := range keptUnsupported {
				if v, ok := obj[k].(map[string]any); ok {
					w.object(v, path+"."+k)
				}
			}
			return
		}
	}
	for _, k := range sortedKeys(obj) {
		sub := path + "." + k
		switch v := obj[k].(type) {
		case map[string]any:
			w.object(v, sub)
			if k == "also" {
				w.dropUnshown(obj, k, v, sub)
			}
		case []any:
			for i, e := range v {
				if m, ok := e.(map[string]any); ok {
					w.object(m, fmt.Sprintf("%s[%d]", sub, i))
				}
			}
		}
	}
}

// claim rewrites the claim obj at path, whose evidence is evs, and reports
// whether its children are still there to rewrite.
func (w *draftWalk) claim(obj map[string]any, path string, evs []any) bool {
	var held []string
	var failed []Result
	for _, ev := range evs {
		s, _ := ev.(string)
		ref, ok := strings.CutPrefix(s, "test: internal/live ")
		if !ok {
			continue
		}
		sc, _ := Tried(ref)
		if sc == nil {
			continue
		}
		r, ran := w.results[sc.Name]
		switch {
		case !ran:
		case r.Held():
			held = append(held, sc.Name)
		default:
			failed = append(failed, r)
		}
	}
	_, hasStatus := obj["status"]
	switch {
	case len(failed) > 0:
		w.d.Failed++
		names, whys := []string{}, []string{}
		for _, r := range failed {
			names = append(names, r.Scenario.Name)
			whys = append(whys, r.Why())
		}
		if !hasStatus {
			obj["evidence"] = []any{fmt.Sprintf("doc: not shown on this machine on %s: scenario %s failed: %s",
				w.date, strings.Join(names, ", "), strings.Join(whys, "; "))}
			return true
		}
		unsupported(obj, fmt.Sprintf("%s %s does not do this (shown by dalo providers verify on %s): %s",
			w.near.Harness, w.version, w.date, strings.Join(whys, "; ")), verifiedBy(names, w.date))
		return false
	case len(held) > 0:
		w.d.Held++
		w.shown[path] = true
		obj["evidence"] = verifiedBy(held, w.date)
		return true
	}
	w.d.Untried++
	if !hasStatus || obj["status"] == "unsupported" {
		if hasStatus {
			// Unsupported on the nearest version: nothing to promise
			// here either, and nothing was shown.
			obj["reason"] = fmt.Sprintf("not verified on %s %s: %v", w.near.Harness, w.version, obj["reason"])
		}
		obj["evidence"] = []any{fmt.Sprintf("doc: not tried on this machine; as the table of %s says", w.near.Key())}
		return !hasStatus
	}
	unsupported(obj, fmt.Sprintf("no scenario of dalo providers verify tries this on %s %s, and nothing is promised without a run",
		w.near.Harness, w.version), []any{fmt.Sprintf("doc: not tried on this machine on %s", w.date)})
	return false
}

// dropUnshown removes from also, the map obj[key] at path, each further
// native event of a row no scenario showed: install writes hooks there,
// so one the version may not have (Claude Code 2.1.331 has no
// PreSkillShellCommand) is no promise of the local table, nor an event to
// write; with none left, the row has no also.
func (w *draftWalk) dropUnshown(obj map[string]any, key string, also map[string]any, path string) {
	for e := range also {
		if !w.shown[path+"."+e] {
			delete(also, e)
		}
	}
	if len(also) == 0 {
		delete(obj, key)
	}
}

// keptUnsupported is what an unsupported claim still states: a project
// scope's folder trust, which #Provider requires whether dalo installs in
// the project or not (doctor says it either way).
var keptUnsupported = map[string]bool{"trust": true}

// unsupported turns obj into an unsupported claim.
func unsupported(obj map[string]any, reason string, evidence []any) {
	for k := range obj {
		if !keptUnsupported[k] {
			delete(obj, k)
		}
	}
	obj["status"] = "unsupported"
	obj["reason"] = reason
	obj["evidence"] = evidence
}

// verifiedBy is the evidence of a claim the scenarios names held.
func verifiedBy(names []string, date string) []any {
	sort.Strings(names)
	names = slices.Compact(names)
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = "verified: " + n + " " + date
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// formatTable writes data as a CUE file, its top-level fields in the
// nearest table's order.
func formatTable(near *providers.Table, version string, v Verified, data map[string]any) ([]byte, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	expr, err := cuejson.Extract("table", b)
	if err != nil {
		return nil, err
	}
	lit, ok := expr.(*ast.StructLit)
	if !ok {
		return nil, fmt.Errorf("table is not an object")
	}
	f := &ast.File{Decls: lit.Elts}
	out, err := format.Node(f)
	if err != nil {
		return nil, err
	}
	header := fmt.Sprintf("// %s %s: verified on this machine on %s by dalo providers verify\n"+
		"// (dalo %s), from the scenarios it carries, starting from the table of\n"+
		"// %s. Each claim a scenario showed holds cites it (verified:); every\n"+
		"// other claim is unsupported, or says it was not tried (doc:).\n\n",
		near.Harness, version, v.Date, v.Dalo, near.Key())
	return append([]byte(header), out...), nil
}
