package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// evidenceKinds are the kinds of evidence a claim may cite (#Evidence in
// cue/provider.cue), strongest first: a live test reruns the claim against
// the real harness on every run of internal/live; a recording or a finding
// was observed once; a documentation reference is a promise nobody ran.
// verified is a local table's: `dalo providers verify` ran the claim's
// scenario against the harness on the user's machine, once, that day.
var evidenceKinds = []string{"test", "verified", "recording", "run", "doc"}

// A ClaimEvidence is one claim of a table, named by its path in the table
// (config.home, rows.tool_call.before.effects.gate), with its evidence.
type ClaimEvidence struct {
	Path     string
	Evidence []string
}

// Kinds returns the kinds of c's evidence, in the order of EvidenceKinds.
func (c ClaimEvidence) Kinds() []string {
	var kinds []string
	for _, k := range evidenceKinds {
		for _, ev := range c.Evidence {
			if strings.HasPrefix(ev, k+": ") {
				kinds = append(kinds, k)
				break
			}
		}
	}
	return kinds
}

// Tests returns the live tests c cites: "<package dir> <Test>[/<subtest>]".
func (c ClaimEvidence) Tests() []string {
	var tests []string
	for _, ev := range c.Evidence {
		if t, ok := strings.CutPrefix(ev, "test: "); ok {
			tests = append(tests, t)
		}
	}
	return tests
}

// checkShipped refuses what only a local table may say in a table dalo
// ships: that it was verified on a user's machine (#Provider.verified, or
// verified: evidence). A shipped claim cites a live test that reruns it, a
// recording, a finding or a document; one machine's run proves nothing
// about the next machine.
func (t *Table) checkShipped() error {
	if t.Verified != nil {
		return fmt.Errorf("provider table %s: verified: a shipped table never says it was verified on one machine; only a local table that 'dalo providers verify' writes does", t.File)
	}
	claims, err := t.Claims()
	if err != nil {
		return err
	}
	for _, c := range claims {
		for _, ev := range c.Evidence {
			if strings.HasPrefix(ev, "verified: ") {
				return fmt.Errorf("provider table %s: %s.evidence: %q: a shipped table cites a test, recording, run or doc; verified: evidence is only a local table's", t.File, c.Path, ev)
			}
		}
	}
	return nil
}

// DocOnly reports whether c rests on documentation alone.
func (c ClaimEvidence) DocOnly() bool {
	return slices.Equal(c.Kinds(), []string{"doc"})
}

// Claims returns every claim of t, in the table's order: every object of
// the decoded table that carries evidence.
func (t *Table) Claims() ([]ClaimEvidence, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("provider table %s: %w", t.Key(), err)
	}
	var w claimWalk
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := w.value(dec, ""); err != nil {
		return nil, fmt.Errorf("provider table %s: walking claims: %w", t.Key(), err)
	}
	var out []ClaimEvidence
	for _, c := range w.claims {
		if c.Evidence != nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// claimWalk walks a table's JSON in order, keeping the encoder's order
// (struct fields as declared, map keys sorted) so the report is stable.
type claimWalk struct {
	claims []ClaimEvidence
}

var ident = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (w *claimWalk) value(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		// The object's slot comes before its children's: a claim is
		// listed before the claims inside it.
		slot := len(w.claims)
		w.claims = append(w.claims, ClaimEvidence{Path: path})
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			if key == "evidence" {
				var evs []string
				if err := dec.Decode(&evs); err != nil {
					return fmt.Errorf("%s.evidence: %w", path, err)
				}
				w.claims[slot].Evidence = evs
				continue
			}
			sub := key
			if !ident.MatchString(key) {
				sub = strconv.Quote(key)
			}
			if path != "" {
				sub = path + "." + sub
			}
			if err := w.value(dec, sub); err != nil {
				return err
			}
		}
		_, err = dec.Token() // }
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := w.value(dec, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ]
		return err
	}
	return nil
}

// EvidenceReport returns the contents of EVIDENCE.md: per table, every
// claim with the kinds of its evidence and the live tests that prove it,
// then the claims that rest on documentation alone. A reviewer reads it to
// see what is proved against the real harness and what is only promised.
// go generate writes it beside compiled_tables.go; a test fails while it is
// stale.
func EvidenceReport() ([]byte, error) {
	ts, err := loadShipped(embedded)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("# Provider table evidence\n\n")
	b.WriteString("Written by `" + RefreshCommand + "` from the provider tables; do not edit.\n\n")
	b.WriteString("Every claim of a table (an object with `evidence` in `providers/<harness>/<version>.cue`)\n")
	b.WriteString("with the kinds of its evidence (`cue/provider.cue` `#Evidence`):\n\n")
	b.WriteString("- **test**: a live test (`internal/live`) drives the real harness through install and a\n")
	b.WriteString("  session and asserts the claim; it is rerun, not only recorded once.\n")
	b.WriteString("- **recording**: a recorded payload in `providers/testdata/recordings`.\n")
	b.WriteString("- **run**: a finding in `providers/testdata/README.md`.\n")
	b.WriteString("- **doc**: a documentation reference; nobody has run it.\n")
	for _, t := range ts.All() {
		claims, err := t.Claims()
		if err != nil {
			return nil, err
		}
		var tested, docOnly int
		for _, c := range claims {
			if len(c.Tests()) > 0 {
				tested++
			}
			if c.DocOnly() {
				docOnly++
			}
		}
		fmt.Fprintf(&b, "\n## %s (%s)\n\n", t.Key(), t.File)
		fmt.Fprintf(&b, "%d claims: %d proved by a live test, %d by a recording or finding only, %d by documentation only.\n\n",
			len(claims), tested, len(claims)-tested-docOnly, docOnly)
		b.WriteString("| claim | evidence | live tests |\n|---|---|---|\n")
		for _, c := range claims {
			var tests []string
			for _, tt := range c.Tests() {
				tests = append(tests, "`"+tt+"`")
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.Path, strings.Join(c.Kinds(), ", "), strings.Join(tests, "<br>"))
		}
		fmt.Fprintf(&b, "\n### %s: claims proved by documentation only\n\n", t.Key())
		if docOnly == 0 {
			b.WriteString("None.\n")
		}
		for _, c := range claims {
			if !c.DocOnly() {
				continue
			}
			fmt.Fprintf(&b, "- `%s`\n", c.Path)
			for _, ev := range c.Evidence {
				fmt.Fprintf(&b, "  - %s\n", mdEscape(strings.TrimPrefix(ev, "doc: ")))
			}
		}
	}
	return b.Bytes(), nil
}

// mdEscape keeps a documentation reference literal in Markdown.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`).Replace(s)
}
