#!/usr/bin/env bash
# validate.sh measures 'dalo plugin validate', process start to exit, on
# three synthetic sources and prints a table against the targets:
#
#   1000 packages (2 tools, 3 hooks, 3 members each)   < 1500 ms, < 200 MB
#   one small package                                   <   30 ms
#   one package with a manifest near 1 MiB              < 1000 ms
#
# Usage: bench/validate.sh [RUNS]   (counted runs per case, default 5;
# the small case runs four times as many). DALO=path measures that binary
# instead of building ./cmd/dalo. Needs only Go and bash; when GNU time is
# installed its peak RSS is shown beside the rusage figure.
set -euo pipefail

runs=${1:-5}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -n "${DALO:-}" ]; then
	cp "$DALO" "$work/dalo"
else
	go build -o "$work/dalo" ./cmd/dalo
fi
go build -o "$work/measure" ./bench/measure
go build -o "$work/gensource" ./bench/gensource
"$work/gensource" -packages 1000 -out "$work/s1000"
"$work/gensource" -packages 1 -out "$work/s1"
"$work/gensource" -packages 0 -big 1040000 -out "$work/big"

gnutime=
if [ -x /usr/bin/time ] && /usr/bin/time -v true >/dev/null 2>&1; then
	gnutime=/usr/bin/time
fi

printf '%-26s %9s %9s %9s %9s %9s %9s %5s  %s\n' case median_ms min_ms max_ms cpu_ms rss_MB time-v_MB exit verdict
row() { # name dir runs max_ms max_mb
	local name=$1 dir=$2 n=$3 tms=$4 tmb=$5
	local med min max rss status cpu gt=-
	read -r med min max rss status cpu _ < <("$work/measure" -n "$n" -- "$work/dalo" plugin validate "$dir")
	if [ -n "$gnutime" ]; then
		gt=$("$gnutime" -v "$work/dalo" plugin validate "$dir" 2>&1 >/dev/null |
			awk -F: '/Maximum resident set size/ {printf "%.1f", $2/1024}')
	fi
	local verdict
	verdict=$(awk -v m="$med" -v r="$rss" -v tms="$tms" -v tmb="$tmb" -v s="$status" 'BEGIN {
		v = "ok"
		if (s != 0) v = "INVALID SOURCE"
		else if (m >= tms) v = "MISS time"
		else if (tmb > 0 && r/1024 >= tmb) v = "MISS memory"
		printf "%s (< %d ms%s)", v, tms, (tmb > 0 ? sprintf(", < %d MB", tmb) : "")
	}')
	printf '%-26s %9s %9s %9s %9s %9.1f %9s %5s  %s\n' "$name" "$med" "$min" "$max" "$cpu" "$(awk -v r="$rss" 'BEGIN{print r/1024}')" "$gt" "$status" "$verdict"
}

size=$(wc -c <"$work/big/plugins/big/PLUGIN.toml")
row "1000 packages" "$work/s1000" "$runs" 1500 200
row "1 small package" "$work/s1" $((runs * 4)) 30 0
row "manifest of $((size / 1024)) KiB" "$work/big" "$runs" 1000 0
echo "$(nproc) CPUs; $(go version | cut -d' ' -f3); load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) (other work on the machine skews the figures)."
