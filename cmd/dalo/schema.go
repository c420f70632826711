package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"dalo/engine"
)

const schemaDoc = `Schema prints plugin-v1.schema.json: the JSON Schema 2020-12 document of
the structural shape of PLUGIN.toml schema 1, generated from the same CUE
definitions dalo validates with. Editors use it for completion and for
structural checks of decoded TOML; it cannot check what only the validator
checks (files, fallbacks, bindings, hook combinations, byte limits), so a
manifest the schema accepts can still be invalid.

Point a TOML editor at it with a comment on the first line of PLUGIN.toml
(Taplo and Even Better TOML read it); never with a $schema key, which is an
unknown field. With the schema at the source's root, a manifest at
plugins/<name>/PLUGIN.toml says:

  #:schema ../../plugin-v1.schema.json

Examples:
  dalo schema > plugin-v1.schema.json
  dalo schema | jq '.["$defs"].Hook.required'
`

func init() {
	register(&command{
		name:  "schema",
		usage: "",
		short: "print the JSON Schema of PLUGIN.toml",
		doc:   schemaDoc,
		run:   runSchema,
	})
}

func runSchema(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() != 0 {
		return usageError(e, "schema", "takes no arguments, got %d", fs.NArg())
	}
	b, err := engine.JSONSchema()
	if err != nil {
		fmt.Fprintf(e.stderr, "dalo schema: %v\n", err)
		return exitFail
	}
	if _, err := e.stdout.Write(b); err != nil {
		fmt.Fprintf(e.stderr, "dalo schema: %v\n", err)
		return exitFail
	}
	return exitOK
}
