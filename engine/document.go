package engine

import (
	"bytes"

	"cuelang.org/go/cue"
)

// CheckDocument reads src, the TOML document file (named as messages show
// it), and checks it against def, a struct definition of the rules such as
// #Project, the way a manifest is read and checked: the reader's limits,
// duplicate keys, then the shape, each finding at its line and column with
// its field, an unknown field named with the one it resembles. It returns
// the decoded document when there are no errors, else nil and the errors,
// sorted. A leading byte order mark is skipped, as a manifest's is.
func (r *Rules) CheckDocument(file, def string, src []byte) (*Document, []Diagnostic) {
	l := &diagList{file: file, doc: file}
	v := r.root.LookupPath(cue.ParsePath(def))
	if !v.Exists() {
		l.errorf("E099", Pos{}, "", "internal error: the rules have no %s", def)
		return nil, l.diags
	}
	lim := r.Limits
	if len(src) > lim.ManifestBytes {
		l.errorf("E006", Pos{}, "", "%s is larger than %d bytes", file, lim.ManifestBytes)
		return nil, l.diags
	}
	src = bytes.TrimPrefix(src, []byte(utf8BOM))
	doc := decodeManifest(src, &lim, l)
	if doc == nil {
		return nil, l.diags
	}
	if !r.acceptStruct(v, def, doc.data) {
		r.walkStruct(v, def, doc.data, "", doc, l)
		if len(l.diags) == 0 {
			if err := v.Unify(r.ctx.Encode(cueData(doc.data))).Validate(cue.Concrete(true), cue.Final()); err != nil {
				l.errorf("E023", Pos{1, 1}, "", "invalid value: %v", err)
			}
		}
	}
	if l.hasErrors() {
		sortDiagnostics(l.diags)
		return nil, l.diags
	}
	return &Document{File: file, Data: doc.data, m: doc}, nil
}

// A Document is a TOML file CheckDocument accepted: its data, decoded, and
// where each of its fields is, for the findings of checks CUE does not make.
type Document struct {
	File string
	Data map[string]any
	m    *manifest
}

// Errorf is a finding about field (a field path: packages[1].ref) at its
// value, or where the nearest enclosing field is.
func (d *Document) Errorf(code, field, format string, args ...any) Diagnostic {
	l := diagList{file: d.File}
	l.errorf(code, d.m.at(field), field, format, args...)
	return l.diags[0]
}

// KeyErrorf is Errorf at field's key: for a name, such as a table's.
func (d *Document) KeyErrorf(code, field, format string, args ...any) Diagnostic {
	l := diagList{file: d.File}
	l.errorf(code, d.m.keyAt(field), field, format, args...)
	return l.diags[0]
}

// Field is the field path of key in the table at parent, as findings name
// it: quoted when it is not a bare key.
func Field(parent, key string) string { return joinPath(parent, key) }

// Index is the field path of element i of the array at parent.
func Index(parent string, i int) string { return indexPath(parent, i) }

// SortDiagnostics sorts findings by file, position and code, as reports
// list them.
func SortDiagnostics(ds []Diagnostic) { sortDiagnostics(ds) }
