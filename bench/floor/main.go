// Command floor reads and TOML-decodes every plugins/NAME/PLUGIN.toml of a
// source and does nothing else: the floor under which no validation of
// the same manifests can go. bench/validate.sh prints dalo's cold
// validation as a multiple of it.
//
//	go run ./bench/floor SOURCE
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pelletier/go-toml/v2"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: floor SOURCE")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "plugins", "*", "PLUGIN.toml"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	keys := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var m map[string]any
		if err := toml.Unmarshal(src, &m); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			os.Exit(1)
		}
		keys += len(m)
	}
	fmt.Printf("%d manifests, %d top-level keys\n", len(files), keys)
}
