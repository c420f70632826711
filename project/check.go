package project

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"dalo/engine"
	"dalo/plan"
)

// Drift is what the lock does not say of dalo.toml: a source or package
// dalo.toml declares and the lock does not hold as declared (another URL,
// ref, path or providers), or one the lock holds and dalo.toml no longer
// declares. It fetches nothing: pins and digests are Compare's.
func Drift(p *Project, l *Lock) []engine.Diagnostic {
	var out []engine.Diagnostic
	for _, s := range p.Sources {
		if _, ok := l.sourceOf(s); ok {
			continue
		}
		if i := slices.IndexFunc(l.Sources, func(x LockedSource) bool { return x.ID == s.ID }); i >= 0 {
			out = append(out, l.errorf("E116", engine.Index("source", i), "source %s is locked as %s, and %s now declares %s: run 'dalo lock'", s.ID, describeSource(l.Sources[i].Git, l.Sources[i].Ref, l.Sources[i].Path), File, describeSource(s.Git, s.Ref, s.Path)))
			continue
		}
		out = append(out, l.errorf("E116", "", "source %s of %s is not locked: run 'dalo lock'", s.ID, File))
	}
	for i, s := range l.Sources {
		if _, ok := p.Source(s.ID); !ok {
			out = append(out, l.errorf("E116", engine.Index("source", i), "source %s is locked, and %s no longer declares it: run 'dalo lock'", s.ID, File))
		}
	}
	for _, pk := range p.Packages {
		i := slices.IndexFunc(l.Packages, func(x LockedPackage) bool { return x.Ref() == pk.Ref() })
		if i < 0 {
			out = append(out, l.errorf("E116", "", "package %s of %s is not locked: run 'dalo lock'", pk.Ref(), File))
			continue
		}
		want := slices.Sorted(slices.Values(pk.Providers))
		if got := slices.Sorted(slices.Values(l.Packages[i].Providers)); !slices.Equal(got, want) {
			out = append(out, l.errorf("E116", engine.Field(engine.Index("package", i), "providers"), "package %s is locked for %s, and %s now asks for %s: run 'dalo lock'", pk.Ref(), strings.Join(got, ", "), File, strings.Join(want, ", ")))
		}
	}
	for i, lp := range l.Packages {
		if !slices.ContainsFunc(p.Packages, func(x Package) bool { return x.Ref() == lp.Ref() }) {
			out = append(out, l.errorf("E116", engine.Index("package", i), "package %s is locked, and %s no longer lists it: run 'dalo lock'", lp.Ref(), File))
		}
	}
	engine.SortDiagnostics(out)
	return out
}

func describeSource(git, ref, path string) string {
	switch {
	case path != "":
		return "path " + path
	case ref != "":
		return "git " + git + " ref " + ref
	}
	return "git " + git
}

// Compare is what l says that now, what Resolve read at l's pins, does
// not: a commit, a package's id or version, a grant's digest, a grant
// asked for and not locked or locked and no longer asked for. Each
// finding is at l's field. l and now hold the same sources and packages
// (Drift found none).
func Compare(l, now *Lock) []engine.Diagnostic {
	var out []engine.Diagnostic
	for i, s := range l.Sources {
		if n, ok := now.Source(s.ID); ok && n.Commit != s.Commit {
			out = append(out, l.errorf("E116", engine.Field(engine.Index("source", i), "commit"), "source %s is locked at %s, and %s resolved to %s", s.ID, s.Commit, s.Git, n.Commit))
		}
	}
	for i, lp := range l.Packages {
		np, ok := now.Package(lp.Ref())
		if !ok {
			continue
		}
		field := engine.Index("package", i)
		if lp.ID != np.ID {
			out = append(out, l.errorf("E116", engine.Field(field, "id"), "package %s is locked with id %q, and its manifest declares %q", lp.Ref(), lp.ID, np.ID))
		}
		if lp.Version != np.Version {
			out = append(out, l.errorf("E116", engine.Field(field, "version"), "package %s is locked at version %q, and its manifest declares %q", lp.Ref(), lp.Version, np.Version))
		}
		have, want := lp.bindings(), np.bindings()
		for j, g := range lp.Grants {
			gf := engine.Index(engine.Field(field, "grant"), j)
			// The tables of the entry, by the digest g.ID binds on each
			// now ("" none): one finding for each digest that differs.
			// A table now was not resolved on (one this dalo does not
			// know) says nothing either way.
			byDigest := map[string][]string{}
			for _, t := range g.Tables {
				if now.resolved != nil && !slices.Contains(now.resolved, t) {
					continue
				}
				if w := want[binding{g.ID, t}]; w != g.Digest {
					byDigest[w] = append(byDigest[w], t)
				}
			}
			for _, d := range slices.Sorted(maps.Keys(byDigest)) {
				on := strings.Join(byDigest[d], ", ")
				if d == "" {
					out = append(out, l.errorf("E116", engine.Field(gf, "id"), "grant %s on %s is locked, and package %s no longer asks for it there", g.ID, on, lp.Ref()))
					continue
				}
				out = append(out, l.errorf("E116", engine.Field(gf, "digest"), "grant %s binds %s on %s, not the locked %s", g.ID, Short(d), on, Short(g.Digest)))
			}
		}
		for _, b := range sortedBindings(want) {
			if _, ok := have[b]; !ok {
				out = append(out, l.errorf("E116", field, "package %s asks for grant %s on %s (%s), which the lock does not hold", lp.Ref(), b.id, b.table, Short(want[b])))
			}
		}
	}
	engine.SortDiagnostics(out)
	return out
}

