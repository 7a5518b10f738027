#!/bin/bash
# The overhead budget on the GPU machine, with a prebuilt build/inferscope-bpf
# and build/libinferscope_cupti.so:
#   tests/gpu/budget.sh OUTDIR
# A launch-bound PyTorch thread (tests/gpu/budget.py) padded with CPU work to
# about 10k and 50k launches/s, and unpadded (the most this machine does,
# ~150k/s), interleaved rounds of: untraced; traced with the default 1%
# budget; the same with GPU activity (--gpu: CUPTI collects every kernel,
# outside the budget); traced with --budget off; and, unpadded,
# torch.profiler with CUDA activities. For each traced run: the launches it
# counted (extrapolated where sampled) against those the loop made. Then the
# budget's own micro benchmarks (inferscope-bpf bench --only budget_*).
set -u
OUT=${1:?usage: budget.sh OUTDIR}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
B=$(realpath build/libinferscope_cupti.so)
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-4}
TARGETS=${TARGETS:-10000 50000 0}
BENCH=${BENCH:-1}
BENCH_ROUNDS=${BENCH_ROUNDS:-5}
mkdir -p "$OUT"
launch_us=$($PY tests/gpu/budget.py calibrate)
echo "untraced launch: $launch_us us" | tee "$OUT/budget.txt"
counted() { # json: the launches counted and observed, the hot path's coverage, the GPU kernels recorded
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
s = d['recording']['sampling'] or {}
c = d['cuda']['calls'].get('cuLaunchKernel', {})
g = d.get('gpu') or {}
k = sum(x['count'] for x in g.get('kernels', []))
print('counted', c.get('count'), 'observed', c.get('observed'), 'coverage', round(s.get('coverage', 1), 3),
      'kernels', k)" "$1"
}
for target in $TARGETS; do
	if [ "$target" = 0 ]; then pad=0; else
		pad=$(awk -v r="$target" -v l="$launch_us" 'BEGIN { p = 1e6 / r - l; print (p > 0 ? p : 0) }')
	fi
	for round in $(seq "$ROUNDS"); do
		a=$($PY tests/gpu/budget.py "$pad" "$SECS" | awk '{print $2}')
		line="target $target pad_us $pad round $round untraced $a"
		for mode in budget gpu off; do
			case $mode in
			budget) opts=() ;;
			gpu) opts=(--gpu --cupti-bridge "$B") ;;
			off) opts=(--budget off) ;;
			esac
			r=$($T record -q "${opts[@]}" -o "$OUT/r.isr" -- "$PY" tests/gpu/budget.py "$pad" "$SECS" 2>>"$OUT/err.txt")
			$T analyze --format json "$OUT/r.isr" > "$OUT/${mode}_${target}_$round.json" 2>>"$OUT/err.txt"
			made=$(echo "$r" | awk '{print $4 + 5000}')
			line="$line | $mode $(echo "$r" | awk '{print $2}') made $made $(counted "$OUT/${mode}_${target}_$round.json")"
		done
		if [ "$target" = 0 ]; then
			line="$line | profiler $($PY tests/gpu/budget.py "$pad" "$SECS" --profiler 2>>"$OUT/err.txt" | awk '{print $2}')"
		fi
		echo "$line" | tee -a "$OUT/budget.txt"
	done
done
rm -f "$OUT"/*.isr
[ "$BENCH" = 1 ] || exit 0
{
	$T bench --only budget_10k --rounds "$BENCH_ROUNDS" -o "$OUT/bench_10k.json"
	$T bench --only budget_50k --rounds "$BENCH_ROUNDS" -o "$OUT/bench_50k.json"
	$T bench --only budget_150k --rounds "$BENCH_ROUNDS" -o "$OUT/bench_150k.json"
	$T bench --only cuda_launch --rounds "$BENCH_ROUNDS" -o "$OUT/bench_launch.json"
} > "$OUT/bench.txt" 2>&1
