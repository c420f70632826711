package dispatch

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"dalo/plan"
)

// writePayload is a Write PreToolUse whose content is size bytes of
// source code, as a harness sends it before writing a file.
func writePayload(tb testing.TB, size int) []byte {
	line := "\tif err := f(\"x\"); err != nil { return fmt.Errorf(\"wrap: %w\", err) } // é\n"
	content := strings.Repeat(line, size/len(line)+1)[:size]
	payload, err := json.Marshal(map[string]any{
		"session_id":      "00000000-0000-0000-0000-000000000000",
		"cwd":             "/tmp/work",
		"hook_event_name": "PreToolUse",
		"tool_name":       "Write",
		"tool_input":      map[string]any{"file_path": "/tmp/work/main.go", "content": content},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return payload
}

var writeFields = &plan.Native{
	Fields: []plan.Field{
		{Field: "session.id", Key: "session_id", Type: "string"},
		{Field: "session.cwd", Key: "cwd", Type: "path"},
		{Field: "tool.name", Key: "tool_name", Type: "string"},
	},
	ActorKey: "agent_id",
}

// TestExtractFieldsLeavesTheToolInput: reading the fields of a payload
// whose tool input is a megabyte allocates a small part of it. The input
// is checked, not built: no field is read from it, and building it (the
// escapes of a file's every line decoded) cost a dispatcher ten times
// reading it.
func TestExtractFieldsLeavesTheToolInput(t *testing.T) {
	payload := writePayload(t, 1<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f, err := extractFields(payload, writeFields)
	runtime.ReadMemStats(&after)
	if err != nil || f["tool.name"] != "Write" || f["session.cwd"] != "/tmp/work" || f["actor.kind"] != "main" {
		t.Fatalf("fields %v, %v", f, err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<10 {
		t.Errorf("reading the fields of a %d-byte payload allocated %d bytes, want under 16 KiB", len(payload), n)
	}
}

// BenchmarkExtractFields reads the portable fields of a Write PreToolUse
// whose content is source code of each size: what a dispatcher does with
// the payload before any handler runs.
func BenchmarkExtractFields(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		payload := writePayload(b, size)
		b.Run(fmt.Sprintf("content=%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				if f, err := extractFields(payload, writeFields); err != nil || f["tool.name"] != "Write" {
					b.Fatalf("fields %v, %v", f, err)
				}
			}
		})
	}
}
