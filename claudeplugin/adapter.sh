#!/bin/sh
# claude-hook.sh: runs one Claude Code hook command of this package and turns
# its native answer into one portable result (Portable Agent Packages, draft
# 0.1) for the effect of the hook that runs it. Written by 'dalo import
# claude-plugin'; it is approved with every tool that runs it.
#
# Usage: claude-hook.sh EVENT EFFECT COMMAND_FILE CWD [TOOL_NAME TOOL_REGEX]
#
# It runs COMMAND_FILE (the hook's command, byte for byte) as Claude Code
# would: with bash (sh where there is no bash), in the session's directory
# CWD, with CLAUDE_PLUGIN_ROOT set to this package's directory and
# CLAUDE_PROJECT_DIR to CWD, the native event JSON on stdin. With
# TOOL_REGEX, only for a tool whose name the extended regular expression
# matches (Claude Code's matcher); otherwise it abstains.
#
# The native answer and the result it becomes:
#   exit 2, stderr          gate: deny with stderr as the reason;
#                           continue_workflow: continue with it;
#                           add_context: it as context (on SessionStart,
#                           Claude Code shows it to the user only: a failure)
#   exit 0, a JSON object   gate: deny for continue false, permissionDecision
#                           deny or ask, decision block, an updatedInput or
#                           a decision it does not know; allow for allow or
#                           approve; continue_workflow: continue for
#                           decision block; add_context: additionalContext
#                           and a block's reason
#   exit 0, other text      add_context on SessionStart and UserPromptSubmit
#   any other exit          a failure: the hook's failure policy applies,
#                           and Claude Code, too, lets the action proceed
# Anything else abstains (observe for an observation). What a gate cannot
# map denies: a blocking hook is never weakened. What the portable result
# cannot carry (systemMessage, context under a gate) is said on stderr.
# Texts are cut to TEXT_LIMIT bytes, the draft's limit for a result's text.

TEXT_LIMIT=@TEXT_LIMIT@

if [ $# -ne 4 ] && [ $# -ne 6 ]; then
	echo "claude-hook.sh: usage: claude-hook.sh EVENT EFFECT COMMAND_FILE CWD [TOOL_NAME TOOL_REGEX]" >&2
	exit 1
fi
event=$1 effect=$2 command=$3 cwd=$4

CLAUDE_PLUGIN_ROOT=$(pwd -P) || exit 1
CLAUDE_PROJECT_DIR=$cwd
# Python must not write bytecode into this directory: dalo runs only the
# exact files approved, and refuses a staged tree that holds any other.
PYTHONDONTWRITEBYTECODE=1
export CLAUDE_PLUGIN_ROOT CLAUDE_PROJECT_DIR PYTHONDONTWRITEBYTECODE

if [ $# -eq 6 ]; then
	printf '%s\n' "$5" | grep -Eq -e "$6"
	case $? in
	0) ;;
	1)
		printf '%s\n' '{"kind":"abstain"}'
		exit 0
		;;
	*) echo "claude-hook.sh: the matcher $6 is no extended regular expression; the hook runs for $5" >&2 ;;
	esac
fi

if [ ! -f "$CLAUDE_PLUGIN_ROOT/$command" ]; then
	echo "claude-hook.sh: no command file $command in $CLAUDE_PLUGIN_ROOT" >&2
	exit 1
fi
cd "$cwd" || {
	echo "claude-hook.sh: cannot enter the session's directory $cwd" >&2
	exit 1
}

# The command's stderr goes to a file unlinked at once: nothing is left
# behind when the dispatcher kills this process group at the timeout.
errfile=$(mktemp) || exit 1
exec 5>"$errfile" 6<"$errfile"
rm -f "$errfile"

shell=sh
if command -v bash >/dev/null 2>&1; then
	shell=bash
fi
out=$("$shell" "$CLAUDE_PLUGIN_ROOT/$command" 2>&5)
hook_status=$?
exec 5>&-

case $hook_status in
0) mode=stdout ;;
2) mode=exit2 ;;
*)
	cat <&6 >&2
	echo "claude-hook.sh: the hook command exited with status $hook_status (Claude Code would let the action proceed)" >&2
	exit 1
	;;
esac

mapper='
@AWK@
'
if [ "$mode" = stdout ]; then
	result=$(printf '%s\n' "$out" | LC_ALL=C awk -v mode="$mode" -v event="$event" -v effect="$effect" -v limit="$TEXT_LIMIT" "$mapper")
else
	result=$(tr -d '\000' <&6 | LC_ALL=C awk -v mode="$mode" -v event="$event" -v effect="$effect" -v limit="$TEXT_LIMIT" "$mapper")
fi
map_status=$?
if [ $map_status -ne 0 ]; then
	printf '%s\n' "$result" >&2
	exit 1
fi
printf '%s\n' "$result"
