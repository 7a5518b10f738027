#!/bin/bash
# Python stacks on the GPU machine, with a prebuilt build/inferscope-bpf:
#   tests/gpu/py_stacks.sh OUTDIR
# 1. Attribution: tests/gpu/py_sites.py (PyTorch, CPython 3.12 with libpython
#    in the executable) launched with `--`: every torch.cuda.synchronize()
#    must be attributed to its line in sync_site(), the sampled launches to
#    the line of x.add_ in launch_site(); its thread must have sampled stacks.
# 2. Cost, side by side on tests/gpu/launch_rate.py (interleaved rounds,
#    launches/s): traced without Python stacks, with 99 Hz sampling only
#    (--py-launch-every 0), with the defaults (sampling + every 64th launch),
#    with a stack at every launch (--py-launch-every 1). The per-call cost of
#    a capture is 1/rate(every 1) - 1/rate(sampling only); the cost of 99 Hz
#    sampling is the rate lost between no stacks and sampling only.
# Every run uses --budget off: every launch is probed, so that the launch
# counts are exact and the costs are those of the stacks alone.
# Ends with "py_stacks: PASS" or "py_stacks: FAIL (...)".
set -u
OUT=${1:?usage: py_stacks.sh OUTDIR}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"
if ! mountpoint -q /sys/kernel/tracing 2>/dev/null; then
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
fi

$T record -q --budget off -o "$OUT/sites.isr" -- "$PY" tests/gpu/py_sites.py 50 >"$OUT/plan.json" 2>"$OUT/sites.err"
$T analyze "$OUT/sites.isr" --format json -o "$OUT/sites.json" 2>>"$OUT/sites.err"
$T analyze "$OUT/sites.isr" >"$OUT/sites.md" 2>>"$OUT/sites.err"
$PY - "$OUT/plan.json" "$OUT/sites.json" <<'PYEOF' | tee "$OUT/check.txt"
import json, sys
plan = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
py = r["python"]
bad = []
print("processes:", py["processes"])
sync = py["sync_sites"][0] if py["sync_sites"] else {}
launch = py["launch_sites"][0] if py["launch_sites"] else {}
print("top sync site:", sync)
print("top launch site:", launch)
if not sync.get("site", "").endswith("py_sites.py:%d sync_site" % plan["sync_line"]):
    bad.append("sync site is not py_sites.py:%d sync_site" % plan["sync_line"])
if sync.get("calls") != plan["rounds"]:
    bad.append("sync site has %s calls, the script made %d" % (sync.get("calls"), plan["rounds"]))
if not launch.get("site", "").endswith("py_sites.py:%d launch_site" % plan["launch_line"]):
    bad.append("launch site is not py_sites.py:%d launch_site" % plan["launch_line"])
want = plan["launches"] // 64  # the matmuls and warm-up launches count too: a bit fewer, a few more
if not 0.8 * want <= launch.get("samples", 0) <= 1.05 * want + 5:
    bad.append("launch site has %s samples, expected about %d (every 64th)" % (launch.get("samples"), want))
main = [t for t in r["threads"] if t["py_samples"]]
print("threads with samples:", [(t["tid"], t["comm"], t["py_samples"], t["py_stacks"][0]["frames"][:3]) for t in main][:3])
if not main:
    bad.append("no thread has sampled stacks")
print("py_stacks: PASS" if not bad else "py_stacks: FAIL (" + "; ".join(bad) + ")")
PYEOF

for round in $(seq "$ROUNDS"); do
	none=$($T record -q --budget off --no-py-stacks -o "$OUT/c.isr" -- "$PY" tests/gpu/launch_rate.py 4 2>>"$OUT/cost.err" | tail -1)
	samp=$($T record -q --budget off --py-launch-every 0 -o "$OUT/c.isr" -- "$PY" tests/gpu/launch_rate.py 4 2>>"$OUT/cost.err" | tail -1)
	dflt=$($T record -q --budget off -o "$OUT/c.isr" -- "$PY" tests/gpu/launch_rate.py 4 2>>"$OUT/cost.err" | tail -1)
	each=$($T record -q --budget off --py-launch-every 1 -o "$OUT/c.isr" -- "$PY" tests/gpu/launch_rate.py 4 2>>"$OUT/cost.err" | tail -1)
	echo "round $round launches/s: no-py-stacks $none | 99Hz sampling only $samp | default (every 64th) $dflt | every launch $each" | tee -a "$OUT/cost.txt"
done
rm -f "$OUT"/c.isr
