package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestLeafKey holds leafKey to the keys fmt wrote before it: a cache keeps
// the answers under them.
func TestLeafKey(t *testing.T) {
	for _, v := range []any{"", "tool-0", "a|b", strings.Repeat("é", 40), int64(0), int64(-30), int64(1 << 40), true, false, 1.5, 1e21, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} {
		want := fmt.Sprintf("leaf|%s|%T|%v", "#Tool.id", v, v)
		if got := string(leafKey(nil, "#Tool.id", v)); got != want {
			t.Errorf("leafKey(%#v) = %q, want %q", v, got, want)
		}
	}
}

// TestRememberedLeafAllocatesNothing: asking the shape walk about a
// scalar it answered before is a map lookup, once per field of every
// manifest of a source; building its key with fmt was a third of the walk.
func TestRememberedLeafAllocatesNothing(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	def := r.structFields(r.manifest, "#Manifest")["schema_version"].v
	var v any = int64(1)
	if !r.acceptLeaf(def, "#Manifest.schema_version", v) {
		t.Fatal("schema_version = 1 not accepted")
	}
	if n := testing.AllocsPerRun(100, func() { r.acceptLeaf(def, "#Manifest.schema_version", v) }); n != 0 {
		t.Errorf("a remembered answer costs %v allocations, want 0", n)
	}
}
