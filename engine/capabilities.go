package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"dalo/internal/suggest"
	"dalo/providers"
	"dalo/tomledit"
)

// ProviderCapabilities says, per provider@version and per hook, whether the
// provider supports it: supported, unsupported (with the reason) or omitted
// (an optional hook with fallback omit). A required hook a provider cannot
// honour blocks activation on that target; that never changes the
// package's validity. A hook with an error of its own is left out. keys are provider@version keys from ResolveProviders;
// none means every known version.
//
// It also adds the provider findings to each package's diagnostics: a
// matcher that matches nothing on a selected provider (W101) and a timeout
// the provider cuts short (W102).
func ProviderCapabilities(pkgs []*Package, keys []string) (Capabilities, error) {
	ts, err := providers.Load()
	if err != nil {
		return Capabilities{}, err
	}
	return CapabilitiesWith(ts, pkgs, keys)
}

// CapabilitiesWith is ProviderCapabilities over the given tables; tests use
// it with fixture tables loaded through providers.LoadFS.
func CapabilitiesWith(ts *providers.Tables, pkgs []*Package, keys []string) (Capabilities, error) {
	run, err := newCapabilityRun(ts, keys)
	if err != nil {
		return Capabilities{}, err
	}
	return run.capabilities(pkgs)
}

// A capabilityRun answers, for one validation, what the selected tables
// do with each hook. A validation asks it of each package in the worker
// that checked the package, right after its own checks (capabilityAsker),
// so that what the report needs of its hooks is made while the manifest
// is at hand, and the manifest need not be held until the report.
type capabilityRun struct {
	ts     *providers.Tables
	tables []*providers.Table // the selected tables, in the order given
	// The answers are held in the order of the tables' keys (sorted,
	// providers); the tables are asked, and their findings made, in
	// their own: column[i] is tables[i]'s place in providers.
	column    []int
	providers []string
	err       atomic.Pointer[error] // the first error of an asker
}

func newCapabilityRun(ts *providers.Tables, keys []string) (*capabilityRun, error) {
	tables, err := selectTables(ts, keys)
	if err != nil {
		return nil, err
	}
	r := &capabilityRun{ts: ts, tables: tables, column: make([]int, len(tables)), providers: make([]string, len(tables))}
	for i, t := range tables {
		r.providers[i] = t.Key()
	}
	slices.Sort(r.providers)
	for i, t := range tables {
		r.column[i] = slices.Index(r.providers, t.Key())
	}
	return r, nil
}

// capabilities gathers the rows of pkgs' hooks, in their order, asking
// for those of a package no asker of r has answered.
func (r *capabilityRun) capabilities(pkgs []*Package) (Capabilities, error) {
	var a *capabilityAsker
	hooks := 0
	for _, p := range pkgs {
		if p.capsBy != r {
			if a == nil {
				a = r.asker()
			}
			a.add(p)
		}
		hooks += len(p.caps)
	}
	if err := r.err.Load(); err != nil {
		return Capabilities{}, *err
	}
	// The rows move into one list: a package's own are dropped, and
	// would be asked for again.
	caps := Capabilities{Providers: r.providers, Rows: make([]CapabilityRow, 0, hooks)}
	for _, p := range pkgs {
		caps.Rows = append(caps.Rows, p.caps...)
		p.caps, p.capsBy = nil, nil
	}
	return caps, nil
}

// afterChecks is what each worker of checkPackages does with a package
// after its checks: it asks what the providers do with the package's
// hooks, and a validation (not Load, whose caller reads the manifests)
// then drops the typed manifest (forget).
func (r *capabilityRun) afterChecks(keepManifests bool) func() func(*Package) {
	return func() func(*Package) {
		a := r.asker()
		return func(p *Package) {
			a.add(p)
			if !keepManifests {
				p.forget()
			}
		}
	}
}

// A capabilityAsker asks a capabilityRun's tables about the hooks of the
// packages one goroutine checks. Hooks ask few distinct questions: each
// is answered on every table once an asker, and the rows that ask it
// share the answers.
type capabilityAsker struct {
	*capabilityRun
	// answers holds, for each question, the answers for each way the
	// tables read the hook's matcher and bindings (tablesRead): the
	// answers depend on its tool names and bound fields only through
	// that. Keyed by the names and fields themselves, hooks of forty
	// names each asked as many questions as they were, and their keys
	// were a fifth of what a validation held.
	answers map[providers.Question]map[string][]providers.Capability
	m       matcherCheck
	read    []byte     // the key tablesRead makes
	unbound [][]string // for each table, the fields it does not give
}

