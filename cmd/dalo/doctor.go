package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"dalo/internal/termtext"
	"dalo/store"
)

const doctorDoc = `Doctor checks, without changing anything, that dalo's state agrees with
itself and with the harnesses, and ends with one line per installed hook
saying whether it is in force: whether the harness will call dalo's entry
for its event and the dispatcher will run the hook.

It checks that the registry and the approval ledger read and verify; that
every installed hook still has its grants and its staged bytes; that each
dispatch plan matches what is installed; that each harness configuration
reads as the harness reads it (a key twice is a problem) and holds every
dispatcher entry dalo wrote, unchanged, naming this store; that each
entry's dispatcher runs, by running it as the harness would but without a
shell and with --check (it loads the plan and re-checks each hook's grants,
digests and staged tree, and runs no handler); that no setting switches the
harness's hooks off (Claude Code's disableAllHooks, allowManagedHooksOnly
in managed settings; Gemini CLI's hooksConfig; GitHub Copilot CLI's and
Qwen Code's disableAllHooks), in the user's and the
machine's settings and in those of the project in the current directory
(another project's own settings can too: run doctor there); that Codex trusts each of dalo's entries as it is now (by the
hashes dalo recorded with 'plugin install --trust'; doctor starts no
harness); and that each package's required dependencies and instructions
are in force.

It reads under the store's shared lock: while another dalo command writes,
it waits for it, at most 10 seconds, then says so and exits 1.

Exit status: 0 everything agrees and every required hook is in force; 1 a
problem was found (an optional hook not in force is a warning).

Examples:
  dalo doctor
  dalo --json doctor
`

func init() {
	register(&command{name: "doctor", usage: "[--json]", short: "check that every installed hook is in force", doc: doctorDoc, run: runDoctor})
}

func runDoctor(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() != 0 {
		return usageError(e, "doctor", "takes no arguments")
	}
	s, ok := openStore(e, "doctor")
	if !ok {
		return exitFail
	}
	// A project's own settings can switch hooks off there: doctor reads
	// those of the directory it runs in, where the tables list them.
	wd, _ := os.Getwd()
	found, err := s.Doctor(store.DoctorOptions{Run: true, Project: wd})
	if err != nil {
		return fail(e, "doctor", err)
	}
	code := exitOK
	for _, f := range found {
		if f.Status == store.StatusProblem {
			code = exitFail
		}
	}
	if e.json {
		printJSON(e, found)
		return code
	}
	for _, f := range found {
		fmt.Fprintf(e.stdout, "%-10s %s: %s\n", f.Status, termtext.Escape(f.Subject), termtext.Escape(f.Message))
	}
	return code
}
