package main

import (
	"github.com/spf13/pflag"

	"dalo/cmd/internal/hookdispatch"
)

func init() {
	register(&command{
		name:  hookdispatch.Name,
		usage: hookdispatch.Usage,
		short: hookdispatch.Short,
		doc:   hookdispatch.Doc,
		flags: hookdispatch.Flags,
		run: func(e *env, fs *pflag.FlagSet) int {
			return hookdispatch.Run(fs, e.stdin, e.stdout, e.stderr)
		},
	})
}