func (r *capabilityRun) asker() *capabilityAsker {
	return &capabilityAsker{
		capabilityRun: r,
		answers:       map[providers.Question]map[string][]providers.Capability{},
		m:             newMatcherCheck(r.ts.All(), r.tables),
		unbound:       make([][]string, len(r.tables)),
	}
}

// add makes p's rows (p.caps) and adds the provider findings to its
// diagnostics. p's own checks must be done: a hook with an error of its
// own has no row.
func (a *capabilityAsker) add(p *Package) {
	p.caps, p.capsBy = nil, a.capabilityRun
	if p.Manifest == nil {
		return // its shape failed: there is no hook to speak of
	}
	p.caps = make([]CapabilityRow, 0, len(p.Manifest.Hooks))
	defer p.diags.indexOnce()()
	inError := p.hooksInError(len(p.Manifest.Hooks))
	for i, h := range p.Manifest.Hooks {
		at := indexPath("hook", i)
		if inError[i] {
			// An invalid hook (a combination the table does not admit,
			// an unknown tool, a bad binding) has no capability to
			// speak of: its diagnostics say what is wrong with it.
			continue
		}
		q := providers.Question{
			Subject: h.Subject, Phase: h.Phase, Effect: h.Effect,
			FailurePolicy: h.FailurePolicy, ErrorVisibility: h.ErrorVisibility,
			Requirement: h.Requirement, HasFallback: h.Fallback != "",
		}
		a.tablesRead(h)
		byRead := a.answers[q]
		if byRead == nil {
			byRead = map[string][]providers.Capability{}
			a.answers[q] = byRead
		}
		cs, ok := byRead[string(a.read)]
		if !ok {
			cs = make([]providers.Capability, len(a.tables))
			for ti, t := range a.tables {
				q.MatchesNothing = a.read[ti] == 1
				q.Unbound = len(a.unbound[ti]) > 0
				c, err := a.ts.Capability(t, q)
				if err != nil {
					err = fmt.Errorf("%s %s: %w", p.File, at, err)
					a.err.CompareAndSwap(nil, &err)
					return
				}
				cs[a.column[ti]] = c.Naming(a.unbound[ti])
			}
			byRead[string(a.read)] = cs
		}
		p.caps = append(p.caps, CapabilityRow{Package: p.Name, Hook: h.ID, Requirement: h.Requirement, Answers: cs})
		for ti, t := range a.tables {
			if c := cs[a.column[ti]]; c.Status == providers.Supported {
				p.checkTimeout(t, at, h, c.NativeEvent)
			}
		}
		a.m.check(p, at, h)
	}
}

// tablesRead sets a.unbound to what each table makes of h's bindings and
// a.read to a key of that and whether each matches none of h's tool
// names: a byte a table (1 when it matches none), then, after them, each
// table's unbound fields, each ended by a NUL, the table's ended by 0xff,
// which neither a TOML string's UTF-8 nor a field name holds.
func (a *capabilityAsker) tablesRead(h Hook) {
	var names []string
	if h.Matcher != nil {
		names = h.Matcher.ToolNames
	}
	fields := make([]string, len(h.Bindings))
	for bi, b := range h.Bindings {
		fields[bi] = b.Field
	}
	a.read = a.read[:0]
	for ti, t := range a.tables {
		var nothing byte
		if t.MatchesNothing(names) {
			nothing = 1
		}
		a.read = append(a.read, nothing)
		a.unbound[ti] = t.UnboundFields(h.Subject, h.Phase, fields)
	}
	for _, ub := range a.unbound {
		for _, f := range ub {
			a.read = append(append(a.read, f...), 0)
		}
		a.read = append(a.read, 0xff)
	}
}

// hooksInError reports, for each of p's n hooks, whether p has an error
// about its field path (hook[i]) or a field inside it. It reads p's
// diagnostics once: asked of each hook in turn, a package of forty hooks
// that each miss eleven bindings compared every hook with every error, a
// fifth of validating 1,000 of them.
func (p *Package) hooksInError(n int) []bool {
	in := make([]bool, n)
	for _, d := range p.diags.diags {
		diagnosticsScanned.Add(1)
		if d.Severity != Error {
			continue
		}
		rest, ok := strings.CutPrefix(d.Field, "hook[")
		if !ok {
			continue
		}
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			continue
		}
		i, err := strconv.Atoi(rest[:end])
		if err != nil || i < 0 || i >= n || strconv.Itoa(i) != rest[:end] {
			continue
		}
		if after := rest[end+1:]; after == "" || after[0] == '.' || after[0] == '[' {
			in[i] = true
		}
	}
	return in
}

