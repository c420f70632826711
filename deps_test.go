package dalo_test

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// depsRules says which packages of dalo may import which, the way
// go/build's deps_test.go does for the standard library. "a, b < c, d"
// says c and d may import a and b, and whatever a and b may import; a
// chain "a < b < c" is "a < b; b < c". A package is named on the right
// once, after every package it may import is; NONE is nothing of dalo's.
// Names in capitals are modules from elsewhere (depsGroups). The standard
// library is allowed everywhere but on the hot path (hotPathDeps).
//
// A new package needs a line here, and a new import either fits the
// layers or changes them here, where a reviewer sees it.
const depsRules = `
	# Leaves: editors of what the user owns, and small helpers.
	NONE
	< dalo/internal/rawsys, dalo/internal/termtext, dalo/internal/fakemodel,
	  dalo/internal/suggest, dalo/internal/shiftand, dalo/internal/lazyregexp,
	  dalo/jsonedit, dalo/instruction, dalo/codexapp,
	  dalo/bench/measure, dalo/bench/mutate, dalo/bench/stdinfloor;

	# Reads of regular files, their system calls raw on Linux.
	dalo/internal/rawsys < dalo/internal/regular;

	# Git sources: what a tree holds reaches errors escaped.
	dalo/internal/termtext, dalo/internal/lazyregexp < dalo/store/gitrepo;

	# The unified diff dalo shows of a file it changes.
	GOINTERNAL < dalo/internal/unidiff;

	TOML < dalo/bench/floor;
	TOML, dalo/internal/rawsys < dalo/bench/walkfloor;
	TOML < dalo/tomledit;

	# The install-to-dispatch contract, a leaf, and what reads it on every
	# tool call: no CUE, no validator, no store, no provider tables.
	dalo/internal/regular < dalo/plan, dalo/internal/cache;
	dalo/plan
	< dalo/dispatch
	< dalo/cmd/internal/hookdispatch
	< dalo/cmd/dalo-hook;

	# Sources for benchmarks, their hooks named by the rules' values.
	dalo/plan < dalo/bench/sourcegen < dalo/bench/gensource;

	# The rules and the provider tables, which import neither plan nor
	# store: go generate writes what plan needs of them into plan/known.go.
	# (shiftand matches their tool patterns without regexp's backtracker).
	CUE, dalo/internal/shiftand < dalo/cue < dalo/providers < dalo/providers/gen;

	# The scenarios that prove a table, which the live suite and
	# dalo providers verify both run.
	CUE, dalo/providers, dalo/plan, dalo/internal/fakemodel < dalo/internal/scenario < dalo/internal/live;
	dalo/internal/live < dalo/internal/live/probe;

	# dalo's entries in a harness's hooks file, and the settings that turn
	# hooks off: read as the table says, edited as bytes, no store.
	dalo/jsonedit, dalo/providers, dalo/plan, dalo/internal/termtext, TOML
	< dalo/hooksfile;

	# What a harness that runs only trusted hooks knows dalo's entries by.
	dalo/hooksfile, dalo/codexapp, dalo/tomledit < dalo/hooktrust;

	# The validator, and what builds on it (termtext's scan for printable
	# ASCII reads front matter too; ASMUTF8 checks instructions' text).
	dalo/providers, dalo/plan, dalo/internal/suggest, dalo/internal/termtext,
	dalo/tomledit, TOML, UNIX, ASMUTF8
	< dalo/engine;
	dalo/engine, dalo/internal/termtext < dalo/scaffold;
	dalo/scaffold, dalo/internal/lazyregexp < dalo/claudeplugin;

	# State under DALO_HOME.
	dalo/engine, dalo/jsonedit, dalo/instruction, dalo/internal/termtext,
	dalo/hooksfile, dalo/hooktrust, dalo/internal/unidiff, dalo/store/gitrepo,
	GOINTERNAL
	< dalo/store;

	dalo/store, dalo/dispatch < dalo/dispatch/dispatchtest < dalo/bench/dispatchgen;

	# A project's dalo.toml and dalo.lock, resolved through the store.
	dalo/store < dalo/project;

	# The CLI.
	dalo/project, dalo/claudeplugin, dalo/cmd/internal/hookdispatch,
	dalo/internal/cache, dalo/internal/scenario, PFLAG
	< dalo/cmd/dalo;
`

// depsGroups are the modules from elsewhere depsRules names, by the
// import path prefix of their packages.
var depsGroups = map[string]string{
	"CUE":        "cuelang.org/go/",
	"TOML":       "github.com/pelletier/go-toml/v2",
	"PFLAG":      "github.com/spf13/pflag",
	"UNIX":       "golang.org/x/sys/unix",
	"ASMUTF8":    "github.com/segmentio/asm/utf8",
	"GOINTERNAL": "github.com/rogpeppe/go-internal/",
}

