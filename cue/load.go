// Package cue holds the rules of Portable Agent Packages as CUE definitions:
// the PLUGIN.toml schema 1 shape, tool and hook descriptor 1, the hook
// combination table, the binding field types, result kinds per effect, the
// failure-policy rules, the limits and the provider table schema. They are
// embedded in the binary; Go code asks them instead of restating them.
package cue

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"sort"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/parser"
)

//go:embed *.cue
var files embed.FS

// ProviderSchema is the file of the provider table schema (#Provider,
// #Capability, #MemberInstall), which only loading provider tables needs.
const ProviderSchema = "provider.cue"

// TablesCheck is the file of #Tables, the check that the tables agree
// with each other, which Load makes and no rule asks.
const TablesCheck = "tables.cue"

// Load compiles the embedded definitions in ctx and checks that the tables
// agree with each other, so a broken table fails at start-up, not later on
// some user's manifest.
func Load(ctx *cue.Context) (cue.Value, error) {
	return LoadFS(ctx, files)
}

// LoadPackageRules is what validating a package asks of the rules, which
// validation compiles once per worker of each run: Load without
// ProviderSchema and TablesCheck, and without checking again what Load
// checks of the same embedded files (that they compile to no error and
// that the tables agree), which every test run does (TestLoad). Compiling
// the provider schema took a third of Load, the tables' check a third of
// what was left.
func LoadPackageRules(ctx *cue.Context) (cue.Value, error) {
	return load(ctx, files, ProviderSchema, TablesCheck)
}

// LoadFS is Load over another set of files; tests use it to prove that a
// broken table is refused.
func LoadFS(ctx *cue.Context, fsys fs.FS) (cue.Value, error) {
	return load(ctx, fsys)
}

// load compiles the files of fsys but skip. With none skipped, it checks
// them: they compile to no error and the tables agree (#Tables).
func load(ctx *cue.Context, fsys fs.FS, skip ...string) (cue.Value, error) {
	names, err := fs.Glob(fsys, "*.cue")
	if err != nil {
		return cue.Value{}, err
	}
	names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(skip, n) })
	sort.Strings(names)
	inst := build.NewContext().NewInstance("dalo/cue", nil)
	for _, name := range names {
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return cue.Value{}, err
		}
		f, err := parser.ParseFile(name, src, parser.ParseComments)
		if err != nil {
			return cue.Value{}, fmt.Errorf("rules: %w", err)
		}
		if err := inst.AddSyntax(f); err != nil {
			return cue.Value{}, fmt.Errorf("rules: %s: %w", name, err)
		}
	}
	v := ctx.BuildInstance(inst)
	if err := v.Err(); err != nil {
		return cue.Value{}, fmt.Errorf("rules: %w", err)
	}
	if len(skip) > 0 {
		return v, nil
	}
	if err := v.Validate(); err != nil {
		return cue.Value{}, fmt.Errorf("rules: %w", err)
	}
	tables := v.LookupPath(cue.ParsePath(Tables))
	if err := tables.Validate(cue.Concrete(true)); err != nil {
		return cue.Value{}, fmt.Errorf("rules: tables disagree: %w", err)
	}
	return v, nil
}
