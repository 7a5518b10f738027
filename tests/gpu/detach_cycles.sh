#!/bin/bash
# The CUPTI detach under load, through the product, on the GPU machine with
# a prebuilt build/inferscope-bpf and build/libinferscope_cupti.so (nvcc
# builds tests/gpu/mt_launch.cu there):
#   tests/gpu/detach_cycles.sh OUTDIR [SECONDS]
# GPU activity windows as often as the tracer can switch them
# (--gpu-windows --gpu-period 0.12 with a 6% budget: about one every 0.3-1 s;
# each window is CUPTI attached, collecting, then detached with
# cuptiFinalize) for SECONDS, against two jobs at once, each with the crash
# report of tests/gpu/cupti_detach.c preloaded (CD_CRASH_REPORT=1: a crash
# prints the faulting instruction and every thread's backtrace to the
# job's stderr, OUTDIR/torch.err and OUTDIR/mt_rec.err):
#  1. a launch-bound PyTorch loop (tests/gpu/rate_timeline.py, ~140k
#     launches/s, its tensor checked at every synchronization), the bridge
#     loaded into it by -p (ptrace + dlopen);
#  2. 4 threads launching through the runtime API, each checking its
#     device counter after every 64 launches (tests/gpu/mt_launch.cu),
#     started by record -- CMD (the bridge in CUDA_INJECTION64_PATH).
# PASS per job: it exited 0 with every check held (a crash is a signal
# exit), and its recording holds at least 200 detaches (each window's
# record reports the detach before it). Prints the windows, detaches and
# the longest attach, drain and detach of each, and "detach_cycles.sh: all
# passed" at the end. Runtime: SECONDS (default 240, enough for 200
# windows at one every 0.3-1 s) plus about 1 minute (nvcc, the PyTorch
# warm-up, the analyses): about 5 minutes.
set -u
OUT=${1:?usage: detach_cycles.sh OUTDIR [SECONDS]}
SEC=${2:-240}
PY=${PY:-/opt/torch/.venv/bin/python3}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
T=build/inferscope-bpf
B=$(realpath build/libinferscope_cupti.so)
mkdir -p "$OUT"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
fail=0
# shellcheck source=tests/gpu/common.sh
. "$(dirname "$0")/common.sh"
if [ -z "${INFERSCOPE_CUPTI_LIB:-}" ]; then
	INFERSCOPE_CUPTI_LIB=$(first_file /opt/torch/.venv/lib/python3*/site-packages/nvidia/cu13/lib/libcupti.so.13 \
		/usr/local/cuda*/extras/CUPTI/lib64/libcupti.so.13)
	export INFERSCOPE_CUPTI_LIB
fi
$NVCC -O2 -o "$OUT/mt_launch" tests/gpu/mt_launch.cu 2> "$OUT/nvcc.err" || { echo "FAIL nvcc"; cat "$OUT/nvcc.err"; exit 1; }
crash_report "$OUT"
CRASH=(env CD_CRASH_REPORT=1 LD_PRELOAD="$OUT/libcupti_detach.so")

windows() { # json, pid: windows, detaches, observed share, longest detach, attach and drain (ms), unfinished records
	get "$1" "' '.join(str(x) for x in [(p['windows'], p['detaches'], round(p['observed_s'] / max(p['span_s'], 1e-9), 3), round(p['detach_max_s'] * 1e3, 2), round(p['attach_max_s'] * 1e3, 2), round(p['drain_max_s'] * 1e3, 2), p['unfinished_records']) for p in d['gpu']['processes'] if p['pid'] == $2][0])"
}

OPTS=(--gpu-windows --budget 6 --gpu-period 0.12 --cupti-bridge "$B")
"${CRASH[@]}" "$PY" tests/gpu/rate_timeline.py "$SEC" > "$OUT/torch.out" 2> "$OUT/torch.err" &
P=$!
wait_line "$OUT/torch.out" ready || { echo "FAIL the PyTorch loop did not start"; cat "$OUT/torch.err"; exit 1; }
$T record -q "${OPTS[@]}" -o "$OUT/torch.isr" -p "$P" 2> "$OUT/torch_rec.err" &
TP=$!
$T record -q "${OPTS[@]}" -o "$OUT/mt.isr" -- "${CRASH[@]}" "$OUT/mt_launch" 4 "$SEC" > "$OUT/mt.out" \
	2> "$OUT/mt_rec.err" &
MTP=$!
wait "$P"
job=$?
wait "$TP"
wait "$MTP"
mjob=$?

# 1. PyTorch, -p
check "PyTorch loop under detach cycles: exit status" "$job" 0
check "PyTorch loop: checks failed" "$(awk '/^done/ {print $5}' "$OUT/torch.out")" 0
$T analyze --format json "$OUT/torch.isr" > "$OUT/torch.json"
read -r tw td tcov tmax tatt tdrain tunf <<< "$(windows "$OUT/torch.json" "$P")"
echo "PyTorch: $(grep ^done "$OUT/torch.out"), windows $tw, detaches $td, observed $tcov of the time, longest" \
	"detach $tmax ms, attach $tatt ms, drain $tdrain ms, unfinished records $tunf"
[ "${td:-0}" -ge 200 ] || { echo "FAIL PyTorch: fewer than 200 detaches"; fail=1; }

# 2. four launching threads, record -- CMD
check "4 launching threads under detach cycles: tracer exit" "$mjob" 0
grep -q "killed by signal" "$OUT/mt_rec.err" && { echo "FAIL mt_launch: $(grep 'killed by signal' "$OUT/mt_rec.err")"; fail=1; }
grep -h -A14 "=== CRASH" "$OUT/torch.err" "$OUT/mt_rec.err"
check "mt_launch: checks failed" "$(awk '/^RESULT/ {for (i = 1; i < NF; i++) if ($i == "checks_failed") print $(i + 1)}' "$OUT/mt.out")" 0
$T analyze --format json "$OUT/mt.isr" > "$OUT/mt.json"
MP=$(awk '/^ready/ {print $2}' "$OUT/mt.out")
read -r mw md mcov mmax matt mdrain munf <<< "$(windows "$OUT/mt.json" "$MP")"
echo "mt_launch: $(grep ^RESULT "$OUT/mt.out" | cut -d' ' -f2-10), windows $mw, detaches $md, observed $mcov of the" \
	"time, longest detach $mmax ms, attach $matt ms, drain $mdrain ms, unfinished records $munf"
[ "${md:-0}" -ge 200 ] || { echo "FAIL mt_launch: fewer than 200 detaches"; fail=1; }
rm -f "$OUT"/*.isr
[ $fail = 0 ] && echo "detach_cycles.sh: all passed" || echo "detach_cycles.sh: FAILURES above (logs in $OUT)"
exit $fail
