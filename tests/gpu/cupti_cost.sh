#!/bin/bash
# What CUPTI itself costs a launching thread, without the tracer, on the GPU
# machine (gcc builds tests/gpu/cupti_cost.c there):
#   tests/gpu/cupti_cost.sh OUTDIR [SECONDS] [ROUNDS]
# Per-kernel cost of each set of activity kinds, and the cost of switching
# collection on and off, for empty kernels (driver API) and for a PyTorch
# x.add_(1.0) loop; then, in PyTorch, what a process pays once CUPTI was
# enabled and disabled again, and after cuptiFinalize (against a control
# process that calls no CUPTI). Lines KINDS, RATE and SEQ are the summary.
set -u
OUT=${1:?usage: cupti_cost.sh OUTDIR [SECONDS] [ROUNDS]}
SEC=${2:-3}
ROUNDS=${3:-3}
PY=${PY:-/opt/torch/.venv/bin/python3}
mkdir -p "$OUT"
# shellcheck source=tests/gpu/common.sh
. "$(dirname "$0")/common.sh"
inc=$(dirname "$(first_file /usr/local/cuda*/include/cupti.h /usr/local/cuda*/extras/CUPTI/include/cupti.h \
	/usr/local/cuda*/targets/*/include/cupti.h)")
gcc -O2 -shared -fPIC -I/usr/local/cuda/include -I"$inc" tests/gpu/cupti_cost.c -o "$OUT/libcupti_cost.so" \
	-ldl -lpthread || { echo "FAIL gcc"; exit 1; }
if [ -z "${INFERSCOPE_CUPTI_LIB:-}" ]; then
	INFERSCOPE_CUPTI_LIB=$(first_file /opt/torch/.venv/lib/python3*/site-packages/nvidia/cu13/lib/libcupti.so.13 \
		/usr/local/cuda*/extras/CUPTI/lib64/libcupti.so.13 /usr/local/cuda*/lib64/libcupti.so.13 \
		/usr/local/cuda*/targets/*/lib/libcupti.so.13)
	export INFERSCOPE_CUPTI_LIB
fi
echo "libcupti: $INFERSCOPE_CUPTI_LIB"
for mode in c torch; do
	$PY tests/gpu/cupti_cost.py "$OUT/libcupti_cost.so" "$mode" "$SEC" "$ROUNDS" 2>&1 | tee "$OUT/cupti_cost_$mode.txt"
done
for w in seq-control seq; do
	$PY tests/gpu/cupti_cost.py "$OUT/libcupti_cost.so" torch 1 1 "$w" 2>&1 | tee "$OUT/cupti_cost_$w.txt"
done
grep -h -E "^(KINDS|RATE|SEQ)" "$OUT"/cupti_cost_*.txt
