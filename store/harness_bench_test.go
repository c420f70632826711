package store

import (
	"fmt"
	"strings"
	"testing"

	"dalo/hooksfile"
	"dalo/internal/unidiff"
	"dalo/providers"
)

// bigSettings is a settings.json of about size bytes, as a user's grows:
// a long list of permissions, other hooks and dalo's entry for PreToolUse
// among them.
func bigSettings(size int) []byte {
	var b strings.Builder
	b.WriteString("{\n  \"permissions\": {\n    \"allow\": [\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "      \"Bash(tool-%d --flag value-%d:*)\",\n", i, i)
	}
	b.WriteString("      \"Read\"\n    ]\n  },\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"mine\"\n          }\n        ]\n      }\n    ]\n  }\n}\n")
	return []byte(b.String())
}

// BenchmarkInstallBigSettings is what install does with a 50 MB
// settings.json: adds dalo's entries for three events and computes the
// diff it shows. It must stay linear in the file's size.
func BenchmarkInstallBigSettings(b *testing.B) {
	ts, err := providers.Load()
	if err != nil {
		b.Fatal(err)
	}
	tb, ok := ts.Lookup("claude", "2.1.332")
	if !ok {
		b.Fatal("no claude@2.1.332")
	}
	want := map[string]hooksfile.Entry{}
	for _, ev := range []string{"PreToolUse", "Stop", "UserPromptSubmit"} {
		e, err := tb.Entry(ev, "/bin/dalo hook dispatch --provider claude --event "+ev, 7)
		if err != nil {
			b.Fatal(err)
		}
		want[ev] = e
	}
	o := hooksfile.OwnerOf(tb, "/store", "")
	for _, size := range []int{5 << 20, 50 << 20} {
		b.Run(fmt.Sprintf("MB=%d", size>>20), func(b *testing.B) {
			doc := bigSettings(size)
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				got, _, err := o.Edit("settings.json", doc, hooksfile.Record{}, want)
				if err != nil {
					b.Fatal(err)
				}
				if unidiff.Diff("settings.json", doc, got) == "" {
					b.Fatal("no diff")
				}
			}
		})
	}
}
