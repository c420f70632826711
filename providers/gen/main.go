// Command gen writes providers/compiled_tables.go: the provider tables
// compiled from CUE, with every answer of #Capability on them, as a Go
// value the dalo binary holds so that no command evaluates CUE for
// provider tables; and
// providers/EVIDENCE.md, what each claim of each table rests on, for a
// reviewer; and plan/known.go, the providers and native events the
// dispatcher may be asked for and the interpreters of the tool runtimes. Run it as go generate ./providers after changing a table or the
// rules.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"dalo/providers"
)

func main() {
	for _, out := range []struct {
		name string
		make func() ([]byte, error)
	}{
		{providers.CompiledFile, providers.Compile},
		{"EVIDENCE.md", providers.EvidenceReport},
		{providers.KnownFile, providers.KnownSource},
	} {
		b, err := out.make()
		if err == nil {
			err = writeAtomic(out.name, b)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "providers/gen: %v\n", err)
			os.Exit(1)
		}
	}
}

// writeAtomic replaces name with data: a temp file beside it, synced, then
// renamed over it, then the directory synced. It is plan.WriteFile's
// twin, not a call to it, because one of the files it writes is
// plan/known.go: a generator that imported plan could not be built when
// that file is stale, the one time it must run.
func writeAtomic(name string, data []byte) error {
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+"-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}
