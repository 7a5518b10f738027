#!/bin/bash
# What a job pays for CUPTI before, while and after it is traced, on the GPU
# machine with a prebuilt build/inferscope-bpf and build/libinferscope_cupti.so:
#   tests/gpu/detach.sh OUTDIR
# A PyTorch launch loop started with the CUPTI bridge (tests/gpu/rate_timeline.py)
# runs 14 s; the tracer attaches with -p from 4 s to 8 s (every launch and
# every kernel: --gpu --budget off), collecting GPU activity. Prints the
# loop's launch rate before, during and after. When the tracer leaves, the
# bridge detaches CUPTI from the process (cuptiFinalize), which is what
# takes its cost per launch away again: the rate after is printed against
# the rate before. PASS: the job ran to its end with every check held, its
# kernels were recorded, and the rate after is within 5% of the rate before.
set -u
OUT=${1:?usage: detach.sh OUTDIR}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
B=$(realpath build/libinferscope_cupti.so)
mkdir -p "$OUT"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
CUDA_INJECTION64_PATH="$B" $PY tests/gpu/rate_timeline.py 14 > "$OUT/timeline.txt" 2> "$OUT/timeline.err" &
P=$!
for _ in $(seq 600); do grep -q ready "$OUT/timeline.txt" && break; sleep 0.1; done
sleep 4
$T record -q --gpu --budget off -o "$OUT/detach.isr" -p "$P" -d 4 2> "$OUT/detach_rec.err"
echo "tracer exit $?"
wait "$P"
job=$?
$T analyze --format json "$OUT/detach.isr" > "$OUT/detach.json"
python3 - "$OUT/timeline.txt" "$OUT/detach.json" "$job" <<'PYEOF'
import json, statistics, sys
pts = [(float(l.split()[1]), float(l.split()[3])) for l in open(sys.argv[1]) if l.startswith("t ")]
med = lambda a, b: statistics.median(r for t, r in pts if a <= t < b)
before, during, after = med(1, 4), med(4.5, 7.5), med(9, 14)
k = sum(x["count"] for x in (json.load(open(sys.argv[2])).get("gpu") or {}).get("kernels", []))
print(f"launches/s before {before:.0f}, traced {during:.0f} ({during / before - 1:+.1%}), after {after:.0f} "
      f"({after / before - 1:+.1%}); kernels recorded {k}")
print("PASS the job ran to its end, its kernels recorded, the rate after within 5% of before"
      if sys.argv[3] == "0" and k > 0 and after >= 0.95 * before else
      f"FAIL job exit status {sys.argv[3]}, {k} kernels recorded, after/before {after / before:.3f}")
PYEOF
