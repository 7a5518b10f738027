#!/bin/bash
# What tracing costs a launch-bound PyTorch loop, side by side in one run,
# on the GPU machine with a prebuilt build/inferscope-bpf and
# build/libinferscope_cupti.so:
#   tests/gpu/side_by_side.sh OUTDIR [ROUNDS] [SECONDS]
# tests/gpu/launch_rate.py (x.add_(1.0) on a 1024-element tensor,
# synchronized every 20k launches) for SECONDS, ROUNDS interleaved rounds
# of: untraced; traced with the defaults (the 1% budget, no GPU activity);
# traced with --gpu-windows (GPU activity in windows within the budget);
# traced with --gpu (every kernel); under torch.profiler (CUDA activities). Prints each round, then the medians against untraced, and
# the GPU windows of the last --gpu-windows run. Runtime: ROUNDS x 5 runs
# of SECONDS plus a PyTorch start (about 8 s) each: about 4 minutes with
# the defaults (3 rounds, 6 s).
set -u
OUT=${1:?usage: side_by_side.sh OUTDIR [ROUNDS] [SECONDS]}
ROUNDS=${2:-3}
SEC=${3:-6}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
B=$(realpath build/libinferscope_cupti.so)
mkdir -p "$OUT"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
rate() { awk '/launches_per_s/ {print $2}'; }
: > "$OUT/rounds.txt"
for r in $(seq "$ROUNDS"); do
	u=$($PY tests/gpu/launch_rate.py "$SEC" 2>> "$OUT/err.txt" | rate)
	d=$($T record -q -o "$OUT/defaults.isr" --cupti-bridge "$B" -- "$PY" tests/gpu/launch_rate.py "$SEC" 2>> "$OUT/err.txt" | rate)
	w=$($T record -q --gpu-windows -o "$OUT/windows.isr" --cupti-bridge "$B" -- "$PY" tests/gpu/launch_rate.py "$SEC" 2>> "$OUT/err.txt" | rate)
	g=$($T record -q --gpu -o "$OUT/gpu.isr" --cupti-bridge "$B" -- "$PY" tests/gpu/launch_rate.py "$SEC" 2>> "$OUT/err.txt" | rate)
	p=$($PY tests/gpu/launch_rate.py "$SEC" --profiler 2>> "$OUT/err.txt" | rate)
	echo "round $r: untraced $u defaults $d windows $w gpu $g profiler $p" | tee -a "$OUT/rounds.txt"
done
$T analyze --format json "$OUT/windows.isr" > "$OUT/windows.json"
$T analyze --format json "$OUT/gpu.isr" > "$OUT/gpu.json"
$PY - "$OUT/rounds.txt" "$OUT/windows.json" "$OUT/gpu.json" <<'PYEOF'
import json, statistics, sys
cols = {}
for line in open(sys.argv[1]):
    f = line.split()[2:]
    for name, v in zip(f[0::2], f[1::2]):
        cols.setdefault(name, []).append(float(v))
base = statistics.median(cols["untraced"])
for name, vs in cols.items():
    m = statistics.median(vs)
    print(f"SIDE median {name:9s} {m:9.0f} launches/s ({m / base - 1:+.1%})  [{min(vs):.0f}-{max(vs):.0f}]  "
          f"{1e6 / m - 1e6 / base:+.2f} us per launch")
for label, path in (("windows", sys.argv[2]), ("gpu", sys.argv[3])):
    d = json.load(open(path))
    for p in d["gpu"]["processes"]:
        if p["kernels"]:
            print(f"SIDE {label}: {p['kernels']} kernels, {p['api_records']} API records, windows {p['windows']}, "
                  f"observed {p['observed_s']:.2f} of {p['span_s']:.2f} s, detaches {p['detaches']}")
PYEOF
rm -f "$OUT"/*.isr
