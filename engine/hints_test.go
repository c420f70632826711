package engine

import (
	"strings"
	"testing"
)

// A misspelt field is one finding that names the field it resembles, and
// a misspelt value of a set the value; an unknown key near nothing, or
// near a field the table already holds, lists what the table takes.
func TestMisspeltField(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     string
	}{
		{"required field", edit("timeout_ms = 5000", "timout_ms = 5000"),
			"plugins/design-review/PLUGIN.toml:47:1: error E020 hook[0].timout_ms: unknown field timout_ms; did you mean timeout_ms?"},
		{"two letters swapped", edit("timeout_ms = 5000", "tiemout_ms = 5000"),
			"plugins/design-review/PLUGIN.toml:47:1: error E020 hook[0].tiemout_ms: unknown field tiemout_ms; did you mean timeout_ms?"},
		{"optional field", edit(`bindings =`, "matchr = { tool_names = [] }\nbindings ="),
			"plugins/design-review/PLUGIN.toml:52:1: error E020 hook[0].matchr: unknown field matchr; did you mean matcher?"},
		{"near a field already held", edit("timeout_ms = 5000", "timeout_ms = 5000\ntimout_ms = 5000"),
			"plugins/design-review/PLUGIN.toml:48:1: error E020 hook[0].timout_ms: unknown field timout_ms; hook[0] takes bindings, blocking_scope, effect, error_visibility, failure_policy, fallback, id, matcher, phase, requirement, retry, schema_version, subject, timeout_ms, tool"},
		{"a value of a set", edit(`effect = "add_context"`, `effect = "add_contxt"`),
			"plugins/design-review/PLUGIN.toml:44:10: error E023 hook[0].effect: invalid effect \"add_contxt\": expected one of observe, add_context, gate, rewrite_input, replace_output, continue_workflow; did you mean add_context?"},
		{"near nothing", edit("timeout_ms = 5000", "deadline = 5000"),
			"plugins/design-review/PLUGIN.toml:38:3: error E021 hook[0].timeout_ms: missing required field timeout_ms in hook[0]\n" +
				"plugins/design-review/PLUGIN.toml:47:1: error E020 hook[0].deadline: unknown field deadline; hook[0] takes bindings, blocking_scope, effect, error_visibility, failure_policy, fallback, id, matcher, phase, requirement, retry, schema_version, subject, timeout_ms, tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeArchive(t, root, baseSource)
			writeFile(t, root, "plugins/design-review/PLUGIN.toml", tt.manifest)
			rep, err := Validate(root, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(strings.ReplaceAll(diagLines(rep), "\t", "")); got != tt.want {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// The quoting hint of E078 writes the line as it should be, and only for a
// plain value that holds ": ".
func TestQuoteHint(t *testing.T) {
	tests := []struct {
		line, want string
	}{
		{"description: Use when: asked", `; a value holding ": " must be quoted: description: 'Use when: asked'`},
		{"description: It's for: reviews", `; a value holding ": " must be quoted: description: 'It''s for: reviews'`},
		{"description: Use when: asked # a comment", `; a value holding ": " must be quoted: description: 'Use when: asked'`},
		{"  author: Me: myself", `; a value holding ": " must be quoted: author: 'Me: myself'`},
		{"description: Ends with a colon:", `; a value holding ": " must be quoted: description: 'Ends with a colon:'`},
		{"  bad: y", ""},                 // an indented mapping, not a value to quote
		{`description: "a: b" c: d`, ""}, // quoted already: another mistake
		{"description: [a: b]", ""},
		{"no mapping here", ""},
	}
	for _, tt := range tests {
		src := "name: x\n" + tt.line + "\n"
		if got := quoteHint(src, 1); got != tt.want {
			t.Errorf("quoteHint(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
	if got := quoteHint("a: b\n", 5); got != "" {
		t.Errorf("a line past the end: %q", got)
	}
	// A value wrapped over lines, the ": " on a line after its key's:
	// the hint writes the whole value, folded as YAML reads it.
	for _, tt := range []struct {
		src  string
		line int
		want string
	}{
		{"name: x\ndescription: Use when\n  the user says: review this\n  and more\nlicense: MIT\n", 2, `; a value holding ": " must be quoted: description: 'Use when the user says: review this and more'`},
		{"name: x\ndescription: It's for\n    people\n  who say: review\n", 3, `; a value holding ": " must be quoted: description: 'It''s for people who say: review'`},
		{"metadata:\n  note: a long\n    the text: here\n", 2, `; a value holding ": " must be quoted: note: 'a long the text: here'`},
		{"metadata:\n  author: Me: myself\n", 1, `; a value holding ": " must be quoted: author: 'Me: myself'`},
		{"description: \"quoted\n  then: x\"\n", 1, ""},
		{"description: a # comment\n  then: x\n", 1, ""},
		{"description: a\n\n  then: x\n", 2, ""},
	} {
		if got := quoteHint(tt.src, tt.line); got != tt.want {
			t.Errorf("quoteHint(%q, %d) = %q, want %q", tt.src, tt.line, got, tt.want)
		}
	}
}

// TestClosedHint: a value that starts with a flow collection or a quoted
// scalar and goes on after it closes, as Claude Code's docs write a
// command's argument-hint, is "did not find expected key" to YAML; the
// hint names why and gives the line with its value quoted whole.
func TestClosedHint(t *testing.T) {
	for _, tt := range []struct {
		line, want string
	}{
		{"argument-hint: [pr-number] [priority] [assignee]", `; a value that goes on after its closing ] must be quoted whole: argument-hint: '[pr-number] [priority] [assignee]'`},
		{"argument-hint: [a] b # a comment", `; a value that goes on after its closing ] must be quoted whole: argument-hint: '[a] b'`},
		{"tools: [Read, \"Grep]\"] Glob", `; a value that goes on after its closing ] must be quoted whole: tools: '[Read, "Grep]"] Glob'`},
		{"hint: {a: [b]} c", `; a value that goes on after its closing } must be quoted whole: hint: '{a: [b]} c'`},
		{`description: "Review" the PR`, `; a value that goes on after its closing " must be quoted whole: description: '"Review" the PR'`},
		{`description: "say \"hi\"" now`, `; a value that goes on after its closing " must be quoted whole: description: '"say \"hi\"" now'`},
		{"description: 'it''s' here", `; a value that goes on after its closing ' must be quoted whole: description: '''it''''s'' here'`},
		{"  hint: [a] [b]", `; a value that goes on after its closing ] must be quoted whole: hint: '[a] [b]'`},
		{"argument-hint: [a] # only a comment", ""},
		{"argument-hint: [a", ""},
		{"argument-hint: a [b] c", ""},
		{"[a]: [b] c", ""},
		{"no mapping here", ""},
	} {
		src := "name: x\n" + tt.line + "\n"
		if got := closedHint(src, 1); got != tt.want {
			t.Errorf("closedHint(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
	if got := closedHint("a: [b] c\n", 5); got != "" {
		t.Errorf("a line past the end: %q", got)
	}
}