// hotPathDeps is what the dispatch path must not link, directly or not.
// It runs on every tool call and must start fast, so it reads the native
// protocol from the plan: no CUE, validator, store or provider tables.
// dalo-hook is the binary harness entries call, and Go initialises every
// linked package on every start. Nor package net, which links cgo, and so
// the dynamic loader, into every start (about a millisecond,
// bench/dispatch.sh with CGO_ENABLED=0 against without).
var hotPathDeps = map[string][]string{
	"dalo/dispatch":      {"cuelang.org/", "dalo/engine", "dalo/cue", "dalo/store", "dalo/providers", "net", "runtime/cgo"},
	"dalo/cmd/dalo-hook": {"cuelang.org/", "dalo/engine", "dalo/cue", "dalo/store", "dalo/providers", "net", "runtime/cgo"},
}

// parseDeps reads rules in depsRules' syntax into what each package may
// import directly or through what it may import.
func parseDeps(t *testing.T, rules string) map[string]map[string]bool {
	allowed := map[string]map[string]bool{"NONE": {}}
	for g := range depsGroups {
		allowed[g] = map[string]bool{}
	}
	var lines []string
	for _, l := range strings.Split(rules, "\n") {
		if i := strings.Index(l, "#"); i >= 0 {
			l = l[:i]
		}
		lines = append(lines, l)
	}
	for _, stmt := range strings.Split(strings.Join(lines, " "), ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		var prev []string
		for i, part := range strings.Split(stmt, "<") {
			var names []string
			for _, n := range strings.Split(part, ",") {
				if n = strings.TrimSpace(n); n == "" {
					t.Fatalf("depsRules: an empty name in %q", strings.TrimSpace(stmt))
				}
				names = append(names, n)
			}
			if i > 0 {
				for _, n := range names {
					if _, ok := allowed[n]; ok {
						t.Fatalf("depsRules: %s is on the right of a rule twice", n)
					}
					set := map[string]bool{}
					for _, p := range prev {
						if p != "NONE" {
							set[p] = true
						}
						maps.Copy(set, allowed[p])
					}
					allowed[n] = set
				}
			} else {
				for _, n := range names {
					if _, ok := allowed[n]; !ok {
						t.Fatalf("depsRules: %s is used before a rule says what it may import", n)
					}
				}
			}
			prev = names
		}
	}
	delete(allowed, "NONE")
	return allowed
}

// depsGroup is the name depsRules gives an import path: its depsGroups
// name, "" for the standard library, or the path itself.
func depsGroup(path string) string {
	if !strings.Contains(strings.Split(path, "/")[0], ".") && !strings.HasPrefix(path, "dalo/") && path != "dalo" {
		return ""
	}
	for g, prefix := range depsGroups {
		if path == strings.TrimSuffix(prefix, "/") || strings.HasPrefix(path, prefix) {
			return g
		}
	}
	return path
}

func goList(t *testing.T, args ...string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goTool, append([]string{"list"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestDeps checks every package's imports (not its tests') against
// depsRules, and that depsRules names exactly the packages there are.
func TestDeps(t *testing.T) {
	allowed := parseDeps(t, depsRules)
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(goList(t, "-f", "{{.ImportPath}}|{{join .Imports \" \"}}", "./...")), "\n") {
		pkg, imports, _ := strings.Cut(line, "|")
		if pkg == "dalo" {
			continue // this test
		}
		seen[pkg] = true
		may, ok := allowed[pkg]
		if !ok {
			t.Errorf("%s: no rule in depsRules says what it may import", pkg)
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if g := depsGroup(imp); g != "" && !may[g] {
				t.Errorf("%s imports %s, which depsRules does not allow", pkg, imp)
			}
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(allowed)) {
		if _, group := depsGroups[pkg]; !group && !seen[pkg] {
			t.Errorf("depsRules names %s, which is no package of the module", pkg)
		}
	}
}

// TestHotPathDeps keeps the dispatch path lean (hotPathDeps), checking
// everything it links, the standard library included.
func TestHotPathDeps(t *testing.T) {
	for _, pkg := range slices.Sorted(maps.Keys(hotPathDeps)) {
		for _, dep := range strings.Fields(goList(t, "-deps", pkg)) {
			for _, bad := range hotPathDeps[pkg] {
				if dep == bad || strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad) {
					t.Errorf("%s links %s", pkg, dep)
				}
			}
		}
	}
}

// The rules' syntax: what a rule allows is transitive, a package is
// defined once, and a name must be defined before it is used.
func TestDepsRulesSyntax(t *testing.T) {
	got := parseDeps(t, "NONE < a; a < b, c; b, CUE < d < e;")
	want := map[string][]string{"a": nil, "b": {"a"}, "c": {"a"}, "d": {"CUE", "a", "b"}, "e": {"CUE", "a", "b", "d"}}
	for pkg, w := range want {
		if g := slices.Sorted(maps.Keys(got[pkg])); !slices.Equal(g, w) {
			t.Errorf("%s may import %v, want %v", pkg, g, w)
		}
	}
}
