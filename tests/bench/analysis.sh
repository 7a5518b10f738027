#!/bin/sh
# The analysis's throughput and peak memory (`make bench-analysis`).
#
#   sh tests/bench/analysis.sh [-n EVENTS] [-r RUNS] [-f FILES] [BINARY...]
#
# Writes synthetic recordings with build/tests/tools/synth_rec (a training
# process of EVENTS events, 20 million by default; the two files of issue
# 19 made to exhaust memory: 40 EVENTS chunks of 64 MiB each, one process
# listing 200,000 threads; the training process launching 500,000 distinct
# kernels, each with a long name, whose memory the analysis bounds by
# counting those past its 16384th as "(other kernels)"), runs `BINARY analyze --format json` on each
# RUNS times (3 by default) under build/tests/tools/peak_rss (FILES: some of
# training,bomb_chunks,bomb_threads,names, all by default), and prints per
# binary and file the median events/s, wall time and peak RSS with their
# range. BINARY defaults to build/inferscope-bpf; give several to compare
# builds on the same files, for example the analysis before streaming:
#
#   git worktree add /tmp/before 214ec2b && make -C /tmp/before build/inferscope-bpf
#   sh tests/bench/analysis.sh build/inferscope-bpf /tmp/before/build/inferscope-bpf
#
# A binary that fails on a file (out of memory) is reported as such.
set -eu
cd "$(dirname "$0")/../.."

events=20000000
runs=3
files="training bomb_chunks bomb_threads names"
while getopts n:r:f: opt; do
	case $opt in
	n) events=$OPTARG ;;
	r) runs=$OPTARG ;;
	f) files=$(echo "$OPTARG" | tr , ' ') ;;
	*) echo "usage: sh tests/bench/analysis.sh [-n EVENTS] [-r RUNS] [-f FILES] [BINARY...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- build/inferscope-bpf
for tool in build/tests/tools/synth_rec build/tests/tools/peak_rss "$@"; do
	[ -x "$tool" ] || { echo "bench: $tool is missing: run make bench-analysis" >&2; exit 1; }
done

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
synth() {
	name=$1
	shift
	build/tests/tools/synth_rec "$@" "$dir/$name.isr" | sed -n 's/ events$//p' >"$dir/$name.events"
}
for name in $files; do
	case $name in
	training) synth training -n "$events" ;;
	bomb_chunks) synth bomb_chunks --bomb-chunks 40 ;;
	bomb_threads) synth bomb_threads --bomb-threads 200000 ;;
	names) synth names -n 2500000 --names 500000 ;;
	*) echo "bench: no file $name (training, bomb_chunks, bomb_threads, names)" >&2; exit 2 ;;
	esac
done

# median and range of the numbers on stdin, one a line
stats() {
	sort -g | awk '{ v[NR] = $1 } END { printf "%s (%s-%s)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

printf 'binary\tfile\tevents\tfile bytes\tevents/s\twall s\tpeak RSS MiB\t(medians of %s runs, range)\n' "$runs"
for bin in "$@"; do
	for name in $files; do
		isr="$dir/$name.isr"
		n=$(cat "$dir/$name.events")
		: >"$dir/runs"
		ok=1
		i=0
		while [ $i -lt "$runs" ]; do
			if ! build/tests/tools/peak_rss "$bin" analyze "$isr" --format json -o "$dir/out.json" \
				>>"$dir/runs" 2>"$dir/err"; then
				ok=0
				break
			fi
			i=$((i + 1))
		done
		if [ $ok = 0 ]; then
			printf '%s\t%s\t%s\t%s\tfailed: %s\n' "$bin" "$name" "$n" "$(stat -c %s "$isr")" \
				"$(tail -1 "$dir/err")"
			continue
		fi
		rate=$(awk -v n="$n" '{ printf "%.0f\n", n / $2 }' "$dir/runs" | stats)
		wall=$(awk '{ print $2 }' "$dir/runs" | stats)
		rss=$(awk '{ printf "%.0f\n", $1 / 1024 }' "$dir/runs" | stats)
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$bin" "$name" "$n" "$(stat -c %s "$isr")" "$rate" "$wall" "$rss"
	done
done