// Short is a digest or commit as a person compares them: its first 12
// hex digits.
func Short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// Changes says, a line each, what moving from old (nil: no lock) to now
// changes: pins, packages added or removed, versions, and per grant its
// digest, old -> new. It says nothing when the two say the same.
func Changes(old, now *Lock) []string {
	if old == nil {
		old = &Lock{}
	}
	var out []string
	for _, s := range now.Sources {
		o, ok := old.Source(s.ID)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("source %s: added%s", s.ID, atCommit(s.Commit)))
		case o.Git != s.Git || o.Ref != s.Ref || o.Path != s.Path:
			out = append(out, fmt.Sprintf("source %s: now %s%s", s.ID, describeSource(s.Git, s.Ref, s.Path), atCommit(s.Commit)))
		case o.Commit != s.Commit:
			out = append(out, fmt.Sprintf("source %s: %s -> %s", s.ID, Short(o.Commit), Short(s.Commit)))
		}
	}
	for _, s := range old.Sources {
		if _, ok := now.Source(s.ID); !ok {
			out = append(out, fmt.Sprintf("source %s: removed", s.ID))
		}
	}
	for _, np := range now.Packages {
		op, ok := old.Package(np.Ref())
		if !ok {
			n := len(grantIDs(np))
			out = append(out, fmt.Sprintf("%s: added, %d grant%s", np.Ref(), n, map[bool]string{true: "s"}[n != 1]))
			continue
		}
		if op.Version != np.Version {
			out = append(out, fmt.Sprintf("%s: version %s -> %s", np.Ref(), orNone(op.Version), orNone(np.Version)))
		}
		out = append(out, grantChanges(np.Ref(), op.bindings(), np.bindings())...)
	}
	for _, op := range old.Packages {
		if _, ok := now.Package(op.Ref()); !ok {
			out = append(out, fmt.Sprintf("%s: removed", op.Ref()))
		}
	}
	return out
}

// grantChanges says, a line each, how the grants of package ref moved
// from was to now: per grant id, old -> new digest, added or removed. The
// tables a change concerns are named unless it is the same on every
// table the grant is locked for.
func grantChanges(ref string, was, now map[binding]string) []string {
	type change struct{ id, old, new string }
	tables := map[change][]string{}
	all := map[string]int{} // grant id → tables it is locked for, old or new
	for b := range was {
		all[b.id]++
	}
	for b := range now {
		if _, ok := was[b]; !ok {
			all[b.id]++
		}
	}
	for b, n := range now {
		if o := was[b]; o != n {
			c := change{b.id, o, n}
			tables[c] = append(tables[c], b.table)
		}
	}
	for b, o := range was {
		if _, ok := now[b]; !ok {
			c := change{b.id, o, ""}
			tables[c] = append(tables[c], b.table)
		}
	}
	changes := slices.Collect(maps.Keys(tables))
	slices.SortFunc(changes, func(a, b change) int {
		if c := strings.Compare(a.id, b.id); c != 0 {
			return c
		}
		return compareTables(slices.MinFunc(tables[a], compareTables), slices.MinFunc(tables[b], compareTables))
	})
	var out []string
	for _, c := range changes {
		ts := tables[c]
		slices.SortFunc(ts, compareTables)
		on := ""
		if len(ts) < all[c.id] {
			on = " on " + strings.Join(ts, ", ")
		}
		switch {
		case c.old == "":
			out = append(out, fmt.Sprintf("%s: %s added%s (%s)", ref, grantName(c.id), on, Short(c.new)))
		case c.new == "":
			out = append(out, fmt.Sprintf("%s: %s removed%s (was %s)", ref, grantName(c.id), on, Short(c.old)))
		default:
			out = append(out, fmt.Sprintf("%s: %s %s -> %s%s", ref, grantName(c.id), Short(c.old), Short(c.new), on))
		}
	}
	return out
}

// grantIDs is the set of grant ids p locks, on any table.
func grantIDs(p LockedPackage) map[string]bool {
	ids := map[string]bool{}
	for _, g := range p.Grants {
		ids[g.ID] = true
	}
	return ids
}

// sortedBindings is the keys of m in order: by grant id, then table.
func sortedBindings(m map[binding]string) []binding {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b binding) int {
		if c := strings.Compare(a.id, b.id); c != 0 {
			return c
		}
		return compareTables(a.table, b.table)
	})
	return keys
}

// grantName is a grant id as Changes names it: PROVIDER KIND:ITEM.
func grantName(id string) string {
	provider, _, kind, item, err := plan.ParseGrantID(id)
	if err != nil {
		return id
	}
	return provider + " " + kind + ":" + item
}

func atCommit(c string) string {
	if c == "" {
		return ""
	}
	return " at " + Short(c)
}

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

// Verify says whether l holds for p, writing nothing: Drift, and when
// there is none, Compare with what l's pins hold (Resolve keeping every
// pin, opts.Update ignored). No finding means it holds; now is what the
// pins hold, nil when Drift found something.
func Verify(p *Project, l *Lock, opts Options) (findings []engine.Diagnostic, now *Lock, err error) {
	if d := Drift(p, l); len(d) > 0 {
		return d, nil, nil
	}
	// On the tables l was resolved on, and no other: a dalo that knows
	// more harness versions than l's writer checks what l says.
	opts.Update, opts.Only, opts.Tables = false, "", l.Tables()
	if opts.Tables == nil {
		opts.Tables = []string{}
	}
	if now, err = Resolve(p, l, opts); err != nil {
		return nil, nil, err
	}
	return Compare(l, now), now, nil
}
