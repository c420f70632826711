package plan

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func hook(pkg, id string, tools ...string) PlannedHook {
	return PlannedHook{Package: pkg, Hook: id, ToolNames: tools}
}

func ids(ef *EventFile) string {
	if ef == nil {
		return "<none>"
	}
	var s []string
	for _, h := range ef.Hooks {
		s = append(s, h.Package+"/"+h.Hook)
	}
	return strings.Join(s, " ")
}

func testPlan(version string, hooks ...PlannedHook) *Plan {
	return &Plan{Schema: Schema, Provider: "claude", Version: version,
		Events:  map[string][]PlannedHook{"PreToolUse": hooks, "Stop": {hook("a", "stop")}},
		Natives: map[string]Native{"PreToolUse": {Event: "PreToolUse"}, "Stop": {Event: "Stop"}}}
}

// A dispatch reads the hooks without a matcher and the bucket of its tool
// only; with an unknown tool name, every bucket.
func TestLoadBuckets(t *testing.T) {
	dir := t.TempDir()
	p := testPlan("1", hook("a", "any"), hook("b", "bash", "Bash"), hook("c", "edit", "Edit"),
		hook("d", "both", "Edit", "Bash"), hook("e", "mcp", "mcp__srv__t/x", ".hidden"))
	if err := WriteIndex(dir, p, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		event, tool string
		all         bool
		want        string
	}{
		{"PreToolUse", "Bash", false, "a/any b/bash d/both"},
		{"PreToolUse", "Edit", false, "a/any c/edit d/both"},
		{"PreToolUse", "Read", false, "a/any"},
		{"PreToolUse", "mcp__srv__t/x", false, "a/any e/mcp"},
		{"PreToolUse", ".hidden", false, "a/any e/mcp"},
		{"PreToolUse", "", true, "a/any b/bash c/edit d/both e/mcp"},
		{"Stop", "", false, "a/stop"},
		{"PostToolUse", "Bash", false, "<none>"},
		{"../claude", "", false, "<none>"},
	} {
		ef, err := Load(dir, "claude", tc.event, func(*Native) (string, bool) { return tc.tool, tc.all })
		if err != nil {
			t.Fatalf("%s %s: %v", tc.event, tc.tool, err)
		}
		if got := ids(ef); got != tc.want {
			t.Errorf("%s %q: hooks %s, want %s", tc.event, tc.tool, got, tc.want)
		}
	}
	if err := WriteIndex(dir, &Plan{Provider: "claude"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(indexDir(dir, "claude")); !os.IsNotExist(err) {
		t.Errorf("an empty plan left the index: %v", err)
	}
	if ef, err := Load(dir, "claude", "Stop", nil); ef != nil || !errors.Is(err, ErrNotInstalled) {
		t.Errorf("removed index: %v %v, want ErrNotInstalled", ids(ef), err)
	}
}

// Readers running while generations are replaced always see one whole
// generation: every hook they read, from the event file and the bucket
// alike, belongs to the generation the event file names; and each writer
// leaves exactly one generation behind.
func TestLoadNeverMixes(t *testing.T) {
	dir := t.TempDir()
	gen := func(i int) *Plan {
		v := fmt.Sprint(i)
		return testPlan(v, hook("a", "any-"+v), hook("b", "bash-"+v, "Bash"))
	}
	if err := WriteIndex(dir, gen(0), nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan string, 8)
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ef, err := Load(dir, "claude", "PreToolUse", func(*Native) (string, bool) { return "Bash", false })
				if err != nil || ef == nil {
					errs <- fmt.Sprintf("load: %v %v", ef, err)
					return
				}
				want := "a/any-" + ef.Version + " b/bash-" + ef.Version
				if got := ids(ef); got != want {
					errs <- "mixed generations: " + got + ", want " + want
					return
				}
			}
		}()
	}
	for i := 1; i <= 200; i++ {
		if err := WriteIndex(dir, gen(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	ents, _ := os.ReadDir(indexDir(dir, "claude"))
	if len(ents) != 2 {
		t.Errorf("index holds %d entries, want %s and one generation", len(ents), Pointer)
	}
}

// A store of another schema is refused, not read as "nothing installed".
func TestLoadOtherSchema(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "claude.json"), []byte(`{"schema": 1, "events": {}}`), 0o644)
	if _, err := Load(dir, "claude", "Stop", nil); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("schema 1, this dalo reads %d; run 'dalo plugin install' again", Schema)) {
		t.Errorf("legacy plan: %v", err)
	}
}

