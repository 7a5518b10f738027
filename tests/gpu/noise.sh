#!/bin/bash
# How much the launch-bound loop's rate moves with no tracer at all, on
# the GPU machine from the repository root (about 2.5 minutes):
#   tests/gpu/noise.sh OUTDIR [RUNS] [SECONDS]   (default 4 runs of 3 s)
# 1. the host: CPUs, NUMA nodes, the GPU's CPU affinity, the frequency
#    governor;
# 2. RUNS pairs of separate processes of tests/gpu/launch_rate.py, by
#    turns free to run on any CPU and pinned (taskset) to two CPUs of the
#    GPU's node: each process's launches/s, then per way the median and
#    spread (max/min - 1);
# 3. one process of tests/gpu/rate_timeline.py each way for 3 x SECONDS:
#    the spread of its half-second rates and CPU time per launch.
# 4. two processes of tests/gpu/rate_timeline.py at once for 4 x SECONDS
#    (each on a GPU of its own where there are two): how closely their
#    half-second rates move together, and the spread of their ratio.
# What it answers: whether separate processes (or stretches of one
# process, or two processes side by side at once) of this loop can tell a
# 1% cost from a 2% one, and whether pinning the job makes them.
# Everything under OUTDIR.
set -u
OUT=${1:?usage: noise.sh OUTDIR [RUNS] [SECONDS]}
RUNS=${2:-4}
SEC=${3:-3}
PY=${PY:-/opt/torch/.venv/bin/python3}
mkdir -p "$OUT"
{
	lscpu | grep -E "^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA|CPU max MHz)"
	cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo "governor: none exposed"
	nvidia-smi topo -m 2>/dev/null | head -4
} > "$OUT/host.txt" 2>&1
cat "$OUT/host.txt"
# two CPUs of the GPU's NUMA node (its affinity from nvidia-smi), else 2-3
aff=$(nvidia-smi topo -m 2>/dev/null | awk '/^GPU0/ {for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$/) {print $i; exit}}')
first=${aff%%[-,]*}
[ -n "$first" ] || first=2
PIN="$((first + 2)),$((first + 3))"
echo "pinned runs: taskset -c $PIN"
rate() { awk '/launches_per_s/ {print $2}'; }
: > "$OUT/runs.txt"
for i in $(seq "$RUNS"); do
	f=$($PY tests/gpu/launch_rate.py "$SEC" 2>> "$OUT/err.txt" | rate)
	p=$(taskset -c "$PIN" "$PY" tests/gpu/launch_rate.py "$SEC" 2>> "$OUT/err.txt" | rate)
	echo "run $i free $f pinned $p" | tee -a "$OUT/runs.txt"
done
$PY tests/gpu/rate_timeline.py $((3 * SEC)) > "$OUT/timeline_free.txt" 2>> "$OUT/err.txt"
taskset -c "$PIN" "$PY" tests/gpu/rate_timeline.py $((3 * SEC)) > "$OUT/timeline_pinned.txt" 2>> "$OUT/err.txt"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
second=0
[ "$gpus" -ge 2 ] && second=1
CUDA_VISIBLE_DEVICES=0 "$PY" tests/gpu/rate_timeline.py $((4 * SEC)) > "$OUT/timeline_a.txt" 2>> "$OUT/err.txt" &
a=$!
CUDA_VISIBLE_DEVICES=$second "$PY" tests/gpu/rate_timeline.py $((4 * SEC)) > "$OUT/timeline_b.txt" 2>> "$OUT/err.txt"
wait "$a"
echo "side by side at once: GPUs $gpus (the second process on GPU $second)"
$PY - "$OUT" <<'PYEOF'
import statistics, sys
out = sys.argv[1]
cols = {}
for line in open(f"{out}/runs.txt"):
    f = line.split()[2:]
    for name, v in zip(f[0::2], f[1::2]):
        cols.setdefault(name, []).append(float(v))
print("| runs | launches/s, median | min-max | spread (max/min - 1) |")
print("|---|---:|---:|---:|")
for name, vs in cols.items():
    print(f"NOISE processes {name} | {statistics.median(vs):.0f} | {min(vs):.0f}-{max(vs):.0f} | {max(vs) / min(vs) - 1:.1%} |")
for way in ("free", "pinned"):
    rates, cpus = [], []
    for line in open(f"{out}/timeline_{way}.txt"):
        f = line.split()
        if f and f[0] == "t":
            rates.append(float(f[3]))
            cpus.append(float(f[5]))
    rates, cpus = rates[1:], cpus[1:]  # the first half second warms up
    if rates:
        print(f"NOISE one process {way}: {len(rates)} half-seconds, launches/s median {statistics.median(rates):.0f} "
              f"({min(rates):.0f}-{max(rates):.0f}, spread {max(rates) / min(rates) - 1:.1%}); CPU us per launch "
              f"median {statistics.median(cpus):.2f} ({min(cpus):.2f}-{max(cpus):.2f})")
def timeline(path):
    rows = []
    for line in open(path):
        f = line.split()
        if f and f[0] == "t":
            rows.append((float(f[1]), float(f[3])))
    return rows[1:]
a, b = timeline(f"{out}/timeline_a.txt"), timeline(f"{out}/timeline_b.txt")
# pair each of a's half-seconds with b's nearest in time (both started together)
pairs = []
for t, ra in a:
    tb, rb = min(b, key=lambda x: abs(x[0] - t)) if b else (0, 0)
    if b and abs(tb - t) < 0.25:
        pairs.append((ra, rb))
if len(pairs) > 3:
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    cov = sum((x - mx) * (y - my) for x, y in pairs)
    corr = cov / (sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys)) ** 0.5
    ratios = [x / y for x, y in pairs]
    print(f"NOISE two at once: {len(pairs)} half-seconds, a {min(xs):.0f}-{max(xs):.0f} (spread {max(xs) / min(xs) - 1:.1%}), "
          f"b {min(ys):.0f}-{max(ys):.0f} (spread {max(ys) / min(ys) - 1:.1%}); correlation {corr:+.2f}; a/b median "
          f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}), stdev {statistics.stdev(ratios):.3f}")
PYEOF
