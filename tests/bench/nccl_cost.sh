#!/bin/sh
# What tracing costs an NCCL call (`make bench-nccl`, root).
#
#   sh tests/bench/nccl_cost.sh [-r ROUNDS] [-n CALLS]
#
# Runs build/tests/workloads/nccl_job --bench CALLS (one rank alone on the
# stand-in libnccl.so.2: CALLS all-reduces timed in each of 7 rounds, their
# median ns per call) untraced and under `inferscope-bpf record --budget
# off` (every call probed: the uprobe on ncclAllReduce, its per-communicator
# sequence number and its event), alternately, ROUNDS times each (5 by
# default), and the same for the stand-in libcuda's cuLaunchKernel (the
# launch-bound loop of launch_rate, its launches counted), so that the two
# probes' costs on this machine are compared in one run. Prints each round
# and the medians with their range; the cost per call is traced - untraced.
set -eu
cd "$(dirname "$0")/../.."

rounds=5
calls=200000
while getopts r:n: opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	n) calls=$OPTARG ;;
	*) echo "usage: sh tests/bench/nccl_cost.sh [-r ROUNDS] [-n CALLS]" >&2; exit 2 ;;
	esac
done
tracer=build/inferscope-bpf
for tool in "$tracer" build/tests/workloads/nccl_job build/tests/workloads/launch_rate; do
	[ -x "$tool" ] || { echo "bench: $tool is missing: run make bench-nccl" >&2; exit 1; }
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# ns per all-reduce, the median of nccl_job's rounds
nccl_ns() {
	sed -n 's/.*median \([0-9.]*\) ns per call.*/\1/p' "$1"
}

# ns per launch of a 2 s launch-bound loop
launch_ns() {
	awk -v s=2 '{ printf "%.1f\n", s * 1e9 / $1 }' "$1"
}

i=0
while [ "$i" -lt "$rounds" ]; do
	i=$((i + 1))
	build/tests/workloads/nccl_job --bench "$calls" >"$dir/u"
	"$tracer" record -q --budget off -o "$dir/r.isr" -- build/tests/workloads/nccl_job --bench "$calls" >"$dir/t"
	build/tests/workloads/launch_rate 2 bound "$dir/lu" 0 1000000
	"$tracer" record -q --budget off -o "$dir/l.isr" -- build/tests/workloads/launch_rate 2 bound "$dir/lt" 0 1000000
	printf '%s %s %s %s\n' "$(nccl_ns "$dir/u")" "$(nccl_ns "$dir/t")" "$(launch_ns "$dir/lu")" \
		"$(launch_ns "$dir/lt")" >>"$dir/rounds"
	echo "round $i: ncclAllReduce $(nccl_ns "$dir/u") ns untraced, $(nccl_ns "$dir/t") ns traced;" \
		"cuLaunchKernel $(launch_ns "$dir/lu") ns untraced, $(launch_ns "$dir/lt") ns traced"
done
# The medians (and ranges) of the per-round costs: traced - untraced.
sort_col() {
	awk -v c="$1" '{ print $c }' "$dir/rounds" | sort -g
}
stat() {
	awk '{ v[NR] = $1 } END { printf "median %.1f ns (%.1f-%.1f)", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'
}
awk '{ print $2 - $1 }' "$dir/rounds" | sort -g | stat | sed 's/^/ncclAllReduce probe: /'
echo " per call, over $(sort_col 1 | stat | sed 's/median //') untraced"
awk '{ print $4 - $3 }' "$dir/rounds" | sort -g | stat | sed 's/^/cuLaunchKernel probe: /'
echo " per call, over $(sort_col 3 | stat | sed 's/median //') untraced"
