#!/bin/bash
# Where the attach time goes, on the GPU machine, from the repository root,
# with a prebuilt static build/inferscope-bpf, build/libinferscope_cupti.so
# and build/tests/standin/libcuda.so.1:
#   tests/gpu/attach_phases.sh OUTDIR [REPEATS]
# 1. `bench --only attach_time`: the recorder's phases against a Python
#    process with 40-odd extension modules and the stand-in libcuda;
# 2. the ResNet-18 job (tests/gpu/resnet_job.py, 4 DataLoader workers
#    running, waiting for its go) and the launch loop
#    (tests/gpu/rate_timeline.py): REPEATS (default 3) `record -v -p PID
#    -d 1` each, with the recorder's own line "set up in ... ms: BPF
#    objects loaded in ..., then ... to every probe armed (of which
#    measuring the costs ...)" and the costs it measured.
# About 1.5 minutes. Everything under OUTDIR; the phase lines on standard
# output.
set -u
OUT=${1:?usage: attach_phases.sh OUTDIR [REPEATS]}
N=${2:-3}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
B=$(realpath build/libinferscope_cupti.so)
mkdir -p "$OUT"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
# shellcheck source=tests/gpu/common.sh
. "$(dirname "$0")/common.sh"
CUDA_LIB_OPT=()
[ -e /usr/local/nvidia/lib64/libcuda.so.1 ] && CUDA_LIB_OPT=(--cuda-lib /usr/local/nvidia/lib64/libcuda.so.1)

echo "## bench attach_time"
PATH="$(dirname "$PY"):$PATH" $T bench --only attach_time -r 5 -o "$OUT/bench.json" 2>&1 | tail -4

# attach NAME PID: REPEATS recordings of 1 s attached with -p and -v
attach() {
	for i in $(seq "$N"); do
		$T record -v -p "$2" -d 1 -o "$OUT/$1$i.isr" "${CUDA_LIB_OPT[@]}" --cupti-bridge "$B" \
			> "$OUT/$1$i.err" 2>&1
		echo "$1 $i (exit $?): $(grep -h 'set up in' "$OUT/$1$i.err")"
		grep -h "costs here" "$OUT/$1$i.err" | sed "s/^/  /"
		grep -hc "probes attached in" "$OUT/$1$i.err" | sed "s/^/  uprobe attach lines: /"
		rm -f "$OUT/$1$i.isr"
	done
}

echo "## ResNet-18 job, workers running"
$PY tests/gpu/resnet_job.py 100000 > "$OUT/resnet.out" 2>&1 &
job=$!
if wait_line "$OUT/resnet.out" ready; then
	attach resnet $job
else
	echo "the ResNet job did not start"; tail "$OUT/resnet.out"
fi
kill $job 2>/dev/null; wait $job 2>/dev/null
pkill -f resnet_job.py 2>/dev/null

echo "## launch loop"
$PY tests/gpu/rate_timeline.py 60 > "$OUT/launch.out" 2>&1 &
job=$!
sleep 8
attach launch $job
kill $job 2>/dev/null; wait $job 2>/dev/null
true
