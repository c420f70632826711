package scenario

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The matrix kits: a package per harness table whose hooks are rows of
// MatrixHook, one per claim to try, each recording what it was given.

// MatrixStderr is what a matrix handler that crashes writes to stderr.
const MatrixStderr = "CM-HANDLER-STDERR-0d93"

// A MatrixHook is one hook of a matrix kit, with a tool of the same id.
// Fields are the event fields it binds, each to an input named after the
// field (dots as underscores), passed as its argv in that order; Result is
// what the handler prints after recording its argv and stdin, or, when
// Exit is set, the handler writes MatrixStderr to stderr and exits with
// that status.
type MatrixHook struct {
	ID, Subject, Phase, Effect, Policy, Visibility, Tools string
	Fields                                                []string
	Result                                                string
	Exit                                                  int
	// When, a shell case pattern, limits the result (or the crash) to a
	// payload it matches; on any other the handler abstains.
	When string
}

// matrixFieldTypes is the type of each portable field that is not a string
// (draft 0.1, Hooks).
var matrixFieldTypes = map[string]string{
	"session.cwd": "path", "transcript.path": "path", "workflow.already_continued": "boolean",
}

// MatrixFiles returns the author source of package name, described so,
// holding hooks. Each handler appends its argv, each value NUL-terminated,
// then "--", to $LIVE_OUT/<id>.argv, and its stdin on one line to
// $LIVE_OUT/<id>.stdin (MatrixRuns, MatrixPayloads).
func MatrixFiles(name, description string, hooks []MatrixHook) map[string]string {
	k := Kit{Name: name, Description: description}
	for _, h := range hooks {
		var inputs []string
		for _, f := range h.Fields {
			typ := matrixFieldTypes[f]
			if typ == "" {
				typ = "string"
			}
			inputs = append(inputs, strings.ReplaceAll(f, ".", "_")+"="+typ+"="+f)
		}
		act := "echo '" + h.Result + "'"
		if h.Exit != 0 {
			act = fmt.Sprintf("echo '%s' >&2; exit %d", MatrixStderr, h.Exit)
		}
		if h.When != "" {
			act = "case \"$in\" in\n" + h.When + ") " + act + " ;;\n*) echo '{\"kind\":\"abstain\"}' ;;\nesac"
		}
		k.Hooks = append(k.Hooks, KitHook{ID: h.ID, Subject: h.Subject, Phase: h.Phase, Effect: h.Effect,
			Policy: h.Policy, Visibility: h.Visibility, Tools: ToolList(h.Tools), Inputs: inputs, Env: []string{"PATH", "LIVE_OUT"},
			Handler: "#!/bin/sh\nin=$(cat)\n" +
				"printf '%s\\000' \"$@\" -- >> \"$LIVE_OUT/" + h.ID + ".argv\"\n" +
				"printf '%s' \"$in\" | tr -d '\\n' >> \"$LIVE_OUT/" + h.ID + ".stdin\"\n" +
				"echo >> \"$LIVE_OUT/" + h.ID + ".stdin\"\n" + act + "\n"})
	}
	return k.Files()
}

// MatrixRuns returns the argv of each run of matrix hook id, in order,
// without empty values. Values are NUL-terminated: a prompt may hold
// newlines.
func (w *World) MatrixRuns(id string) [][]string {
	var runs [][]string
	var cur []string
	for _, v := range strings.Split(w.Output(id+".argv"), "\x00") {
		if v == "--" {
			runs = append(runs, cur)
			cur = nil
			continue
		}
		if v != "" {
			cur = append(cur, v)
		}
	}
	return runs
}

// MatrixPayloads returns the native payload of each run of matrix hook id,
// in order, and the lines that are none.
func (w *World) MatrixPayloads(id string) (ps []map[string]any, bad []string) {
	for _, line := range strings.Split(strings.TrimSpace(w.Output(id+".stdin")), "\n") {
		var p map[string]any
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			bad = append(bad, fmt.Sprintf("%q: %v", line, err))
			continue
		}
		ps = append(ps, p)
	}
	return ps, bad
}
