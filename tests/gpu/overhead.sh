#!/bin/bash
# Overhead on the GPU machine, interleaved, with a prebuilt build/inferscope-bpf:
#   tests/gpu/overhead.sh OUTDIR
# 1. paced launch loops at 10k / 50k / 100k launches/s: CPU time per launch
#    untraced vs traced (every probe) — the cost the job's launch thread pays;
# 2. a GPU-bound loop (bf16 matmuls): untraced vs traced vs torch.profiler.
set -u
OUT=${1:?usage: overhead.sh OUTDIR}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"
for rate in 10000 50000 100000; do
	for round in $(seq "$ROUNDS"); do
		a=$($PY tests/gpu/paced_rate.py $rate 4)
		b=$($T record -q -o "$OUT/paced.isr" -- "$PY" tests/gpu/paced_rate.py "$rate" 4 2>>"$OUT/err.txt")
		echo "paced $rate round $round untraced: $a | traced: $b" | tee -a "$OUT/paced.txt"
	done
done
for round in $(seq "$ROUNDS"); do
	a=$($PY tests/gpu/gpu_bound.py 6 | awk '{print $2}')
	b=$($T record -q -o "$OUT/bound.isr" -- "$PY" tests/gpu/gpu_bound.py 6 2>>"$OUT/err.txt" | awk '{print $2}')
	c=$($PY tests/gpu/gpu_bound.py 6 --profiler 2>>"$OUT/err.txt" | awk '{print $2}')
	echo "gpu_bound round $round untraced $a traced $b profiler $c" | tee -a "$OUT/bound.txt"
done
rm -f "$OUT"/*.isr
