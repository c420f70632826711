package store

import (
	"path/filepath"
	"testing"

	"dalo/bench/sourcegen"
)

func BenchmarkDiffSources(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	if err := sourcegen.Write(src, 1000, 0); err != nil {
		b.Fatal(err)
	}
	s := &Store{Dir: filepath.Join(dir, "store")}
	x := Source{ID: "team", Path: src}
	for b.Loop() {
		if _, err := s.diffSources(x, x); err != nil {
			b.Fatal(err)
		}
	}
}