// A plan of a new schema switches over in order: while the harness
// entries still call a dispatcher of the old schema, its pointer and
// generation stay; this schema's dispatcher reads only its own pointer, and
// refuses an index with only another schema's; DropOtherSchemas then
// removes the old pointer and generation. The old schemas: 1 to 4 had one
// pointer, current; 5 its own, current.5, and copies of the rules in every
// index file, which this schema reads from the rules compiled into it.
func TestSchemaSwitch(t *testing.T) {
	for _, tc := range []struct{ pointer, file string }{
		{"current", `{"schema":4,"provider":"claude","event":"Stop","hooks":[{"tool":{"root":"/staged/old"}}]}`},
		{"current.5", `{"schema":5,"provider":"claude","event":"Stop","native":{},"limits":{"response_bytes":4194304,"result_text_bytes":16384,"rewritten_input_bytes":1048576},"rules":{"results":{"allow":{}},"fail_closed":{"gate":"deny"}},"hooks":[{"result_kinds":["abstain","observe"],"tool":{"root":"/staged/old","interpreter":"node"}}]}`},
	} {
		t.Run(tc.pointer, func(t *testing.T) { testSchemaSwitch(t, tc.pointer, tc.file) })
	}
}

func testSchemaSwitch(t *testing.T, pointer, file string) {
	dir := t.TempDir()
	idx := indexDir(dir, "claude")
	old := filepath.Join(idx, "g-old")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(old, "Stop.json"), []byte(file), 0o644)
	if err := os.Symlink("g-old", filepath.Join(idx, pointer)); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir, "claude", "Stop", nil); err == nil || !strings.Contains(err.Error(), "it holds plans of another schema ("+pointer+"), this dalo reads "+strconv.Itoa(Schema)+"; run 'dalo plugin install' again") {
		t.Errorf("an index of another schema only: %v", err)
	}
	if err := WriteIndex(dir, testPlan("1"), nil); err != nil {
		t.Fatal(err)
	}
	if gen, err := os.Readlink(filepath.Join(idx, pointer)); err != nil || gen != "g-old" {
		t.Fatalf("the old schema's pointer after writing this schema's: %q, %v", gen, err)
	}
	if _, err := os.Stat(filepath.Join(old, "Stop.json")); err != nil {
		t.Fatalf("the old schema's generation was removed while its pointer names it: %v", err)
	}
	if roots, err := Roots(dir); err != nil || !slices.Contains(roots, "/staged/old") {
		t.Errorf("Roots while the old pointer stays = %q, %v; want the old generation's roots kept", roots, err)
	}
	if ef, err := Load(dir, "claude", "Stop", nil); err != nil || ef == nil {
		t.Fatalf("this schema's pointer: %v, %v", ef, err)
	}
	if err := DropOtherSchemas(dir, "claude"); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(idx)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 2 || !slices.Contains(names, Pointer) || slices.Contains(names, pointer) || slices.Contains(names, "g-old") {
		t.Errorf("after DropOtherSchemas the index holds %q, want %s and its generation", names, Pointer)
	}
}

// pathEscape escapes as net/url's PathEscape, which install once used to
// name the buckets: every byte alone, and whatever FuzzPathEscape finds.
func TestPathEscape(t *testing.T) {
	for c := 0; c < 256; c++ {
		checkPathEscape(t, string(rune(c))+string([]byte{byte(c)}))
	}
	checkPathEscape(t, "mcp__server/tool name?é")
}

func FuzzPathEscape(f *testing.F) {
	f.Add("Bash")
	f.Add("mcp__a b/c%d")
	f.Fuzz(checkPathEscape)
}

func checkPathEscape(t *testing.T, s string) {
	if got, want := pathEscape(s), url.PathEscape(s); got != want {
		t.Fatalf("pathEscape(%q) = %q, url.PathEscape %q", s, got, want)
	}
}
