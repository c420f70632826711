package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"dalo/engine"
	"dalo/scaffold"
)

const initDoc = `Init makes DIR (the current directory by default) an author source: the
directories where packages and their members live (plugins/, skills/,
instructions/, agents/), and plugin-v1.schema.json at its root, the JSON
Schema that the #:schema line of a new manifest points editors at. It
creates what is missing and changes nothing that exists. It needs no store.

Exit status: 0 the source is there; 1 something in the way (a file or a
symlink where a directory goes: then nothing is created) or a write
failed; 2 bad usage.

Examples:
  # A new source in ./agents-src, then a package in it.
  dalo init agents-src
  dalo plugin new review --source agents-src --skill
`

func init() {
	register(&command{name: "init", usage: "[DIR]", short: "make a directory an author source", doc: initDoc, run: runInit})
}

func runInit(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() > 1 {
		return usageError(e, "init", "want at most one DIR, got %d arguments", fs.NArg())
	}
	dir := "."
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	r, err := engine.LoadRules()
	if err != nil {
		return fail(e, "init", err)
	}
	schema, err := engine.JSONSchema()
	if err != nil {
		return fail(e, "init", err)
	}
	created, err := scaffold.Init(r, dir, schema)
	if err != nil {
		if len(created) > 0 {
			fmt.Fprintf(e.stderr, "dalo init: created %s before the error\n", strings.Join(created, ", "))
		}
		return fail(e, "init", err)
	}
	if len(created) == 0 {
		fmt.Fprintf(e.stdout, "%s is a source already: nothing to create\n", dir)
		return exitOK
	}
	for i, c := range created {
		if c == "." {
			created[i] = dir
		} else if !strings.HasSuffix(c, ".json") {
			created[i] = c + "/"
		}
	}
	fmt.Fprintf(e.stdout, "initialized source %s: created %s\n", dir, strings.Join(created, ", "))
	src := ""
	if filepath.Clean(dir) != "." {
		src = " --source " + dir
	}
	fmt.Fprintf(e.stdout, "add a package with 'dalo plugin new NAME%s'\n", src)
	return exitOK
}
