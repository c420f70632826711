package scenario

// The author source every live test installs: one package whose hooks
// cover each effect the tables promise. Handlers are shell scripts (runtime
// executable), so they need nothing beyond /bin/sh. A handler that must act
// only on one of the scripted commands reads the native payload on stdin and
// matches the command in it; otherwise it abstains, so that the hooks of
// one event do not disturb each other's checks.
//
// Handlers write what they saw into $LIVE_OUT, an environment variable the
// tools declare: dispatch passes a declared variable with the value it has
// itself, which is the harness's, which is the test's.
const (
	PkgName = "live-kit"
	SrcID   = "live"

	MarkPromptContext  = "LIVE-PROMPT-CONTEXT-7f3a"
	MarkFailureContext = "LIVE-FAILURE-CONTEXT-91c2"
	MarkDenyReason     = "LIVE-DENY-REASON-c4e1"
	MarkContinue       = "LIVE-CONTINUE-REASON-5d0b"
	MarkReplaced       = "LIVE-REPLACED-OUTPUT-a8e6"
	MarkClosedStderr   = "LIVE-CLOSED-STDERR-2b9d"
	MarkOpenStderr     = "LIVE-OPEN-STDERR-e07c"
	MarkPromptDeny     = "LIVE-PROMPT-DENY-0f4d"
	MarkPromptStderr   = "LIVE-PROMPT-STDERR-66a1"
	MarkStopStderr     = "LIVE-STOP-STDERR-3c88"
	MarkEndStderr      = "LIVE-END-STDERR-b71e"
	MarkSkill          = "LIVE-SKILL-DESC-4a21"
	MarkAgent          = "LIVE-AGENT-DESC-d93f"
	MarkInstruction    = "LIVE-INSTRUCTION-8e5c"
)

