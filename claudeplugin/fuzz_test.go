package claudeplugin

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// FuzzConvert feeds any bytes as a plugin's plugin.json and hooks.json:
// Convert never panics, and what it makes is files inside the package
// directory whose manifest is TOML (which the manifest's name,
// description, commands and comments, all the plugin's text, must not
// break). Validation, which is slower, is the caller's and the other
// tests'. Its seed corpus, and whatever a run finds, are regression cases
// under testdata/fuzz.
func FuzzConvert(f *testing.F) {
	opt := options(f)
	f.Fuzz(func(t *testing.T, manifest, hooks []byte) {
		dir := filepath.Join(t.TempDir(), "plugin")
		for name, data := range map[string][]byte{".claude-plugin/plugin.json": manifest, "hooks/hooks.json": hooks} {
			os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tree, rep, err := Convert(dir, opt)
		if err != nil {
			return
		}
		pkgDir := opt.Rules.Layout.Dir("plugin", rep.Package)
		for _, file := range tree.Files() {
			p := file.Path
			if path.Clean(p) != p || !filepath.IsLocal(filepath.FromSlash(p)) {
				t.Fatalf("plugin.json %q, hooks.json %q: file %q is no clean local path", manifest, hooks, p)
			}
			if strings.HasPrefix(p, "plugins/") && !strings.HasPrefix(p, pkgDir+"/") {
				t.Fatalf("plugin.json %q, hooks.json %q: file %q is outside %s", manifest, hooks, p, pkgDir)
			}
			if p == pkgDir+"/"+opt.Rules.Layout.File("plugin") {
				var v map[string]any
				if err := toml.Unmarshal(file.Data, &v); err != nil {
					t.Fatalf("plugin.json %q, hooks.json %q: the manifest is not TOML: %v\n%s", manifest, hooks, err, file.Data)
				}
			}
		}
	})
}