// diagnosticsScanned counts the diagnostics hooksInError read: a test
// holds a package to reading each once.
var diagnosticsScanned atomic.Int64

// A matcherCheck warns about matcher tool names that match nothing:
// names are native, not a universal taxonomy, so a portable hook lists the
// names of each harness it targets (Bash, run_shell_command), and a name
// one harness knows is expected to match nothing on another, even when
// only that other is selected. What is worth a warning is a name no
// harness dalo has a table for knows (a typo, or a harness without a
// table), and a selected provider that knows none of the hook's names,
// where the hook never runs (and is unsupported: #Capability).
type matcherCheck struct {
	all, tables []*providers.Table // every table, the selected ones
	// never is, for each selected table, the warning that a hook never
	// runs there, made once asked for: it names the table's tools, some
	// 300 bytes the same for every hook.
	never []string
	// anywhere remembers, of the last tool names asked about, whether a
	// table knows each, and hints the hint of each name none knows:
	// hooks name the same tools over and over, a table tries its
	// patterns' regular expressions on a name, and a hint measures the
	// name against every tool of every table. known is every tool a
	// table knows, sorted, made for the first hint.
	anywhere map[string]bool
	hints    map[string]string
	known    []string
	// patterns remembers, of the names holding a | asked about, whether
	// each is a pattern of known tools and its parts written as TOML
	// strings: a pattern's hint names them for every hook that lists it.
	patterns map[string]toolPattern
}

// A toolPattern is a tool name written as a pattern of tools a table
// knows ("Edit|Write"): its parts as TOML strings, separated by commas.
type toolPattern struct {
	quoted string
	ok     bool
}

// maxRemembered bounds matcherCheck.anywhere: MCP tools are named by
// server, so a source's packages may name a million tools once each.
// Remembering them all cost more than asking again (a quarter more CPU
// on 1,000 packages of forty hooks of MCP tools their own), and held
// what the report never says.
const maxRemembered = 4096

func newMatcherCheck(all, tables []*providers.Table) matcherCheck {
	return matcherCheck{all: all, tables: tables, never: make([]string, len(tables)), anywhere: map[string]bool{}, hints: map[string]string{}, patterns: map[string]toolPattern{}}
}

// knownAnywhere reports whether a table knows the tool name.
func (m *matcherCheck) knownAnywhere(name string) bool {
	if k, ok := m.anywhere[name]; ok {
		return k
	}
	toolNamesLooked.Add(1)
	k := slices.ContainsFunc(m.all, func(t *providers.Table) bool { return t.KnowsTool(name) })
	if len(m.anywhere) >= maxRemembered {
		clear(m.anywhere)
	}
	m.anywhere[name] = k
	return k
}

func (m *matcherCheck) check(p *Package, at string, h Hook) {
	// A matcher on a row without one (#Combinations) is an error of the
	// hook (E035), which is not asked about at all.
	if h.Matcher == nil || p.pos == nil || len(h.Matcher.ToolNames) == 0 {
		return
	}
	names := h.Matcher.ToolNames
	anywhere := false
	listed := "" // the field whose hint wrote the list with its patterns split
	for n, name := range names {
		if m.knownAnywhere(name) {
			anywhere = true
			continue
		}
		f := indexPath(at+".matcher.tool_names", n)
		p.diags.warnOnce("W101", p.at(f), f, "no provider table has a native tool %s, so this name matches nothing on any harness dalo knows%s", name, m.hint(names, n, f, &listed))
	}
	if !anywhere {
		return // each name was reported
	}
	// At the first name: the list itself has no position of its own.
	f, first := at+".matcher.tool_names", at+".matcher.tool_names[0]"
	for i, t := range m.tables {
		if !t.MatchesNothing(names) {
			continue
		}
		if m.never[i] == "" {
			m.never[i] = fmt.Sprintf("%s has none of these native tools, so this hook never runs there; its tools: %s", t.Key(), strings.Join(t.ToolNames(), ", "))
		}
		p.diags.warnTextOnce("W101", p.at(first), f, m.never[i])
	}
}

