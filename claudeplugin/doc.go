// Package claudeplugin turns a Claude Code plugin (.claude-plugin/plugin.json,
// skills/, agents/, commands/, hooks/hooks.json) into a portable package of
// an author source, and says what did not map.
//
// Skills and agents become members, copied whole. Each command hook becomes
// a tool and a hook descriptor on the draft row that the newest Claude Code
// provider table gives its native event (PreToolUse to tool_call/before, and
// so on): no list of events here restates the table. The tool runs the
// hook's command through claude-hook.sh, a POSIX sh adapter written into the
// package and approved with it like any tool, which runs the plugin's script
// as Claude Code would and maps its native answer onto a portable result.
// Each tool is given the least authority dalo can read that it needs
// (reach.go): the files its command names and those they name in turn,
// the capabilities and variables their text shows; what text cannot tell
// is a note for the author.
//
// Import grants nothing, and never weakens a blocking hook: on an event
// whose row admits a blocking effect the hook gets it (a gate, a workflow
// continuation), a native exit 2 or deny becomes a deny, and an answer the
// adapter cannot map under a gate denies. Everything that does not map
// (slash commands, MCP servers, prompt and agent hooks, events without a
// row, matchers that are not plain alternations of tool names, timeouts
// beyond the draft's range, references outside the plugin) is listed in
// the Report, never dropped in silence.
package claudeplugin
