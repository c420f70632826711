#!/bin/sh
# Measures dispatch against running the same handler directly, side by
# side, with 10, 100 and 1000 installed packages (5 hooks each; a Bash
# PreToolUse runs exactly one of them): `dalo-hook dispatch`, which the
# harness entries call, and the same command in the dalo binary, `dalo hook
# dispatch`, which links CUE. Run from the repository root:
#
#	sh bench/dispatch.sh [RUNS [BASELINE]]
#
# Prints, per store size, the median and 90th percentile wall time and the
# largest RSS of RUNS runs (default 200) of each, and how many plan bytes
# one dispatch reads. Last, against the floor, with 100 packages: the
# command install writes into the harness entry, run through /bin/sh -c
# as harnesses run hooks, for a Bash PreToolUse that runs one handler, for
# the same call whose command writes a 1 MiB file through a heredoc (the
# floor then reads that payload), and for a Read that runs none, each as a
# multiple of the CPU time (median), and beside it of the wall time, of
# the same /bin/sh -c starting a Go program that only reads its stdin
# (bench/stdinfloor), plus, for the Bash calls, the handler run directly;
# all are measured in turns, in ten rounds. BASELINE, if given, is
# another checkout of dalo (for example `git worktree add /tmp/old HEAD`
# made before a change): its dalo is built and measured in the same run,
# on a store its own dispatchgen wrote, and its dalo-hook against the
# floor, in turns with the rest, so that before and after are read side
# by side.
set -eu
runs=${1:-200}
base=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/" ./cmd/dalo ./cmd/dalo-hook
go build -o "$tmp/dispatchgen" ./bench/dispatchgen
go build -o "$tmp/measure" ./bench/measure
go build -o "$tmp/stdinfloor" ./bench/stdinfloor
if [ -n "$base" ]; then
	(cd "$base" && go build -o "$tmp/dalo-base" ./cmd/dalo && go build -o "$tmp/dalo-hook-base" ./cmd/dalo-hook &&
		go build -o "$tmp/dispatchgen-base" ./bench/dispatchgen)