// hint is how to fix names[n], the name no table knows at field f: a name
// is matched whole, not as a pattern, so "Edit|Write" is written as two
// names; a name near a known tool is that tool misspelt. The first
// pattern's hint writes the whole list as TOML, every pattern split and
// the other names kept in place, and *listed becomes its field; each
// other pattern's names its own tools and that field, so that the hints
// of a long list of patterns grow with the list, not with its square.
func (m *matcherCheck) hint(names []string, n int, f string, listed *string) string {
	const whole = "; a name is matched whole, not as a pattern: list each tool on its own"
	if pt := m.pattern(names[n]); pt.ok {
		if *listed != "" {
			return whole + " (" + pt.quoted + ") as " + *listed + "'s hint writes the list"
		}
		*listed = f
		var b strings.Builder
		b.WriteString(whole + ", tool_names = [")
		for i, s := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			if pt := m.pattern(s); pt.ok {
				b.WriteString(pt.quoted)
			} else {
				b.WriteString(tomledit.Quote(s))
			}
		}
		b.WriteString("]")
		return b.String()
	}
	if h, ok := m.hints[names[n]]; ok {
		return h
	}
	hintsMade.Add(1)
	if m.known == nil {
		for _, t := range m.all {
			for name := range t.Tools {
				m.known = append(m.known, name)
			}
		}
		slices.Sort(m.known)
		m.known = slices.Compact(m.known)
	}
	h := ""
	if near := suggest.Closest(names[n], m.known); near != "" {
		h = fmt.Sprintf("; did you mean %s?", near)
	}
	m.hints[names[n]] = h
	return h
}

// pattern says whether name is a pattern: it holds a |, is no tool a
// table knows, and each part split at | is one. It is worked out once a
// name (patternsSplit), as knownAnywhere's answers are, and forgotten
// with them past maxRemembered names.
func (m *matcherCheck) pattern(name string) toolPattern {
	if !strings.Contains(name, "|") {
		return toolPattern{}
	}
	if pt, ok := m.patterns[name]; ok {
		return pt
	}
	patternsSplit.Add(1)
	var pt toolPattern
	if !m.knownAnywhere(name) {
		parts := strings.Split(name, "|")
		if !slices.ContainsFunc(parts, func(s string) bool { return !m.knownAnywhere(s) }) {
			pt = toolPattern{quoted: quoteAll(parts), ok: true}
		}
	}
	if len(m.patterns) >= maxRemembered {
		clear(m.patterns)
	}
	m.patterns[name] = pt
	return pt
}

// quoteAll writes names as TOML strings, separated by commas.
func quoteAll(names []string) string {
	var b strings.Builder
	for i, s := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tomledit.Quote(s))
	}
	return b.String()
}

// toolNamesLooked counts the tool names a matcherCheck looked up in the
// tables, hintsMade the hints it made and patternsSplit the names with a
// | it split: a test holds each to once a name.
var toolNamesLooked, hintsMade, patternsSplit atomic.Int64

// checkTimeout warns when the provider cuts the hook's timeout.
func (p *Package) checkTimeout(t *providers.Table, at string, h Hook, event string) {
	max, ok := t.TimeoutClampMS(event)
	if !ok || h.TimeoutMS <= max || p.pos == nil {
		return
	}
	f := at + ".timeout_ms"
	p.diags.warnOnce("W102", p.at(f), f, "%s cuts %s hook timeouts to %d ms; this hook asks for %d ms", t.Key(), event, max, h.TimeoutMS)
}

func selectTables(ts *providers.Tables, keys []string) ([]*providers.Table, error) {
	if len(keys) == 0 {
		return ts.All(), nil
	}
	var out []*providers.Table
	seen := map[string]bool{}
	for _, k := range keys {
		t, err := ts.Resolve(k)
		if err != nil {
			return nil, err
		}
		if !seen[t.Key()] {
			seen[t.Key()] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// ResolveProviders turns NAME or NAME@VERSION arguments into known
// provider@version keys: a bare name means its newest known version, a
// version must be known exactly. The error lists the known versions.
func ResolveProviders(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	ts, err := providers.Load()
	if err != nil {
		return nil, err
	}
	tables, err := selectTables(ts, args)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(tables))
	for i, t := range tables {
		keys[i] = t.Key()
	}
	return keys, nil
}
