#!/bin/bash
# The zoo of real jobs with measured truth, on the GPU machine, from the
# repository root, with a prebuilt static build/inferscope-bpf and
# build/libinferscope_cupti.so:
#   tests/gpu/zoo.sh OUTDIR            (JOBS="input item" to run some)
# Each job of tests/gpu/zoo.py plants one cause and measures its ablation
# (the same job with the cause removed). The tracer attaches to the planted
# job twice, 6 s each: with the defaults, then with --gpu. The table says,
# per job, the planted cause, the top finding of each mode, its cost, and
# what removing the cause saves over the same time:
#   saving = recorded seconds x (1 - planted rate / ablated rate).
# A row passes when both top findings are the expected rule and their cost
# is within 30% of the saving (the healthy job: no finding but info ones,
# and the verdict that the host kept up).
# Everything lands under OUTDIR (the recordings, the reports, the jobs'
# output, zoo.txt: the table).
set -u
OUT=${1:?usage: zoo.sh OUTDIR}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
B=$(realpath build/libinferscope_cupti.so)
read -r -a JOBS <<< "${JOBS:-input launch item pageable noisy gil healthy}"
REC_S=6
mkdir -p "$OUT"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
fail=0
# shellcheck source=tests/gpu/common.sh
. "$(dirname "$0")/common.sh"
{ [ -x "$T" ] && [ -f "$B" ]; } || { echo "FAIL build/inferscope-bpf or build/libinferscope_cupti.so missing"; exit 1; }
CUDA_LIB_OPT=()
[ -e /usr/local/nvidia/lib64/libcuda.so.1 ] && CUDA_LIB_OPT=(--cuda-lib /usr/local/nvidia/lib64/libcuda.so.1)

for job in "${JOBS[@]}"; do
	t0=$(date +%s)
	$PY tests/gpu/zoo.py "$job" > "$OUT/$job.out" 2>&1 &
	p=$!
	if ! wait_line "$OUT/$job.out" '^planted'; then
		echo "FAIL $job: the job did not start"
		tail -5 "$OUT/$job.out"
		kill $p 2>/dev/null
		fail=1
		continue
	fi
	hog=
	if [ "$job" = noisy ]; then
		# a priority above the trainer's: it takes most of the CPU
		nice -n -5 taskset -c 0 "$PY" -c 'while True: pass' &
		hog=$!
	fi
	sleep 3
	echo "attach" >> "$OUT/$job.out"
	$T record -q -o "$OUT/$job.def.isr" -p $p -d $REC_S "${CUDA_LIB_OPT[@]}" 2> "$OUT/$job.def.err"
	echo "attach --gpu" >> "$OUT/$job.out"
	$T record -q -o "$OUT/$job.gpu.isr" -p $p -d $REC_S --gpu --cupti-bridge "$B" "${CUDA_LIB_OPT[@]}" \
		2> "$OUT/$job.gpu.err"
	kill $p
	wait $p 2>/dev/null
	[ -n "$hog" ] && kill "$hog"
	for m in def gpu; do
		$T analyze "$OUT/$job.$m.isr" --format json -o "$OUT/$job.$m.json" 2>> "$OUT/$job.$m.err"
		$T analyze "$OUT/$job.$m.isr" -o "$OUT/$job.$m.md" 2>> "$OUT/$job.$m.err"
	done
	echo "$job: $(($(date +%s) - t0)) s"
done

# The table, from the jobs' output and the reports.
$PY - "$OUT" "${JOBS[@]}" <<'EOF' | tee "$OUT/zoo.txt"
import json, os, statistics, sys

out, jobs = sys.argv[1], sys.argv[2:]
want = {"input": "input_bound", "launch": ("host_bound", "launch_bound"), "item": "sync_stall",
        "pageable": "pageable_memcpy", "noisy": "cpu_contention", "gil": "gil_contention", "healthy": None}
planted = {"input": "DataLoader workers too slow", "launch": "200 tiny kernels a step",
           "item": "loss.item() every step", "pageable": "32 MiB pageable H2D copy a step",
           "noisy": "busy process on the trainer's CPU", "gil": "Python thread holding the GIL",
           "healthy": "nothing (GPU-bound)"}
failed = False
print("%-9s %-34s %-17s %-17s %9s %9s %9s  %s" % ("job", "planted", "top (defaults)", "top (--gpu)", "cost def",
                                                  "cost gpu", "saving", "verdict"))
for job in jobs:
    lines = open(os.path.join(out, job + ".out")).read().split("\n")
    abl = [float(l.split()[1]) for l in lines if l.startswith("ablation ")]
    before = []
    for l in lines[next((i for i, l in enumerate(lines) if l.startswith("planted")), len(lines)):]:
        if l.startswith("attach"):
            break
        if l.startswith("rate "):
            before.append(float(l.split()[1]))
    rate = statistics.median(before) if before else float("nan")
    row, ok = [], True
    saving = None
    for m in ("def", "gpu"):
        try:
            d = json.load(open(os.path.join(out, "%s.%s.json" % (job, m))))
        except (OSError, ValueError):
            row += ["(no report)", None]
            ok = False
            continue
        fs = [f for f in d["findings"] if f["severity"] != "info" or job != "healthy"]
        top = fs[0] if fs else None
        row += [top["rule"] if top else "none", top["cost_s"] if top else 0.0]
        if saving is None and abl:
            saving = d["recording"]["duration_s"] * max(0.0, 1 - rate / abl[0])
        w = want[job]
        # the healthy job: no finding of weight, and a verdict saying the host kept up
        good = (top is None and "kept up" in (d.get("verdict") or "")) if w is None else \
            (top is not None and top["rule"] in (w if isinstance(w, tuple) else (w,)))
        if w is not None and good and saving:
            good = abs(top["cost_s"] - saving) <= 0.3 * saving
        ok &= good
    failed |= not ok
    print("%-9s %-34s %-17s %-17s %9s %9s %9s  %s" % (
        job, planted[job], row[0], row[2],
        "%.3f" % row[1] if row[1] is not None else "-", "%.3f" % row[3] if row[3] is not None else "-",
        "%.3f" % saving if saving is not None else "-", "PASS" if ok else "FAIL"))
    print("          rates: ablated %s, planted %.1f steps/s" % (", ".join("%.1f" % a for a in abl) or "-", rate))
sys.exit(1 if failed else 0)
EOF
[ "${PIPESTATUS[0]}" = 0 ] || fail=1
for job in "${JOBS[@]}"; do
	for m in def gpu; do
		[ -f "$OUT/$job.$m.json" ] || continue
		echo "== $job ($m)"
		get "$OUT/$job.$m.json" "'\n'.join(['%-18s %-8s %7.3f s  %s' % (f['rule'], f['severity'], f['cost_s'], f['summary'][:300]) for f in d['findings']] + (['verdict: ' + d['verdict']] if d.get('verdict') else []))"
	done
done
[ $fail = 0 ] && echo "zoo.sh: all passed"
exit $fail
