package engine

import (
	"errors"
	"fmt"

	"cuelang.org/go/cue"
)

// A Layout says where the selector of each reference kind points in a
// source, read from #SourceLayout: <dir>/<selector><suffix>. The plugin
// kind's dir is also where discovery looks for packages.
type Layout map[string]LayoutEntry

// A LayoutEntry is the layout of one reference kind. A Suffix that starts
// with '/' names the file that makes <dir>/<selector> a directory asset.
type LayoutEntry struct {
	Dir    string `json:"dir"`
	Suffix string `json:"suffix"`
}

// Path is the slash-separated path, relative to the source root, that a
// selector of kind names; "" for a kind without a layout.
func (l Layout) Path(kind, selector string) string {
	e, ok := l[kind]
	if !ok {
		return ""
	}
	return e.Dir + "/" + selector + e.Suffix
}

// Dir is the directory of a directory asset (a package, a skill):
// <dir>/<selector>.
func (l Layout) Dir(kind, selector string) string {
	return l[kind].Dir + "/" + selector
}

// File is the name of the file that makes a directory asset of kind, such
// as PLUGIN.toml; "" for a kind whose asset is a single file.
func (l Layout) File(kind string) string {
	s := l[kind].Suffix
	if len(s) > 0 && s[0] == '/' {
		return s[1:]
	}
	return ""
}

// ErrSourceID is wrapped by the error that refuses a source id.
var ErrSourceID = errors.New("source id")

// CheckSourceID checks id against #SourceID: the rule that both
// 'dalo plugin validate --source-id' and 'dalo source add' apply.
func CheckSourceID(id string) error {
	r, err := LoadRules()
	if err != nil {
		return err
	}
	return r.CheckSourceID(id)
}

// CheckField checks value against field of the struct definition def
// (such as #Plugin and name) in r; the error says the rule in the words
// of the field's @expect, as validation does. A command that makes a file
// or directory of a package's name or a tool's id refuses a bad one with
// it before it writes anything.
func (r *Rules) CheckField(def, field, value string) error {
	fd, ok := r.structFields(r.root.LookupPath(cue.ParsePath(def)), def)[field]
	if !ok {
		return fmt.Errorf("rules: %s has no field %s", def, field)
	}
	if fd.v.Unify(r.ctx.Encode(value)).Validate(cue.Concrete(true)) != nil {
		return fmt.Errorf("invalid %s %s: expected %s", field, shortValue(value), expectation(fd.v))
	}
	return nil
}

// SourceIDRule says what a source id is, in the words of #SourceIDRule.
func (r *Rules) SourceIDRule() string { return r.sourceIDRule }

// CheckSourceID checks id against #SourceID in r.
func (r *Rules) CheckSourceID(id string) error {
	if r.sourceIDDef.Unify(r.ctx.Encode(id)).Validate(cue.Concrete(true)) != nil {
		return fmt.Errorf("%w %q: %s", ErrSourceID, id, r.sourceIDRule)
	}
	return nil
}
