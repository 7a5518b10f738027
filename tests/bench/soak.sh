#!/bin/sh
# The recorder's memory over a long recording at a high event rate: does it
# stay flat? Records the stand-in workloads for SECONDS (default 3600):
# page faults from 2 threads (`workload faultloop`) and the CUDA stand-in's
# launches at 20,000 a second (`launch_rate`, the budget sampling them),
# samples the recorder's RSS every 10 s, and
# prints the event rate, the RSS at the start and end of the second half,
# and the least-squares slope of RSS over the second half (KiB per minute;
# the first half lets the recorder's buffers reach their size).
#   sudo sh tests/bench/soak.sh [SECONDS]
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-3600}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "soak: needs root (BPF)" >&2; exit 1; }
for b in build/inferscope-bpf build/tests/workloads/workload build/tests/workloads/launch_rate; do
	[ -x "$b" ] || { echo "soak: $b is missing: make test-build" >&2; exit 1; }
done
build/inferscope-bpf record -o "$dir/soak.isr" -d "$secs" -- sh -c \
	"build/tests/workloads/workload faultloop $secs 256 2 & build/tests/workloads/launch_rate $secs 20000 '$dir/launches' & wait" \
	2>"$dir/err" &
rec=$!
sleep 2
: >"$dir/rss"
t=0
while kill -0 $rec 2>/dev/null; do
	kb=$(awk '/^VmRSS:/ { print $2 }' /proc/$rec/status 2>/dev/null || true)
	[ -n "$kb" ] && echo "$t $kb" >>"$dir/rss"
	sleep 10
	t=$((t + 10))
done
wait $rec || true
events=$(sed -n 's/^inferscope-bpf: \([0-9]*\) events.*/\1/p' "$dir/err" | tail -1)
awk -v secs="$secs" -v events="${events:-0}" '
	{ t[NR] = $1; r[NR] = $2 }
	END {
		h = int(NR / 2) + 1; n = 0
		for (i = h; i <= NR; i++) { n++; sx += t[i]; sy += r[i]; sxx += t[i] * t[i]; sxy += t[i] * r[i] }
		slope = n > 1 ? (n * sxy - sx * sy) / (n * sxx - sx * sx) : 0
		printf "soak: %d s, %d events (%.0f/s); recorder RSS %d KiB at %d s, %d KiB at %d s (peak %d KiB); second-half slope %.1f KiB/min\n",
			secs, events, events / secs, r[h], t[h], r[NR], t[NR], max(r), slope * 60
	}
	function max(a,   i, m) { for (i in a) if (a[i] > m) m = a[i]; return m }' "$dir/rss"
tail -3 "$dir/err"
