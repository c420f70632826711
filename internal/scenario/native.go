package scenario

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Native hooks: a hook configured by hand in the harness's own hook file,
// with no dalo, as its user would, to show what the harness itself does
// with one. Each is NativeHookScript, which records when it ran and what it
// was given and answers what the scenario makes it answer.

// Markers of the native hooks' scenarios: the model's last answer, a
// text a hook or a command prints, and a hook's stderr or deny reason.
const (
	NativeFinal  = "NAT-FINAL-ANSWER-5c2e"
	NativeText   = "NAT-HOOK-TEXT-9b07"
	NativeStderr = "NAT-HANDLER-STDERR-e3a4"
)

// NativeHookScript is the hand-configured native hook: run as
// `sh native-hook.sh <out dir> <Event>`, it appends the time it started
// (ns since the epoch) to <Event>.time and its stdin, on one line, to
// <Event>.stdin; on the first run of its event it then prints
// <Event>.stdout, writes <Event>.stderr to stderr and exits with the
// status in <Event>.exit, each if the file exists. Later runs print
// nothing, so a hook that resumes the turn does so once.
const NativeHookScript = `o="$1/$2"
date +%s%N >> "$o.time"
in=$(cat); printf '%s' "$in" | tr -d '\n' >> "$o.stdin"; echo >> "$o.stdin"
[ "$(wc -l < "$o.time")" = 1 ] || exit 0
[ -f "$o.stdout" ] && cat "$o.stdout"
[ -f "$o.stderr" ] && cat "$o.stderr" >&2
[ -f "$o.exit" ] && exit "$(cat "$o.exit")"
exit 0
`

// NativeHooks writes the harness's own hook file (HooksFile), replacing
// what it holds, with a NativeHookScript entry for each of events, with
// the timeout (seconds) and, on a tool event, the matcher "*": Claude
// Code's and Codex's shape.
func (w *World) NativeHooks(timeout int, events ...string) error {
	script := filepath.Join(w.Root, "nat-hook.sh")
	if err := w.WriteFile(script, NativeHookScript); err != nil {
		return err
	}
	hooks := map[string]any{}
	for _, e := range events {
		entry := map[string]any{"hooks": []any{map[string]any{
			"type": "command", "command": "sh " + script + " " + w.Out + " " + e, "timeout": timeout}}}
		if e == "PreToolUse" || e == "PostToolUse" {
			entry["matcher"] = "*"
		}
		hooks[e] = []any{entry}
	}
	return w.writeJSON(w.HooksFile(), map[string]any{"hooks": hooks})
}

// NativeAnswer makes the first run of event's native hook print stdout,
// write stderr to stderr and exit with status exit (each only when set).
func (w *World) NativeAnswer(event, stdout, stderr string, exit int) error {
	for _, f := range []struct{ ext, text string }{{".stdout", stdout}, {".stderr", stderr}, {".exit", strconv.Itoa(exit)}} {
		if f.text == "" || f.text == "0" {
			continue
		}
		if err := w.WriteFile(filepath.Join(w.Out, event+f.ext), f.text); err != nil {
			return err
		}
	}
	return nil
}

// NativePayloads returns the native payload of each run of event's native
// hook, and an error naming a line that is not one.
func (w *World) NativePayloads(event string) ([]map[string]any, error) {
	var ps []map[string]any
	text := strings.TrimSpace(w.Output(event + ".stdin"))
	if text == "" {
		return nil, nil
	}
	for _, l := range strings.Split(text, "\n") {
		var p map[string]any
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			return ps, fmt.Errorf("%s hook: stdin %q is not a native payload: %v", event, l, err)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// nativePayloads is NativePayloads, a line that is not a payload a failed
// check.
func (w *World) nativePayloads(c *Check, event string) []map[string]any {
	ps, err := w.NativePayloads(event)
	if err != nil {
		c.Failf("%v", err)
	}
	return ps
}

// fileExists reports whether the file name exists.
func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
