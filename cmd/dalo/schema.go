package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"dalo/engine"
	"dalo/project"
	"dalo/scaffold"
	"dalo/store"
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
plugins/<name>/PLUGIN.toml says, as 'dalo plugin new' writes it:

  #:schema ../../plugin-v1.schema.json

--write DIR writes DIR/plugin-v1.schema.json instead of printing it,
replacing the file there atomically: give it the source's root, where that
line expects it ('dalo init' writes it there too).

--project prints (or writes) dalo-project-v1.schema.json instead: the
schema of a project's dalo.toml ('dalo lock'), generated the same way from
#Project. Put it at the project's root and point dalo.toml at it:

  #:schema ./dalo-project-v1.schema.json

Exit status: 0 printed or written; 1 the write failed; 2 bad usage or a
DIR that is missing or not a directory.

Examples:
  # Put the schema where new manifests expect it, in the source ./src.
  dalo schema --write src
  dalo schema | jq '.["$defs"].Hook.required'
  dalo schema --project --write .
`

func init() {
	register(&command{
		name:  "schema",
		usage: "[--project] [--write DIR]",
		short: "print or write the JSON Schema of PLUGIN.toml",
		doc:   schemaDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.String("write", "", "write DIR/plugin-v1.schema.json instead of printing it")
			fs.Bool("project", false, "the schema of a project's dalo.toml, dalo-project-v1.schema.json")
		},
		run:      runSchema,
		verbatim: true,
	})
}

func runSchema(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() != 0 {
		return usageError(e, "schema", "takes no arguments, got %d", fs.NArg())
	}
	generate, file := engine.JSONSchema, scaffold.SchemaFile
	if p, _ := fs.GetBool("project"); p {
		generate, file = engine.ProjectJSONSchema, project.SchemaFile
	}
	b, err := generate()
	if err != nil {
		fmt.Fprintf(e.stderr, "dalo schema: %v\n", err)
		return exitFail
	}
	if fs.Changed("write") {
		dir, _ := fs.GetString("write")
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return usageError(e, "schema", "--write: %s is not a directory", dir)
		}
		name := filepath.Join(dir, file)
		if file == scaffold.SchemaFile {
			name, err = scaffold.WriteSchema(dir, b)
		} else {
			err = store.WriteFile(name, b, 0o644)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "dalo schema: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(e.stdout, "wrote %s\n", name)
		return exitOK
	}
	if _, err := e.stdout.Write(b); err != nil {
		fmt.Fprintf(e.stderr, "dalo schema: %v\n", err)
		return exitFail
	}
	return exitOK
}
