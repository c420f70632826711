#!/bin/sh
# Measures `dalo hook dispatch` against running the same handler directly,
# side by side, with 10, 100 and 1000 installed packages (5 hooks each; a
# Bash PreToolUse runs exactly one of them). Run from the repository root:
#
#	sh bench/dispatch.sh [RUNS]
#
# Prints, per store size, the median and 90th percentile wall time and the
# largest RSS of RUNS runs (default 200) of each, and the plan's size.
set -eu
runs=${1:-200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dalo" ./cmd/dalo
go build -o "$tmp/dispatchgen" ./bench/dispatchgen
payload=providers/testdata/recordings/claude/2.1.233/PreToolUse.json
for n in 10 100 1000; do
	home="$tmp/home-$n"
	entry=$("$tmp/dispatchgen" gen -home "$home" -packages "$n" -payload "$payload")
	# The plan must answer as the handler does (no native allow on Claude).
	out=$(DALO_HOME="$home" "$tmp/dalo" hook dispatch --provider claude --event PreToolUse <"$payload")
	[ -z "$out" ] || { echo "unexpected dispatch output: $out" >&2; exit 1; }
	echo "== $n packages, $((n * 5)) hooks, plan $(wc -c <"$home/plans/claude.json") bytes"
	printf 'direct handler:  '
	(cd "$(dirname "$entry")" && env -i "$tmp/dispatchgen" measure -n "$runs" -stdin "$OLDPWD/$payload" -- "$entry")
	printf 'dalo dispatch:   '
	DALO_HOME="$home" "$tmp/dispatchgen" measure -n "$runs" -stdin "$payload" -- "$tmp/dalo" hook dispatch --provider claude --event PreToolUse
done
