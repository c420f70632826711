// Command dalo-hook is dalo's hook dispatcher alone: `dalo-hook dispatch`
// is `dalo hook dispatch`, the same code, in a binary that links no CUE.
// A harness starts it on every tool call, and Go initialises every linked
// package on every start: CUE's packages alone cost the dalo binary
// milliseconds that this one does not pay (bench/dispatch.sh measures
// both). `dalo plugin install` writes harness entries that call the
// dalo-hook beside dalo, so build both: go install ./cmd/...
package main

import (
	"os"

	"dalo/cmd/internal/hookdispatch"
)

func main() {
	growStack()
	hookdispatch.Exit = os.Exit
	os.Exit(hookdispatch.Hook(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// stackDepth is an index growStack's compiler cannot know.
var stackDepth = 1

// growStack grows the main goroutine's stack from its first few KiB to
// what a dispatch ends up needing (16 KiB) in one step, while it holds one
// frame, and touches no more of it than its 8 KiB frame:
// growing as a dispatch goes deeper copies the stack again and again, and
// each copy walks every frame's tables (a tenth of a dispatcher's
// instructions, by cachegrind).
//
//go:noinline
func growStack() byte {
	var frame [8 << 10]byte
	frame[stackDepth] = 1
	return frame[stackDepth-1]
}
