package main

import (
	"fmt"

	"github.com/spf13/pflag"
)

const doctorDoc = `Doctor checks, without changing anything, that dalo's state agrees with
itself and with the harnesses: the registry and the approval ledger read
and verify, every installed hook still has its grants and its staged bytes,
each dispatch plan matches what is installed, and each dispatcher entry dalo
wrote is present and unchanged in the harness configuration. Codex runs only
hooks the user trusted in its /hooks review; dalo cannot read that trust, so
doctor says it cannot be verified.

Exit status: 0 everything agrees; 1 a problem was found.

Examples:
  dalo doctor
  dalo --json doctor
`

func init() {
	register(&command{name: "doctor", usage: "[--json]", short: "check that the store and harness entries agree", doc: doctorDoc, run: runDoctor})
}

func runDoctor(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() != 0 {
		return usageError(e, "doctor", "takes no arguments")
	}
	s, ok := openStore(e, "doctor")
	if !ok {
		return exitFail
	}
	fs_ := s.Doctor()
	code := exitOK
	for _, f := range fs_ {
		if f.Status == "problem" {
			code = exitFail
		}
	}
	if e.json {
		printJSON(e, fs_)
		return code
	}
	for _, f := range fs_ {
		fmt.Fprintf(e.stdout, "%-10s %s: %s\n", f.Status, f.Subject, f.Message)
	}
	return code
}
