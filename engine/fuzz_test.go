package engine

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"cuelang.org/go/cue"
)

// FuzzManifest feeds arbitrary bytes as a PLUGIN.toml: validation must not
// panic, every diagnostic about the manifest must point inside it, and
// the shape is accepted field by field only when CUE accepts it whole.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(manifestA))
	f.Add([]byte("schema_version = 1\n[plugin]\nname = \"a\"\ndescription = \"x\"\n[[hook]]\nbindings = [{ input = 1 }]\n"))
	f.Add([]byte("a = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n"))
	f.Add([]byte("[plugin]\nname = \"a\"\nname = \"b\"\n"))
	f.Add([]byte("x = \"\xff\"\n"))
	f.Add([]byte("[[tool]]\nargv = [\n  [\n  \"b\"]]\n[providers.x]\n\"$schema\" = 1979-05-27\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "plugins", "a")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "PLUGIN.toml"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := Validate(root, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// The field-by-field proof of the shape accepts only what CUE
		// does.
		acceptAgrees(t, fuzzRules(), src)
		lines := bytes.Split(src, []byte("\n"))
		for _, d := range rep.Diagnostics {
			if d.File != "plugins/a/PLUGIN.toml" || d.Line == 0 {
				continue
			}
			if d.Line < 1 || d.Line > len(lines) {
				t.Fatalf("%s: line outside the %d lines of the manifest", d, len(lines))
			}
			if d.Column < 1 || d.Column > len(lines[d.Line-1])+1 {
				t.Fatalf("%s: column outside line %d of %d bytes", d, d.Line, len(lines[d.Line-1]))
			}
		}
	})
}

// FuzzReference: a reference the grammar (#Ref) admits splits into nonempty
// atoms free of ':', '#', '/' and '\' that join back to it, and the path
// it names in a source (#SourceLayout) stays in its layout directory,
// unless its selector is "." or "..", which resolution refuses. Checking
// against the compiled rule costs microseconds, not a validation.
func FuzzReference(f *testing.F) {
	r, err := LoadRules()
	if err != nil {
		f.Fatal(err)
	}
	grammar := r.root.LookupPath(cue.ParsePath("#Ref"))
	f.Fuzz(func(t *testing.T, s string) {
		ref := ParseRef(s)
		if grammar.Unify(r.ctx.Encode(s)).Validate(cue.Concrete(true)) != nil {
			return
		}
		atoms := []string{ref.Kind, ref.Selector}
		joined := ref.Kind + ":" + ref.Selector
		if ref.Source != "" || strings.Count(s, ":") == 2 {
			atoms = append(atoms, ref.Source)
			joined = ref.Kind + ":" + ref.Source + ":" + ref.Selector
		}
		for _, a := range atoms {
			if a == "" || strings.ContainsAny(a, ":#/\\") {
				t.Fatalf("%q: admitted with atom %q", s, a)
			}
		}
		if joined != s {
			t.Fatalf("%q: parsed as %+v", s, ref)
		}
		for kind, e := range r.Layout {
			p := r.Layout.Path(kind, ref.Selector)
			if ref.Selector == "." || ref.Selector == ".." {
				continue
			}
			if path.Clean(p) != p || !strings.HasPrefix(p, e.Dir+"/") || !filepath.IsLocal(filepath.FromSlash(p)) {
				t.Fatalf("%q: %s path %q leaves %s", s, kind, p, e.Dir)
			}
		}
	})
}

var fuzzRules = sync.OnceValue(func() *Rules {
	r, err := LoadRules()
	if err != nil {
		panic(err)
	}
	return r
})
