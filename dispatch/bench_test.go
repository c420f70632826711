package dispatch_test

import (
	"fmt"
	"os"
	"testing"

	"dalo/dispatch"
	"dalo/dispatch/dispatchtest"
)

// BenchmarkDispatch is one Bash PreToolUse of the recorded payload with
// 10, 100 and 1,000 packages installed (dispatchtest.Many): in the process,
// warm, so it shows what grows with the store, which must not; the handler
// run is included. bench/dispatch.sh measures the cold dalo-hook process a
// harness starts, beside the handler run directly.
func BenchmarkDispatch(b *testing.B) {
	payload, err := os.ReadFile("../providers/testdata/recordings/claude/2.1.233/PreToolUse.json")
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("packages=%d", n), func(b *testing.B) {
			home := b.TempDir()
			if _, err := dispatchtest.Many(home, n); err != nil {
				b.Fatal(err)
			}
			req := dispatch.Request{Home: home, Provider: "claude", Event: "PreToolUse", Payload: payload, Getenv: os.LookupEnv}
			b.ReportAllocs()
			for b.Loop() {
				if out, err := dispatch.Dispatch(req); err != nil || out.Exit != 0 || len(out.Stdout) != 0 {
					b.Fatalf("dispatch = %d %q %q %v, want exit 0 and no answer (a portable allow)", out.Exit, out.Stdout, out.Stderr, err)
				}
			}
		})
	}
}
