#!/bin/bash
# The zoo's NCCL straggler (tests/gpu/zoo.sh has the one-GPU jobs), on a host
# with two GPUs, from the repository root, with a prebuilt static
# build/inferscope-bpf and build/libinferscope_cupti.so:
#   tests/gpu/zoo_nccl.sh OUTDIR
# tests/gpu/nccl_job.py, two ranks of torch.distributed (NCCL), GPU-bound
# steps (GPU work with Python beside it, an all-reduce, a synchronize),
# rank 1's calling thread pinned to a CPU where a busy process runs: the
# planted cause. Its ablation is the same job without the busy process.
# Untraced, ROUNDS times each by turns: rank 0's loop seconds (it waits for rank 1 at
# every all-reduce, so its loop is the job's); the saving is the planted
# median less the ablated median. Then the planted job recorded whole (the
# launcher followed into both ranks), with the defaults and with --gpu: the
# top finding of each and its cost. The row passes when both top findings
# name the straggler (nccl_straggler, or cpu_contention on its thread) and
# their cost is within 30% of the saving. Everything under OUTDIR;
# prints the row and "zoo_nccl.sh: all passed" on success. About 3 minutes.
set -u
OUT=${1:?usage: zoo_nccl.sh OUTDIR}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
B=$(realpath build/libinferscope_cupti.so)
ROUNDS=${ROUNDS:-3}
export NCCL_ITERS=${NCCL_ITERS:-1000}
mkdir -p "$OUT"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
fail=0
# shellcheck source=tests/gpu/common.sh
. "$(dirname "$0")/common.sh"
{ [ -x "$T" ] && [ -f "$B" ]; } || { echo "FAIL build/inferscope-bpf or build/libinferscope_cupti.so missing"; exit 1; }
[ "$($PY -c 'import torch; print(torch.cuda.device_count())')" -ge 2 ] || { echo "FAIL needs two GPUs"; exit 1; }
nccl_setup "$OUT"
CUDA_LIB_OPT=()
[ -e /usr/local/nvidia/lib64/libcuda.so.1 ] && CUDA_LIB_OPT=(--cuda-lib /usr/local/nvidia/lib64/libcuda.so.1)

# untraced, planted and ablated by turns
for round in $(seq "$ROUNDS"); do
	start_hog
	"$OUT/launch.sh" "$OUT/planted$round"
	stop_hog
	"$OUT/launch.sh" "$OUT/ablated$round"
	echo "round $round: planted $(grep -h 'loop_s' "$OUT/planted$round".rank*), ablated $(grep -h 'loop_s' "$OUT/ablated$round".rank*)"
done
# traced, the planted job whole, each mode
for m in def gpu; do
	opts=()
	[ $m = gpu ] && opts=(--gpu --cupti-bridge "$B")
	start_hog
	$T record -q -o "$OUT/$m.isr" "${NCCL_OPT[@]}" "${CUDA_LIB_OPT[@]}" "${opts[@]}" -- "$OUT/launch.sh" "$OUT/$m" \
		> "$OUT/$m.out" 2> "$OUT/$m.err"
	echo "$m: tracer exit $?"
	stop_hog
	$T analyze "$OUT/$m.isr" --format json -o "$OUT/$m.json" 2>> "$OUT/$m.err"
	$T analyze "$OUT/$m.isr" -o "$OUT/$m.md" 2>> "$OUT/$m.err"
done
$PY - "$OUT" "$ROUNDS" <<'PYEOF' | tee "$OUT/zoo_nccl.txt"
import json, os, re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def loop(name):
    m = re.search(r"rank 0 loop_s ([0-9.]+)", open(os.path.join(out, name + ".rank0")).read())
    return float(m.group(1)) if m else float("nan")
planted = statistics.median(loop("planted%d" % r) for r in range(1, rounds + 1))
ablated = statistics.median(loop("ablated%d" % r) for r in range(1, rounds + 1))
saving = planted - ablated
row, ok = [], True
for m in ("def", "gpu"):
    try:
        d = json.load(open(os.path.join(out, m + ".json")))
    except (OSError, ValueError):
        row += ["(no report)", None]
        ok = False
        continue
    fs = [f for f in d["findings"] if f["severity"] != "info"]
    top = fs[0] if fs else None
    row += [top["rule"] if top else "none", top["cost_s"] if top else 0.0]
    ok &= top is not None and top["rule"] in ("nccl_straggler", "cpu_contention") and \
        saving > 0 and abs(top["cost_s"] - saving) <= 0.3 * saving
    for f in d["findings"][:4]:
        print("  %s %-16s %7.3f s  %s" % (m, f["rule"], f["cost_s"], f["summary"][:240]))
    for f in d["findings"]:
        if f["rule"] == "nccl_straggler":
            e = f["evidence"]
            print("  %s straggler: wait %.3f s, cost %.3f s measured by %s, folded %s" % (
                m, e["first_rank_wait_s"], e["cost_s"], e["cost_measured_by"],
                [(x["rule"], round(x["cost_s"], 3)) for x in e.get("folded", [])]))
print("%-9s %-34s %-17s %-17s %9s %9s %9s  %s" % ("job", "planted", "top (defaults)", "top (--gpu)", "cost def",
                                                  "cost gpu", "saving", "verdict"))
print("%-9s %-34s %-17s %-17s %9s %9s %9.3f  %s" % (
    "nccl", "rank 1's CPU taken by a process", row[0], row[2],
    "%.3f" % row[1] if row[1] is not None else "-", "%.3f" % row[3] if row[3] is not None else "-",
    saving, "PASS" if ok else "FAIL"))
print("          loop: planted %.3f s, ablated %.3f s (rank 0, median of %d)" % (planted, ablated, rounds))
sys.exit(0 if ok else 1)
PYEOF
[ "${PIPESTATUS[0]}" = 0 ] || fail=1
[ $fail = 0 ] && echo "zoo_nccl.sh: all passed"
exit $fail
