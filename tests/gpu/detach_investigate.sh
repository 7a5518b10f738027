#!/bin/bash
# Where detaching CUPTI (cuptiFinalize) crashes a launching process, and
# which step of the detach prevents it, on the GPU machine (gcc and nvcc
# build tests/gpu/cupti_detach.c and tests/gpu/mt_launch.cu there; no
# tracer):
#   tests/gpu/detach_investigate.sh OUTDIR [SECONDS]
# For each variant (tests/gpu/cupti_detach.c: bits CB=1 DRAIN=2 KEEP=4
# QUIESCE=8 UNSUB=16), a launch-bound PyTorch loop (tests/gpu/cupti_detach.py,
# ~140k launches/s, its tensor checked at every synchronization) runs
# SECONDS while CUPTI is attached for 30 ms and detached, over and over; then
# the same for the earlier attempt's variants and the bridge's against 4
# threads launching through the runtime API (tests/gpu/mt_launch.cu). A
# crash leaves its report (faulting instruction, every thread's backtrace,
# what was in flight) in OUTDIR/VARIANT_*.err. Prints one line per run:
# variant, exit status, cycles done before it ended, and the RESULT line.
# Runtime: 11 runs of SECONDS (default 6) plus a start of about 10 s each,
# and the builds: about 4 minutes.
set -u
OUT=${1:?usage: detach_investigate.sh OUTDIR [SECONDS]}
SEC=${2:-6}
PY=${PY:-/opt/torch/.venv/bin/python3}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
mkdir -p "$OUT"
# shellcheck source=tests/gpu/common.sh
. "$(dirname "$0")/common.sh"
if [ -z "${INFERSCOPE_CUPTI_LIB:-}" ]; then
	INFERSCOPE_CUPTI_LIB=$(first_file /opt/torch/.venv/lib/python3*/site-packages/nvidia/cu13/lib/libcupti.so.13 \
		/usr/local/cuda*/extras/CUPTI/lib64/libcupti.so.13)
	export INFERSCOPE_CUPTI_LIB
fi
echo "libcupti: $INFERSCOPE_CUPTI_LIB ($(stat -c %s "$INFERSCOPE_CUPTI_LIB") bytes, build id $(readelf -n "$INFERSCOPE_CUPTI_LIB" 2>/dev/null | awk '/Build ID/ {print $3}'))"
inc=$(dirname "$(first_file /usr/local/cuda*/include/cupti.h /usr/local/cuda*/extras/CUPTI/include/cupti.h)")
gcc -O2 -g -shared -fPIC -I/usr/local/cuda/include -I"$inc" tests/gpu/cupti_detach.c -o "$OUT/libcupti_detach.so" \
	-ldl -lpthread || { echo "FAIL gcc"; exit 1; }
$NVCC -O2 -o "$OUT/mt_launch" tests/gpu/mt_launch.cu 2> "$OUT/nvcc.err" || { echo "FAIL nvcc"; cat "$OUT/nvcc.err"; exit 1; }

run() { # name, command...
	local name=$1
	shift
	timeout -s KILL $((SEC + 60)) "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
	local rc=$?
	local res
	res=$(grep -h RESULT "$OUT/$name.out" | head -1)
	local crash
	crash=$(grep -h -m1 "=== CRASH" "$OUT/$name.err")
	echo "RUN $name exit $rc ${res:-no result} ${crash:+| $crash}"
	[ -n "$crash" ] && grep -h -A3 "^RIP\|FAULTING" "$OUT/$name.err" | head -8
}

# torch: the earlier attempt (0: finalize on the cycling thread; 1: in an
# API exit callback), the bridge's order (31), and each of its steps left out
for v in 0 1 31 29 27 23 15 30; do
	run "torch_v$v" "$PY" tests/gpu/cupti_detach.py "$OUT/libcupti_detach.so" "$v" "$SEC" 30 30
done
for v in 0 1 31; do
	run "mt_v$v" "$OUT/mt_launch" 4 "$SEC" "$OUT/libcupti_detach.so" "$v" 30 30
done
