#!/bin/bash
# What tracing costs a launch-bound PyTorch loop, side by side in one run,
# on the GPU machine with a prebuilt build/inferscope-bpf and
# build/libinferscope_cupti.so:
#   tests/gpu/side_by_side.sh OUTDIR [ROUNDS] [SECONDS]   (default 3 rounds of 5 s)
# tests/gpu/launch_rate.py (x.add_(1.0) on a 1024-element tensor,
# synchronized every 20k launches) for SECONDS, ROUNDS interleaved rounds
# of: untraced; traced with the defaults (the 1% budget, no GPU activity);
# traced with --gpu-windows (GPU activity in windows within the budget);
# traced with --gpu (every kernel); under torch.profiler (CUDA activities).
# Prints each round, then per mode the median launch rate with its spread,
# its change against the median untraced rate, and the paired change (each
# round's rate over that round's untraced rate: median and min..max); the
# recorder's account of what the defaults and the windows cost (the last
# round's recording.overhead); the GPU windows of the last --gpu-windows
# run; and any warning a tracer printed. Runtime: ROUNDS x 5 runs of
# SECONDS plus a PyTorch start (about 8 s) each: about 3.5 minutes with
# 3 rounds of 5 s.
set -u
OUT=${1:?usage: side_by_side.sh OUTDIR [ROUNDS] [SECONDS]}
ROUNDS=${2:-3}
SEC=${3:-5}
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
$T analyze --format json "$OUT/defaults.isr" > "$OUT/defaults.json"
$T analyze --format json "$OUT/windows.isr" > "$OUT/windows.json"
$T analyze --format json "$OUT/gpu.isr" > "$OUT/gpu.json"
$PY - "$OUT/rounds.txt" "$OUT/windows.json" "$OUT/gpu.json" "$OUT/defaults.json" <<'PYEOF'
import json, statistics, sys
cols = {}
for line in open(sys.argv[1]):
    f = line.split()[2:]
    for name, v in zip(f[0::2], f[1::2]):
        cols.setdefault(name, []).append(float(v))
base = statistics.median(cols["untraced"])
print("| mode | launches/s, median | min-max | vs median untraced | paired change, median | paired min..max | us per launch |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name, vs in cols.items():
    m = statistics.median(vs)
    paired = [v / u - 1 for v, u in zip(vs, cols["untraced"])]
    print(f"SIDE | {name} | {m:.0f} | {min(vs):.0f}-{max(vs):.0f} | {m / base - 1:+.1%} | "
          f"{statistics.median(paired):+.1%} | {min(paired):+.1%}..{max(paired):+.1%} | {1e6 / m - 1e6 / base:+.2f} |")
for label, path in (("defaults", sys.argv[4]), ("windows", sys.argv[2])):
    o = json.load(open(path))["recording"].get("overhead")
    sp = o and o.get("spent")
    if sp:
        busiest = sum(k["seconds"] for k in sp["by_kind"].values())
        kinds = ", ".join(f"{n} {1e3 * k['seconds']:.1f} ms ({k['count']})" for n, k in sp["by_kind"].items() if k["seconds"] > 0)
        print(f"SIDE account {label}: {1e3 * busiest:.1f} ms of {sp['traced_s']:.2f} s ({100 * busiest / sp['traced_s']:.2f}%) "
              f"on the busiest thread, allowed {1e3 * (sp['allowed_s'] or 0):.1f} ms: {kinds}; costs here (ns) {o['cost_ns']}")
for label, path in (("windows", sys.argv[2]), ("gpu", sys.argv[3])):
    d = json.load(open(path))
    for p in d["gpu"]["processes"]:
        if p["kernels"]:
            print(f"SIDE {label}: {p['kernels']} kernels, {p['api_records']} API records, windows {p['windows']}, "
                  f"observed {p['observed_s']:.2f} of {p['span_s']:.2f} s, detaches {p['detaches']}")
PYEOF
echo "SIDE tracer warnings: $(grep -c "cannot\|warning" "$OUT/err.txt")"
grep "cannot\|warning" "$OUT/err.txt" | sort | uniq -c | head
rm -f "$OUT"/*.isr
