package claudeplugin

import (
	"fmt"
	"strings"

	"dalo/scaffold"
	"dalo/tomledit"
)

// writeManifest writes the PLUGIN.toml of an imported package.
func writeManifest(m *strings.Builder, rep *Report, plugin, desc, version string, members []Member, hooks []*hookOut) {
	fmt.Fprintf(m, `#:schema ../../%s
%s
schema_version = 1

[plugin]
name = %s
description = %s
`, scaffold.SchemaFile, scaffold.Comment("Imported by 'dalo import claude-plugin' from the Claude Code plugin "+plugin+". Each hook runs one of the plugin's hook commands (claude-hooks/) through "+AdapterFile+", which runs it as Claude Code would and maps its native answer onto a portable result. What did not map is listed in the import's report."), tomledit.Quote(rep.Package), tomledit.Quote(desc))
	if version != "" {
		fmt.Fprintf(m, "version = %s\n", tomledit.Quote(version))
	}
	for _, mb := range members {
		fmt.Fprintf(m, "\n[[plugin.members]]\nref = %s\nrequirement = %s\n", tomledit.Quote(mb.Ref), tomledit.Quote(mb.Requirement))
	}
	for _, h := range hooks {
		argv := []string{h.Event, h.Effect, h.commandFile, "${input.cwd}"}
		inputs := `[{ name = "cwd", type = "path" }]`
		bindings := `[{ input = "cwd", field = "session.cwd" }]`
		if h.Filter != "" {
			argv = append(argv, "${input.tool_name}", h.Filter)
			inputs = `[{ name = "cwd", type = "path" }, { name = "tool_name", type = "string" }]`
			bindings = `[{ input = "cwd", field = "session.cwd" }, { input = "tool_name", field = "tool.name" }]`
		}
		fmt.Fprintf(m, `
%s[[tool]]
schema_version = 1
id = %s
entry = %s
files = %s
runtime = "executable"
argv = %s
cwd = "tool_root"
availability = "required"
env = %s
capabilities = %s
platforms = ["linux", "macos"]
inputs = %s

[[hook]]
schema_version = 1
id = %s
tool = %s
subject = %s
phase = %s
effect = %s
requirement = %s
timeout_ms = %d
failure_policy = %s
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
`, scaffold.Comment(h.ID+" runs "+h.commandFile+", the command of "+h.From+"."), tomledit.Quote(h.ID), tomledit.Quote(AdapterFile), list(h.files), list(argv), list(names(h.Env)), list(names(h.Capabilities)), inputs,
			tomledit.Quote(h.ID), tomledit.Quote(h.ID), tomledit.Quote(h.Subject), tomledit.Quote(h.Phase), tomledit.Quote(h.Effect), tomledit.Quote(h.Requirement), h.TimeoutMS, tomledit.Quote(h.FailurePolicy))
		if len(h.ToolNames) > 0 {
			fmt.Fprintf(m, "matcher = { tool_names = %s }\n", list(h.ToolNames))
		}
		fmt.Fprintf(m, "bindings = %s\n", bindings)
	}
}

// list writes a TOML array of strings, one per line when it is long.
func list(ss []string) string {
	q := make([]string, len(ss))
	n := 0
	for i, s := range ss {
		q[i] = tomledit.Quote(s)
		n += len(q[i]) + 2
	}
	if n <= 70 {
		return "[" + strings.Join(q, ", ") + "]"
	}
	return "[\n  " + strings.Join(q, ",\n  ") + ",\n]"
}

// names returns the names of claims.
func names(cs []Claim) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}