// SourceFiles maps a path in the author source to its content; a path
// ending in .sh is made executable.
var SourceFiles = map[string]string{
	"plugins/live-kit/PLUGIN.toml": `schema_version = 1

[plugin]
name = "live-kit"
description = "Hooks for every effect, run by the real harnesses."
id = "dalo.live-kit"

[[plugin.members]]
ref = "skill:live-skill"
requirement = "required"

[[plugin.members]]
ref = "agent:live-agent"
requirement = "required"
fallback = { kind = "inline", skill = "skill:live-skill" }

[[plugin.members]]
ref = "instruction:live-context"
requirement = "recommended"

# session/start observe: receives the session's cwd and id as bound inputs.
[[tool]]
schema_version = 1
id = "start"
entry = "start.sh"
runtime = "executable"
argv = ["${input.cwd}", "${input.session}"]
cwd = "tool_root"
availability = "required"
env = ["PATH", "LIVE_OUT"]
capabilities = ["filesystem_write"]

[[tool.inputs]]
name = "cwd"
type = "path"

[[tool.inputs]]
name = "session"
type = "string"

[[hook]]
schema_version = 1
id = "start"
tool = "start"
subject = "session"
phase = "start"
effect = "observe"
requirement = "required"
timeout_ms = 5000
failure_policy = "report"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
bindings = [{ input = "cwd", field = "session.cwd" }, { input = "session", field = "session.id" }]

# prompt/before add_context.
[[tool]]
schema_version = 1
id = "prompt-context"
entry = "prompt-context.sh"
runtime = "executable"
argv = []
cwd = "tool_root"
availability = "required"

[[hook]]
schema_version = 1
id = "prompt-context"
tool = "prompt-context"
subject = "prompt"
phase = "before"
effect = "add_context"
requirement = "required"
timeout_ms = 5000
failure_policy = "report"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"

# prompt/before gate, fail_closed: denies a prompt holding
# "forbidden-prompt", crashes on one holding "crash-prompt".
[[tool]]
schema_version = 1
id = "prompt-gate"
entry = "prompt-gate.sh"
runtime = "executable"
argv = []
cwd = "tool_root"
availability = "required"
env = ["PATH"]

[[hook]]
schema_version = 1
id = "prompt-gate"
tool = "prompt-gate"
subject = "prompt"
phase = "before"
effect = "gate"
requirement = "required"
timeout_ms = 5000
failure_policy = "fail_closed"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"

# tool_call/before gate, fail_closed: denies "touch denied", crashes on
# "crash-closed", abstains otherwise.
[[tool]]
schema_version = 1
id = "guard"
entry = "guard.sh"
runtime = "executable"
argv = []
cwd = "tool_root"
availability = "required"
env = ["PATH"]

[[hook]]
schema_version = 1
id = "guard"
tool = "guard"
subject = "tool_call"
phase = "before"
effect = "gate"
requirement = "required"
timeout_ms = 5000
failure_policy = "fail_closed"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
matcher = { tool_names = ["Bash"] }

# tool_call/before gate, fail_open: crashes on "crash-open".
[[tool]]
schema_version = 1
id = "lenient"
entry = "lenient.sh"
runtime = "executable"
argv = []
cwd = "tool_root"
availability = "required"
env = ["PATH"]

[[hook]]
schema_version = 1
id = "lenient"
tool = "lenient"
subject = "tool_call"
phase = "before"
effect = "gate"
requirement = "required"
timeout_ms = 5000
failure_policy = "fail_open"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
matcher = { tool_names = ["Bash"] }

# tool_call/before rewrite_input: "touch original" becomes "touch rewritten".
[[tool]]
schema_version = 1
id = "rewrite"
entry = "rewrite.sh"
runtime = "executable"
argv = []
cwd = "tool_root"
availability = "required"
env = ["PATH"]

[[hook]]
schema_version = 1
id = "rewrite"
tool = "rewrite"
subject = "tool_call"
phase = "before"
effect = "rewrite_input"
requirement = "required"
timeout_ms = 5000
failure_policy = "report"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
matcher = { tool_names = ["Bash"] }

# tool_call/after replace_output: replaces the output "orig42out". Codex
# cannot: optional, omitted there.
[[tool]]
schema_version = 1
id = "replace"
entry = "replace.sh"
runtime = "executable"
argv = []
cwd = "tool_root"
availability = "optional"
env = ["PATH"]

[[hook]]
schema_version = 1
id = "replace"
tool = "replace"
subject = "tool_call"
phase = "after"
effect = "replace_output"
requirement = "optional"
fallback = "omit"
timeout_ms = 5000
failure_policy = "report"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
matcher = { tool_names = ["Bash"] }

# tool_call/failure add_context. Codex has no failure event: omitted there.
[[tool]]
schema_version = 1
id = "failure-context"
entry = "failure-context.sh"
runtime = "executable"
argv = []
cwd = "tool_root"
availability = "optional"

[[hook]]
schema_version = 1
id = "failure-context"
tool = "failure-context"
subject = "tool_call"
phase = "failure"
effect = "add_context"
requirement = "optional"
fallback = "omit"
timeout_ms = 5000
failure_policy = "report"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"

# workflow/stop continue_workflow: continues once, then abstains when the
# bound workflow.already_continued is true.
[[tool]]
schema_version = 1
id = "stop"
entry = "stop.sh"
runtime = "executable"
argv = ["${input.again}"]
cwd = "tool_root"
availability = "required"
env = ["PATH", "LIVE_OUT"]
capabilities = ["filesystem_write"]

[[tool.inputs]]
name = "again"
type = "boolean"

[[hook]]
schema_version = 1
id = "stop"
tool = "stop"
subject = "workflow"
phase = "stop"
effect = "continue_workflow"
requirement = "required"
timeout_ms = 5000
failure_policy = "report"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
bindings = [{ input = "again", field = "workflow.already_continued" }]

# workflow/stop continue_workflow, fail_closed: crashes when the project
# holds a file crash-stop (the project dir is the bound session.cwd).
[[tool]]
schema_version = 1
id = "strict-stop"
entry = "strict-stop.sh"
runtime = "executable"
argv = ["${input.cwd}"]
cwd = "tool_root"
availability = "required"
env = ["PATH"]

[[tool.inputs]]
name = "cwd"
type = "path"

[[hook]]
schema_version = 1
id = "strict-stop"
tool = "strict-stop"
subject = "workflow"
phase = "stop"
effect = "continue_workflow"
requirement = "required"
timeout_ms = 5000
failure_policy = "fail_closed"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
bindings = [{ input = "cwd", field = "session.cwd" }]

# session/end observe, report: crashes when the project holds crash-end.
[[tool]]
schema_version = 1
id = "end-report"
entry = "end-report.sh"
runtime = "executable"
argv = ["${input.cwd}"]
cwd = "tool_root"
availability = "required"
env = ["PATH"]

[[tool.inputs]]
name = "cwd"
type = "path"

[[hook]]
schema_version = 1
id = "end-report"
tool = "end-report"
subject = "session"
phase = "end"
effect = "observe"
requirement = "required"
timeout_ms = 2000
failure_policy = "report"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
bindings = [{ input = "cwd", field = "session.cwd" }]

# session/end observe: receives the end reason.
[[tool]]
schema_version = 1
id = "end"
entry = "end.sh"
runtime = "executable"
argv = ["${input.reason}"]
cwd = "tool_root"
availability = "required"
env = ["PATH", "LIVE_OUT"]
capabilities = ["filesystem_write"]

[[tool.inputs]]
name = "reason"
type = "string"

[[hook]]
schema_version = 1
id = "end"
tool = "end"
subject = "session"
phase = "end"
effect = "observe"
requirement = "required"
timeout_ms = 10000
failure_policy = "report"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
bindings = [{ input = "reason", field = "session.end_reason" }]
`,
	"plugins/live-kit/start.sh": `#!/bin/sh
printf '%s\n' "$@" > "$LIVE_OUT/start.argv"
cat > "$LIVE_OUT/start.stdin"
echo '{"kind":"observe"}'
`,
	"plugins/live-kit/prompt-context.sh": `#!/bin/sh
echo '{"kind":"add_context","context":"` + MarkPromptContext + `"}'
`,
	"plugins/live-kit/prompt-gate.sh": `#!/bin/sh
in=$(cat)
case "$in" in
*forbidden-prompt*) echo '{"kind":"deny","reason":"` + MarkPromptDeny + `"}' ;;
*crash-prompt*) echo '` + MarkPromptStderr + `' >&2; exit 3 ;;
*) echo '{"kind":"abstain"}' ;;
esac
`,
	"plugins/live-kit/guard.sh": `#!/bin/sh
in=$(cat)
case "$in" in
*"touch denied"*) echo '{"kind":"deny","reason":"` + MarkDenyReason + `"}' ;;
*crash-closed*) echo '` + MarkClosedStderr + `' >&2; exit 3 ;;
*) echo '{"kind":"abstain"}' ;;
esac
`,
	"plugins/live-kit/lenient.sh": `#!/bin/sh
in=$(cat)
case "$in" in
*crash-open*) echo '` + MarkOpenStderr + `' >&2; exit 3 ;;
*) echo '{"kind":"abstain"}' ;;
esac
`,
	"plugins/live-kit/rewrite.sh": `#!/bin/sh
in=$(cat)
case "$in" in
*"touch original"*) echo '{"kind":"rewrite_input","input":{"command":"touch rewritten"}}' ;;
*) echo '{"kind":"abstain"}' ;;
esac
`,
	"plugins/live-kit/replace.sh": `#!/bin/sh
in=$(cat)
case "$in" in
*orig42out*) echo '{"kind":"replace_output","output":{"stdout":"` + MarkReplaced + `","stderr":"","interrupted":false,"isImage":false}}' ;;
*) echo '{"kind":"abstain"}' ;;
esac
`,
	"plugins/live-kit/failure-context.sh": `#!/bin/sh
echo '{"kind":"add_context","context":"` + MarkFailureContext + `"}'
`,
	"plugins/live-kit/stop.sh": `#!/bin/sh
echo "$1" >> "$LIVE_OUT/stop.argv"
if [ "$1" = true ]; then
  echo '{"kind":"abstain"}'
else
  echo '{"kind":"continue_workflow","reason":"` + MarkContinue + `"}'
fi
`,
	"plugins/live-kit/strict-stop.sh": `#!/bin/sh
cat > /dev/null
if [ -e "$1/crash-stop" ]; then echo '` + MarkStopStderr + `' >&2; exit 3; fi
echo '{"kind":"abstain"}'
`,
	"plugins/live-kit/end-report.sh": `#!/bin/sh
cat > /dev/null
if [ -e "$1/crash-end" ]; then echo '` + MarkEndStderr + `' >&2; exit 3; fi
echo '{"kind":"observe"}'
`,
	"skills/live-skill/SKILL.md": `---
name: live-skill
description: ` + MarkSkill + ` a skill dalo installed.
---
Use it when asked.
`,
	"agents/live-agent.md": `---
name: live-agent
description: ` + MarkAgent + ` a subagent dalo installed.
---
You are a test agent.
`,
	"instructions/live-context.md": `# Live context

` + MarkInstruction + ` is a standing instruction dalo enabled.
`,
	"plugins/live-kit/end.sh": `#!/bin/sh
printf '%s\n' "$@" > "$LIVE_OUT/end.argv"
echo '{"kind":"observe"}'
`,
}
