package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"dalo/providers"
)

const pluginRemoveDoc = `Plugin remove uninstalls a package from a harness: what it staged, the
skills and agents dalo wrote for it (exactly those files), its place in the
dispatch plan, and the dispatcher entries no installed package needs any
more. Nothing else in the harness configuration changes. Grants stay in the
ledger: revoke removes them.

It lists what it removed and what it kept, and why: a file you changed
since dalo wrote it is kept, and so is a skill directory that still holds
it or files dalo did not write; the files of that directory dalo removed
are listed one by one. No path is listed as both.

Examples:
  dalo plugin remove company:design-review --provider claude
`

func init() {
	register(&command{
		name: "plugin remove", usage: "SOURCE:NAME --provider P",
		short: "uninstall a package from a harness", doc: pluginRemoveDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.String("provider", "", "the harness to remove it from")
		},
		run: runPluginRemove,
	})
}

func runPluginRemove(e *env, fs *pflag.FlagSet) int {
	const cmd = "plugin remove"
	if !packageArg(e, cmd, fs) {
		return exitUsage
	}
	provider, _ := fs.GetString("provider")
	if provider == "" {
		return usageError(e, cmd, "--provider is required")
	}
	ts, err := providers.Load()
	if err != nil {
		return fail(e, cmd, err)
	}
	t, err := ts.Resolve(provider)
	if err != nil {
		return usageError(e, cmd, "%v", err)
	}
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	disp, _, err := dispatcher()
	if err != nil {
		return fail(e, cmd, err)
	}
	res, err := s.Remove(t, fs.Arg(0), disp)
	if err != nil {
		return fail(e, cmd, err)
	}
	fmt.Fprintf(e.stdout, "removed %s from %s\n", fs.Arg(0), t.Name)
	for _, p := range res.Removed {
		fmt.Fprintf(e.stdout, "  removed %s\n", p)
	}
	for _, p := range res.Kept {
		fmt.Fprintf(e.stdout, "  kept %s\n", p)
	}
	if res.Diff != "" {
		fmt.Fprintf(e.stdout, "  updated %s\n", res.Config)
	}
	return exitOK
}
