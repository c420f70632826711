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
		flags: func(fs *pflag.FlagSet) {
			fs.String("provider", "", hookdispatch.ProviderHelp)
			fs.String("event", "", hookdispatch.EventHelp)
		},
		run: func(e *env, fs *pflag.FlagSet) int {
			provider, _ := fs.GetString("provider")
			event, _ := fs.GetString("event")
			return hookdispatch.Run("dalo "+hookdispatch.Name, provider, event, fs.Args(), e.stdin, e.stdout, e.stderr)
		},
	})
}
