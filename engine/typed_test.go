package engine

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/rogpeppe/go-internal/txtar"

	"dalo/bench/sourcegen"
)

// TestTypedManifestAgrees holds typedManifest to go-toml's decoding of
// the same source into a Manifest, on every manifest of the test data (in
// directories and in the conformance suite's archives) and of each of
// bench/sourcegen's shapes: whatever it converts, go-toml decodes alike,
// and it converts every generated manifest.
func TestTypedManifestAgrees(t *testing.T) {
	corpus := map[string][]byte{}
	err := filepath.WalkDir("../testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch {
		case strings.HasSuffix(path, ".toml"):
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			corpus[path] = data
		case strings.HasSuffix(path, ".txtar"):
			ar, err := txtar.ParseFile(path)
			if err != nil {
				return err
			}
			for _, f := range ar.Files {
				if strings.HasSuffix(f.Name, "PLUGIN.toml") {
					corpus[path+":"+f.Name] = f.Data
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	generated := map[string]bool{}
	for shape, write := range map[string]func(string) error{
		"pool":   func(dir string) error { return sourcegen.Write(dir, 3, 0) },
		"own":    func(dir string) error { return sourcegen.WriteOwn(dir, 3) },
		"skills": func(dir string) error { return sourcegen.WriteSkills(dir, 3) },
	} {
		dir := filepath.Join(t.TempDir(), shape)
		if err := write(dir); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "plugins", "*", "PLUGIN.toml"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			corpus[shape+":"+f] = data
			generated[shape+":"+f] = true
		}
	}
	decoded, converted := 0, 0
	for name, src := range corpus {
		var data map[string]any
		if toml.Unmarshal(src, &data) != nil {
			continue
		}
		decoded++
		var want, got Manifest
		wantErr := toml.Unmarshal(src, &want)
		if err := typedManifest(data, &got); err != nil {
			if generated[name] {
				t.Errorf("%s: generated manifest not converted: %v", name, err)
			}
			continue
		}
		converted++
		if wantErr != nil {
			t.Errorf("%s: converted, but go-toml refuses it: %v", name, wantErr)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\nconverted: %+v\ngo-toml:   %+v", name, got, want)
		}
	}
	t.Logf("%d manifests decoded, %d converted", decoded, converted)
	if converted < decoded/2 {
		t.Errorf("only %d of %d manifests converted", converted, decoded)
	}
}