fi
# The recorded PreToolUse of the newest Claude Code version with recordings.
payload=$(ls -d providers/testdata/recordings/claude/*/ | sort -V | tail -n 1)PreToolUse.json

# planBytes prints what one Bash PreToolUse dispatch reads of the plan of
# home: the index files of the event and of its tool in the generation the
# pointer names (current.<plan schema>, or current before schema 6), or
# else the whole plan of the provider (a store of plan schema 1).
planBytes() {
	ptr=$(ls -d "$1"/plans/claude.d/current* 2>/dev/null | sort -V | tail -n 1)
	if [ -n "$ptr" ] && [ -L "$ptr" ]; then
		gen="$1/plans/claude.d/$(readlink "$ptr")"
		cat "$gen/PreToolUse.json" "$gen/PreToolUse/Bash.json" 2>/dev/null | wc -c
	else
		wc -c <"$1/plans/claude.json"
	fi
}

# check makes sure the plan answers as the handler does (no native allow
# on Claude) before it is measured.
check() {
	out=$(DALO_HOME="$2" "$1" hook dispatch --provider claude --event PreToolUse <"$payload")
	[ -z "$out" ] || { echo "unexpected dispatch output: $out" >&2; exit 1; }
}

# timed LABEL [PREFIX...] -- COMMAND...: runs COMMAND (with the payload on
# stdin) as bench/measure does, itself run by PREFIX (env -i, for a
# handler's empty environment), and prints LABEL, the median and 90th
# percentile wall time and the largest RSS.
timed() {
	label=$1
	shift
	pre=""
	while [ "$1" != -- ]; do
		pre="$pre $1"
		shift
	done
	shift
	# shellcheck disable=SC2086 # PREFIX is words
	read -r med _ _ rss status _ p90 _ <<EOF
$($pre "$tmp/measure" -n "$runs" -stdin "$payload_abs" -- "$@")
EOF
	[ "$status" = 0 ] || { echo "$label: exit status $status" >&2; exit 1; }
	printf '%-17smedian %s ms  p90 %s ms  max RSS %s MB\n' "$label:" "$med" "$p90" "$(awk "BEGIN {printf \"%.1f\", $rss / 1024}")"
}
payload_abs=$(cd "$(dirname "$payload")" && pwd)/$(basename "$payload")

for n in 10 100 1000; do
	home="$tmp/home-$n"
	entry=$("$tmp/dispatchgen" -home "$home" -packages "$n" -payload "$payload")
	check "$tmp/dalo" "$home"
	out=$(DALO_HOME="$home" "$tmp/dalo-hook" dispatch --provider claude --event PreToolUse <"$payload")
	[ -z "$out" ] || { echo "unexpected dalo-hook output: $out" >&2; exit 1; }
	echo "== $n packages, $((n * 5)) hooks"
	(cd "$(dirname "$entry")" && timed 'direct handler' env -i -- "$entry")
	if [ -n "$base" ]; then
		bhome="$tmp/base-home-$n"
		# An older dispatchgen took a gen subcommand.
		"$tmp/dispatchgen-base" -home "$bhome" -packages "$n" -payload "$payload" >/dev/null 2>&1 ||
			"$tmp/dispatchgen-base" gen -home "$bhome" -packages "$n" -payload "$payload" >/dev/null
		check "$tmp/dalo-base" "$bhome"
		DALO_HOME="$bhome" timed 'baseline dalo' -- "$tmp/dalo-base" hook dispatch --provider claude --event PreToolUse
		echo "                 reads $(planBytes "$bhome") plan bytes"
	fi
	DALO_HOME="$home" timed 'dalo-hook' -- "$tmp/dalo-hook" dispatch --provider claude --event PreToolUse
	DALO_HOME="$home" timed 'dalo hook' -- "$tmp/dalo" hook dispatch --provider claude --event PreToolUse
	echo "                 reads $(planBytes "$home") plan bytes"
done

# cpu [-stdin FILE] COMMAND...: the median CPU time (user plus system, of
# the command and what it waited for) and the median wall time of RUNS
# runs with the payload (or FILE) on stdin, as "CPU WALL".
cpu() {
	in=$payload_abs
	if [ "$1" = -stdin ]; then
		in=$2
		shift 2
	fi
	"$tmp/measure" -n "$runs" -stdin "$in" -- "$@" | cut -d' ' -f6,1 | awk '{ print $2, $1 }'
}
home="$tmp/home-100"
entry="'$tmp/dalo-hook' dispatch --home '$home' --provider claude --event PreToolUse"
handler=$(cd "$(dirname "$0")/.." && "$tmp/dispatchgen" -home "$tmp/floor-home" -packages 1 -payload "$payload" -large 1048576)
large_payload="$tmp/floor-home/large.json"
echo "== against the floor (100 packages; CPU and wall time, medians of 10 rounds of $(((runs + 9) / 10)) runs, in turns)"
read_payload="$tmp/read.json"
sed 's/"tool_name": *"Bash"/"tool_name":"Read"/' "$payload_abs" >"$read_payload"
# All are measured in turns, in rounds of a tenth of the runs each,
# so that a change in the machine's load falls on all of them alike (one
# after the other, a floor measured in a burst of load made the entry look
# cheaper than the floor); each figure is the median of its rounds'.
all=$runs
runs=$(((all + 9) / 10))
for _ in 1 2 3 4 5 6 7 8 9 10; do
	cpu /bin/sh -c "'$tmp/stdinfloor'" >>"$tmp/floor_sh"
	(cd "$(dirname "$handler")" && cpu env -i "$handler") >>"$tmp/floor_handler"
	cpu /bin/sh -c "$entry" >>"$tmp/bash_entry"
	cpu -stdin "$read_payload" /bin/sh -c "$entry" >>"$tmp/read_entry"
	cpu -stdin "$large_payload" /bin/sh -c "'$tmp/stdinfloor'" >>"$tmp/floor_large"
	cpu -stdin "$large_payload" /bin/sh -c "$entry" >>"$tmp/large_entry"
	if [ -n "$base" ]; then
		cpu /bin/sh -c "'$tmp/dalo-hook-base' dispatch --home '$tmp/base-home-100' --provider claude --event PreToolUse" >>"$tmp/base_entry"
	fi
done
runs=$all
# medians FILE: the median of each column of FILE's rounds.
medians() {
	for col in 1 2; do
		cut -d' ' -f$col "$1" | sort -n | awk '{ v[NR] = $1 } END { printf "%s ", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
	done
}
floor_sh=$(medians "$tmp/floor_sh")
floor_handler=$(medians "$tmp/floor_handler")
bash_entry=$(medians "$tmp/bash_entry")
read_entry=$(medians "$tmp/read_entry")
echo "$bash_entry $floor_sh $floor_handler" | awk '{
	r = $1 / ($3 + $5)
	printf "Bash call, one handler:  CPU %.2f ms against %.2f + %.2f ms: %.2fx (goal <= 1.25x: %s); wall %.2f ms against %.2f + %.2f ms: %.2fx\n", $1, $3, $5, r, (r <= 1.25 ? "ok" : "MISS"), $2, $4, $6, $2 / ($4 + $6) }'
echo "$read_entry $floor_sh" | awk '{
	printf "Read call, no handler:   CPU %.2f ms against %.2f ms: %.2fx; wall %.2f ms against %.2f ms: %.2fx\n", $1, $3, $1 / $3, $2, $4, $2 / $4 }'
echo "$(medians "$tmp/large_entry") $(medians "$tmp/floor_large") $floor_handler" | awk '{
	printf "Bash call, 1 MiB heredoc: CPU %.2f ms against %.2f + %.2f ms: %.2fx; wall %.2f ms against %.2f + %.2f ms: %.2fx\n", $1, $3, $5, $1 / ($3 + $5), $2, $4, $6, $2 / ($4 + $6) }'
if [ -n "$base" ]; then
	echo "$(medians "$tmp/base_entry") $floor_sh $floor_handler" | awk '{
	printf "baseline dalo-hook, Bash call: CPU %.2f ms: %.2fx; wall %.2f ms: %.2fx\n", $1, $1 / ($3 + $5), $2, $2 / ($4 + $6) }'
fi
echo "load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
