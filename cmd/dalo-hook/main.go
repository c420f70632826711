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
	hookdispatch.Exit = os.Exit
	os.Exit(hookdispatch.Hook(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
