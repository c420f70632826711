package main

import (
	"github.com/spf13/pflag"

	"dalo/cmd/internal/hookdispatch"
)

func init() {
	register(&command{
		name:     hookdispatch.Name,
		usage:    hookdispatch.Usage(),
		short:    hookdispatch.Short,
		doc:      hookdispatch.Doc(),
		verbatim: true,
		flags: func(fs *pflag.FlagSet) {
			fs.String("provider", "", hookdispatch.ProviderHelp())
			fs.String("event", "", hookdispatch.EventHelp)
			fs.String("home", "", hookdispatch.HomeHelp)
			fs.String("project", "", hookdispatch.ProjectHelp)
			fs.Bool("fail-closed", false, hookdispatch.FailClosedHelp)
			fs.Bool("check", false, hookdispatch.CheckHelp)
		},
		run: func(e *env, fs *pflag.FlagSet) int {
			var o hookdispatch.Options
			o.Provider, _ = fs.GetString("provider")
			o.Event, _ = fs.GetString("event")
			o.Home, _ = fs.GetString("home")
			o.Project, _ = fs.GetString("project")
			o.FailClosed, _ = fs.GetBool("fail-closed")
			o.Check, _ = fs.GetBool("check")
			return hookdispatch.Run("dalo "+hookdispatch.Name, o, fs.Args(), e.stdin, e.stdout, e.stderr)
		},
	})
}
