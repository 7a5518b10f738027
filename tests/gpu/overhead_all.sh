#!/bin/bash
# Everything issue 26's closing note needs, in one call of at most 8
# minutes, on the GPU machine from the repository root with a prebuilt
# static build/inferscope-bpf and build/libinferscope_cupti.so:
#   tests/gpu/overhead_all.sh OUTDIR
# 1. tests/gpu/hot_ablation.py (25 s traced): what the hot path's probes
#    cost a launch of the launch-bound loop, its blocks with the probes on
#    against those with them off beside them in the same run, and from it
#    their share of the loop's CPU time against the recorder's account
#    (at most 1 minute; docs/overhead.md says why this, not separate runs,
#    tells 1% from 2% on the GPU hosts);
# 2. tests/gpu/side_by_side.sh (3 rounds of 4 s): the launch-bound loop's
#    launches/s untraced, with the defaults, --gpu-windows, --gpu and
#    torch.profiler: medians, spread, paired change; the recorder's account
#    of the defaults and the windows; tracer warnings (at most 3.5
#    minutes);
# 3. tests/gpu/realjob.sh, its throughput part (PARTS=throughput, 3 rounds
#    of 120 steps): the ResNet-18 job's steps/s untraced against the
#    defaults attached with -p, paired; the attach time of each -p (the
#    tracer's start to its ready file) and its account (at most 2.5
#    minutes);
# 4. tests/gpu/window_estimate.sh (8 s a side): GPU busy from windows
#    against full collection on both jobs (at most 1.5 minutes).
# Every output under OUTDIR, small: the logs, analyses and reports of
# hot_ablation/, side_by_side/, realjob/, window_estimate/ (their
# recordings deleted), each part's .txt, and OUTDIR/summary.md with the
# tables, printed at the end. A part that runs past its time is cut
# (said in the summary); what it printed so far is kept. The parts together are held to 480 s, their
# kill included: a part gets its share or what is left, if less.
set -u
OUT=${1:?usage: overhead_all.sh OUTDIR}
mkdir -p "$OUT"
if [ ! -x build/inferscope-bpf ] || [ ! -f build/libinferscope_cupti.so ]; then
	echo "overhead_all.sh: build/inferscope-bpf or build/libinferscope_cupti.so missing"
	exit 1
fi
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
start=$(date +%s)
deadline=$((start + 480))
status=0

part() { # name, seconds, command...
	local name=$1 limit=$2 t0 rc
	shift 2
	t0=$(date +%s)
	[ $((deadline - t0 - 10)) -lt "$limit" ] && limit=$((deadline - t0 - 10))
	if [ "$limit" -le 0 ]; then
		echo "$name: not run (no time left)" >> "$OUT/parts.txt"
		status=1
		return
	fi
	timeout -k 10 "$limit" "$@" > "$OUT/$name.txt" 2>&1
	rc=$?
	echo "$name: exit $rc after $(( $(date +%s) - t0 )) s$({ [ $rc = 124 ] || [ $rc = 137 ]; } && echo " (cut at $limit s)")" \
		>> "$OUT/parts.txt"
	[ $rc = 0 ] || status=1
}

: > "$OUT/parts.txt"
part hot_ablation 60 "${PY:-/opt/torch/.venv/bin/python3}" tests/gpu/hot_ablation.py "$OUT/hot_ablation" 25
part side_by_side 210 tests/gpu/side_by_side.sh "$OUT/side_by_side" 3 4
part realjob 150 env PARTS=throughput ROUNDS=3 STEPS=120 tests/gpu/realjob.sh "$OUT/realjob"
part window_estimate 90 tests/gpu/window_estimate.sh "$OUT/window_estimate" 8
# a part cut short leaves its recordings: only the logs and reports come back
find "$OUT" -name '*.isr' -delete

{
	echo "# overhead_all.sh $(date -u +%Y-%m-%dT%H:%M:%SZ), $(hostname), $(nvidia-smi --query-gpu=name \
		--format=csv,noheader 2>/dev/null | head -1), $(( $(date +%s) - start )) s"
	echo
	sed 's/^/- /' "$OUT/parts.txt"
	echo
	echo "## Launch-bound loop: the hot path ablated inside one run (tests/gpu/hot_ablation.py)"
	echo
	grep "^ABLATION\|^account\|^blocks" "$OUT/hot_ablation.txt" | sed 's/^/- /'
	echo
	echo "## Launch-bound loop (tests/gpu/launch_rate.py), launches/s"
	echo
	grep "^round" "$OUT/side_by_side.txt"
	echo
	grep "^| mode" "$OUT/side_by_side.txt"
	grep "^|---" "$OUT/side_by_side.txt"
	sed -n 's/^SIDE | /| /p' "$OUT/side_by_side.txt"
	echo
	grep "^SIDE account\|^SIDE windows\|^SIDE gpu\|^SIDE tracer" "$OUT/side_by_side.txt" | sed 's/^SIDE /- /'
	echo
	echo "## Real job (tests/gpu/resnet_job.py), steps/s, untraced against the defaults (-p)"
	echo
	grep "^round\|^throughput" "$OUT/realjob.txt" | sed 's/^/- /'
	echo
	grep "^attach\|^account\|^tracer warning" "$OUT/realjob.txt" | sed 's/^/- /'
	echo
	echo "## GPU busy from windows against full collection (tests/gpu/window_estimate.sh)"
	echo
	grep "GPU busy from\|^PASS\|^FAIL" "$OUT/window_estimate.txt" | sed 's/^/- /'
} > "$OUT/summary.md"
cat "$OUT/summary.md"
exit $status
