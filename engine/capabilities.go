package engine

import (
	"fmt"
	"slices"
	"strings"

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
	tables, err := selectTables(ts, keys)
	if err != nil {
		return Capabilities{}, err
	}
	// The answers are held in the order of the tables' keys (sorted);
	// the tables are asked, and their findings made, in their own.
	column := make([]int, len(tables))
	caps := Capabilities{Providers: make([]string, len(tables))}
	for i, t := range tables {
		caps.Providers[i] = t.Key()
	}
	slices.Sort(caps.Providers)
	for i, t := range tables {
		column[i] = slices.Index(caps.Providers, t.Key())
	}
	hooks := 0
	for _, p := range pkgs {
		if p.Manifest != nil {
			hooks += len(p.Manifest.Hooks)
		}
	}
	caps.Rows = make([]CapabilityRow, 0, hooks)
	// Hooks of a source ask few distinct questions: each is answered on
	// every table once, and the rows that ask it share the answers.
	type asked struct {
		q      providers.Question
		names  string // the matcher's tool names, NUL-separated
		fields string // the fields its bindings read, NUL-separated
	}
	answers := map[asked][]providers.Capability{}
	m := matcherCheck{all: ts.All(), tables: tables, tools: make([]string, len(tables))}
	for _, p := range pkgs {
		if p.Manifest == nil {
			continue // its shape failed: there is no hook to speak of
		}
		for i, h := range p.Manifest.Hooks {
			at := indexPath("hook", i)
			if p.hasErrorUnder(at) {
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
			var names []string
			if h.Matcher != nil {
				names = h.Matcher.ToolNames
			}
			fields := make([]string, len(h.Bindings))
			for bi, b := range h.Bindings {
				fields[bi] = b.Field
			}
			key := asked{q, strings.Join(names, "\x00"), strings.Join(fields, "\x00")}
			cs, ok := answers[key]
			if !ok {
				cs = make([]providers.Capability, len(tables))
				for ti, t := range tables {
					q.MatchesNothing = t.MatchesNothing(names)
					unbound := t.UnboundFields(h.Subject, h.Phase, fields)
					q.Unbound = len(unbound) > 0
					c, err := ts.Capability(t, q)
					if err != nil {
						return Capabilities{}, fmt.Errorf("%s %s: %w", p.File, at, err)
					}
					cs[column[ti]] = c.Naming(unbound)
				}
				answers[key] = cs
			}
			caps.Rows = append(caps.Rows, CapabilityRow{Package: p.Name, Hook: h.ID, Requirement: h.Requirement, Answers: cs})
			for ti, t := range tables {
				if c := cs[column[ti]]; c.Status == providers.Supported {
					p.checkTimeout(t, at, h, c.NativeEvent)
				}
			}
			m.check(p, at, h)
		}
	}
	return caps, nil
}

// hasErrorUnder reports whether p has an error about the field path at or
// a field inside it.
func (p *Package) hasErrorUnder(at string) bool {
	for _, d := range p.diags.diags {
		if d.Severity == Error && (d.Field == at || strings.HasPrefix(d.Field, at+".") || strings.HasPrefix(d.Field, at+"[")) {
			return true
		}
	}
	return false
}

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
	tools       []string           // each selected table's tools, listed once asked for
}

func (m *matcherCheck) check(p *Package, at string, h Hook) {
	// A matcher on a row without one (#Combinations) is an error of the
	// hook (E035), which is not asked about at all.
	if h.Matcher == nil || p.pos == nil || len(h.Matcher.ToolNames) == 0 {
		return
	}
	names := h.Matcher.ToolNames
	anywhere := false
	for n, name := range names {
		if slices.ContainsFunc(m.all, func(t *providers.Table) bool { return t.KnowsTool(name) }) {
			anywhere = true
			continue
		}
		f := fmt.Sprintf("%s.matcher.tool_names[%d]", at, n)
		p.diags.warnOnce("W101", p.at(f), f, "no provider table has a native tool %s, so this name matches nothing on any harness dalo knows%s", name, m.hint(names, n))
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
		if m.tools[i] == "" {
			m.tools[i] = strings.Join(t.ToolNames(), ", ")
		}
		p.diags.warnOnce("W101", p.at(first), f, "%s has none of these native tools, so this hook never runs there; its tools: %s", t.Key(), m.tools[i])
	}
}

// hint is how to fix names[n], a name no table knows: a name is matched
// whole, not as a pattern, so "Edit|Write" is written as two names (the
// whole list given as TOML, the other names kept in place); a name near a
// known tool is that tool misspelt.
func (m *matcherCheck) hint(names []string, n int) string {
	knows := func(name string) bool {
		return slices.ContainsFunc(m.all, func(t *providers.Table) bool { return t.KnowsTool(name) })
	}
	if parts := strings.Split(names[n], "|"); len(parts) > 1 && !slices.ContainsFunc(parts, func(s string) bool { return !knows(s) }) {
		fixed := slices.Concat(names[:n], parts, names[n+1:])
		quoted := make([]string, len(fixed))
		for i, s := range fixed {
			quoted[i] = tomledit.Quote(s)
		}
		return fmt.Sprintf("; a name is matched whole, not as a pattern: list each tool on its own, tool_names = [%s]", strings.Join(quoted, ", "))
	}
	var known []string
	for _, t := range m.all {
		for name := range t.Tools {
			known = append(known, name)
		}
	}
	slices.Sort(known)
	if near := suggest.Closest(names[n], slices.Compact(known)); near != "" {
		return fmt.Sprintf("; did you mean %s?", near)
	}
	return ""
}

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
