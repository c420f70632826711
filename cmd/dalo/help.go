package main

import (
	"fmt"

	"github.com/spf13/pflag"
)

const helpDoc = `Help prints the help of a command, exactly as 'dalo COMMAND --help' does:
'dalo help plugin install' is 'dalo plugin install --help', 'dalo help
plugin' lists the plugin commands, and 'dalo help' alone is 'dalo --help'.

Exit status: 0 printed; 2 no such command.

Examples:
  dalo help
  dalo help plugin install
`

const versionDoc = `Version prints dalo's version, exactly as 'dalo --version' does: the
module's version, the VCS revision the build recorded (with +modified when
the tree had changes) and the Go version it was built with.

Exit status: 0.

Examples:
  dalo version
`

func init() {
	register(&command{name: "help", usage: "[COMMAND...]", short: "print the help of a command", doc: helpDoc, run: runHelp, verbatim: true})
	register(&command{name: "version", usage: "", short: "print dalo's version", doc: versionDoc, run: runVersion})
}

// runHelp runs 'dalo COMMAND... --help', so that the two never differ.
// It is verbatim: the text it passes on is another command's, which goes
// through termtext there.
func runHelp(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() == 0 {
		fmt.Fprint(e.stdout, mainUsage())
		return exitOK
	}
	return run(append(fs.Args(), "--help"), e)
}

func runVersion(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() != 0 {
		return usageError(e, "version", "takes no arguments")
	}
	fmt.Fprintln(e.stdout, versionLine())
	return exitOK
}
