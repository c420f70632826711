package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/encoding/jsonschema"

	defs "dalo/cue"
)

// SchemaID is the $id of plugin-v1.schema.json. It names the document; it
// is not fetched by validators, which resolve the schema's $refs inside it.
const SchemaID = "urn:dalo:schema:plugin-v1"

const (
	schemaTitle = "PLUGIN.toml schema 1"
	schemaDesc  = "The structural shape of a Portable Agent Packages manifest (PLUGIN.toml schema 1, " +
		"tool descriptor 1, hook descriptor 1, draft 0.1), for editors and for structural validation " +
		"of decoded TOML. It cannot check file containment, fallback closure, binding types, " +
		"admitted hook combinations, byte limits (maxLength counts characters) or provider support: " +
		"'dalo plugin validate' adds those checks. Do not write $schema as a TOML key: unknown " +
		"fields are invalid."
)

// JSONSchema returns plugin-v1.schema.json: JSON Schema 2020-12 generated
// from #Manifest, the structural definitions of the CUE rules, so that the
// editor schema and the validator cannot drift apart. Only the structural
// definitions translate: the rules that relate fields to each other live in
// other definitions and stay dalo's. Field descriptions come from CUE doc
// comments, else from the @expect attribute the validator's messages use.
// The output is deterministic, indented, and ends in a newline.
func JSONSchema() ([]byte, error) {
	return generateSchema(defs.Manifest, SchemaID, schemaTitle, schemaDesc)
}

// ProjectSchemaID is the $id of dalo-project-v1.schema.json.
const ProjectSchemaID = "urn:dalo:schema:project-v1"

const (
	projectSchemaTitle = "dalo.toml, a project's packages"
	projectSchemaDesc  = "The structural shape of a project's dalo.toml: its sources ([sources.<id>], git = URL " +
		"with an optional ref, or path = DIR inside the project) and the packages it uses ([[packages]], ref = " +
		"\"SOURCE:NAME\" and the providers to install it on), for editors. It cannot check what relates fields " +
		"(git or path, a declared source, known providers): 'dalo lock' adds those checks."
)

// ProjectJSONSchema returns dalo-project-v1.schema.json: JSON Schema
// 2020-12 generated from #Project as JSONSchema is from #Manifest, for
// editors of dalo.toml.
func ProjectJSONSchema() ([]byte, error) {
	return generateSchema(defs.Project, ProjectSchemaID, projectSchemaTitle, projectSchemaDesc)
}

// generateSchema is the JSON Schema of the CUE definition def.
func generateSchema(def, id, title, desc string) ([]byte, error) {
	ctx := cuecontext.New()
	root, err := defs.LoadPackageRules(ctx)
	if err != nil {
		return nil, err
	}
	expr, err := jsonschema.Generate(root.LookupPath(cue.ParsePath(def)), nil)
	if err != nil {
		return nil, fmt.Errorf("generating JSON Schema from %s: %w", def, err)
	}
	doc, ok := expr.(*ast.StructLit)
	if !ok {
		return nil, fmt.Errorf("generating JSON Schema from %s: got %T, want a struct", def, expr)
	}
	describeFields(doc, root.LookupPath(cue.ParsePath(def)))
	if defsLit, ok := schemaField(doc, "$defs").(*ast.StructLit); ok {
		for _, d := range defsLit.Elts {
			f, ok := d.(*ast.Field)
			if !ok {
				continue
			}
			name, _, _ := ast.LabelName(f.Label)
			def := root.LookupPath(cue.ParsePath("#" + name))
			if st, ok := f.Value.(*ast.StructLit); ok && def.Exists() {
				describeFields(st, def)
			}
		}
	}
	// $id, title and description follow $schema at the top. The
	// description is the one written for editors, not def's doc comment,
	// which is written for readers of the rules.
	doc.Elts = slices.DeleteFunc(doc.Elts, func(d ast.Decl) bool {
		f, ok := d.(*ast.Field)
		if !ok {
			return false
		}
		name, _, _ := ast.LabelName(f.Label)
		return name == "description"
	})
	head := []ast.Decl{doc.Elts[0],
		schemaDecl("$id", ast.NewString(id)),
		schemaDecl("title", ast.NewString(title)),
		schemaDecl("description", ast.NewString(desc)),
	}
	doc.Elts = append(head, doc.Elts[1:]...)

	v := ctx.BuildExpr(doc)
	if err := v.Err(); err != nil {
		return nil, fmt.Errorf("building JSON Schema: %w", err)
	}
	raw, err := v.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding JSON Schema: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, fmt.Errorf("indenting JSON Schema: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// describeFields gives each property of the object schema st that has no
// description the @expect text of the matching field of def.
func describeFields(st *ast.StructLit, def cue.Value) {
	props, ok := schemaField(st, "properties").(*ast.StructLit)
	if !ok {
		return
	}
	expect := map[string]string{}
	it, err := def.Fields(cue.Optional(true))
	if err != nil {
		return
	}
	for it.Next() {
		a := it.Value().Attribute("expect")
		if text, err := a.String(0); err == nil && text != "" {
			expect[it.Selector().Unquoted()] = expandExpect(text)
		}
	}
	for _, d := range props.Elts {
		f, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		name, _, _ := ast.LabelName(f.Label)
		text, ok := expect[name]
		if !ok {
			continue
		}
		p, ok := f.Value.(*ast.StructLit)
		if !ok || schemaField(p, "description") != nil {
			continue
		}
		p.Elts = append([]ast.Decl{schemaDecl("description", ast.NewString(text))}, p.Elts...)
	}
}

// schemaField returns the value of the field called name in st, or nil.
func schemaField(st *ast.StructLit, name string) ast.Expr {
	for _, d := range st.Elts {
		if f, ok := d.(*ast.Field); ok {
			if n, _, _ := ast.LabelName(f.Label); n == name {
				return f.Value
			}
		}
	}
	return nil
}

func schemaDecl(name string, v ast.Expr) *ast.Field {
	return &ast.Field{Label: ast.NewStringLabel(name), Value: v}
}
