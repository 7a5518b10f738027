#!/bin/bash
# The overhead budget on the GPU machine, with a prebuilt build/inferscope-bpf:
#   tests/gpu/budget.sh OUTDIR
# A launch-bound PyTorch thread (tests/gpu/budget.py) padded with CPU work to
# about 10k and 50k launches/s, and unpadded (the most this machine does,
# ~150k/s): untraced vs traced with the default 1% budget vs traced with
# --budget off, interleaved rounds. Also the budget's own micro benchmarks
# (inferscope-bpf bench --only budget_*) on this quiet 16-core host.
set -u
OUT=${1:?usage: budget.sh OUTDIR}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-4}
mkdir -p "$OUT"
launch_us=$($PY tests/gpu/budget.py calibrate)
echo "untraced launch: $launch_us us" | tee "$OUT/budget.txt"
for target in 10000 50000 0; do
	if [ "$target" = 0 ]; then pad=0; else
		pad=$(awk -v r="$target" -v l="$launch_us" 'BEGIN { p = 1e6 / r - l; print (p > 0 ? p : 0) }')
	fi
	for round in $(seq "$ROUNDS"); do
		a=$($PY tests/gpu/budget.py "$pad" "$SECS" | awk '{print $2}')
		bl=$($T record -q -o "$OUT/b.isr" -- $PY tests/gpu/budget.py "$pad" "$SECS" 2>>"$OUT/err.txt")
		b=$(echo "$bl" | awk '{print $2}')
		made=$(echo "$bl" | awk '{print $4 + 5000}')
		$T analyze --format json "$OUT/b.isr" > "$OUT/budget_${target}_$round.json" 2>>"$OUT/err.txt"
		c=$($T record -q --budget off -o "$OUT/c.isr" -- $PY tests/gpu/budget.py "$pad" "$SECS" 2>>"$OUT/err.txt" | awk '{print $2}')
		est=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); s=d['recording']['sampling'] or {}; c=d['cuda']['calls'].get('cuLaunchKernel',{}); print('coverage', round(s.get('coverage',1),3), 'hit_ns', round(s.get('hit_cost_ns',0)), 'est', c.get('count'), 'observed', c.get('observed'))" "$OUT/budget_${target}_$round.json")
		exact=$($T analyze --format json "$OUT/c.isr" | python3 -c "import json,sys; print(json.load(sys.stdin)['cuda']['calls'].get('cuLaunchKernel',{}).get('count'))")
		echo "target $target pad_us $pad round $round untraced $a budget1 $b off $c | launches made $made $est | off run counted $exact" | tee -a "$OUT/budget.txt"
	done
done
$T bench --only budget_10k --rounds 5 -o "$OUT/bench_10k.json" > "$OUT/bench.txt" 2>&1
$T bench --only budget_50k --rounds 5 -o "$OUT/bench_50k.json" >> "$OUT/bench.txt" 2>&1
$T bench --only budget_150k --rounds 5 -o "$OUT/bench_150k.json" >> "$OUT/bench.txt" 2>&1
$T bench --only cuda_launch --rounds 5 -o "$OUT/bench_launch.json" >> "$OUT/bench.txt" 2>&1
rm -f "$OUT"/*.isr
