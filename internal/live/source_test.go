//go:build unix

package live

import (
	"os"
	"path/filepath"
	"testing"

	"dalo/internal/scenario"
)

// The author source every live test installs is the scenarios' kit
// (dalo/internal/scenario), which dalo providers verify runs too.
const (
	pkgName            = scenario.PkgName
	srcID              = scenario.SrcID
	markPromptContext  = scenario.MarkPromptContext
	markFailureContext = scenario.MarkFailureContext
	markDenyReason     = scenario.MarkDenyReason
	markContinue       = scenario.MarkContinue
	markReplaced       = scenario.MarkReplaced
	markClosedStderr   = scenario.MarkClosedStderr
	markOpenStderr     = scenario.MarkOpenStderr
	markPromptDeny     = scenario.MarkPromptDeny
	markPromptStderr   = scenario.MarkPromptStderr
	markStopStderr     = scenario.MarkStopStderr
	markEndStderr      = scenario.MarkEndStderr
	markSkill          = scenario.MarkSkill
	markAgent          = scenario.MarkAgent
	markInstruction    = scenario.MarkInstruction
)

var sourceFiles = scenario.SourceFiles

// writeSource writes the author source files under dir.
func writeSource(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		perm := os.FileMode(0o644)
		if filepath.Ext(name) == ".sh" {
			perm = 0o755
		}
		if err := os.WriteFile(path, []byte(content), perm); err != nil {
			t.Fatal(err)
		}
	}
}
