#!/bin/bash
# The first CUPTI detach of a process, many times over, on the GPU machine
# with a prebuilt build/inferscope-bpf and build/libinferscope_cupti.so:
#   tests/gpu/fresh_attach.sh OUTDIR [JOBS]
# JOBS (default 16) launch-bound PyTorch loops (tests/gpu/rate_timeline.py,
# its tensor checked at every synchronization), four at a time, each with
# the crash report of tests/gpu/cupti_detach.c preloaded, each attached
# once with -p while it launches: half with GPU windows every 0.2 s
# (--gpu-windows, several detaches), half with --gpu for 2 s (one detach as
# the tracer leaves). Each process's first detach is the one that once
# killed these loops (libcupti's first cuptiSubscribe, docs/overhead.md);
# detach_cycles.sh tries many detaches of one process, this tries many
# first ones. PASS: every job exited 0 with every check held, and every
# recording holds GPU records. Runtime: about 20 s per four jobs.
set -u
OUT=${1:?usage: fresh_attach.sh OUTDIR [JOBS]}
N=${2:-16}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
B=$(realpath build/libinferscope_cupti.so)
mkdir -p "$OUT"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
fail=0
# shellcheck source=tests/gpu/common.sh
. "$(dirname "$0")/common.sh"
crash_report "$OUT"

crashed=0 bad=0 done_jobs=0
for ((b = 0; b < N; b += 4)); do
	pids=() recs=()
	for ((i = b; i < b + 4 && i < N; i++)); do
		CD_CRASH_REPORT=1 LD_PRELOAD="$OUT/libcupti_detach.so" $PY tests/gpu/rate_timeline.py 8 \
			> "$OUT/job$i.out" 2> "$OUT/job$i.err" &
		pids[i]=$!
	done
	for ((i = b; i < b + 4 && i < N; i++)); do
		wait_line "$OUT/job$i.out" ready || { echo "FAIL job $i did not start"; tail -5 "$OUT/job$i.err"; fail=1; }
		if ((i % 2)); then
			opts=(--gpu -d 2)
		else
			opts=(--gpu-windows --gpu-period 0.2 -d 3)
		fi
		$T record -q "${opts[@]}" -o "$OUT/job$i.isr" -p "${pids[i]}" --cupti-bridge "$B" 2> "$OUT/rec$i.err" &
		recs[i]=$!
	done
	for ((i = b; i < b + 4 && i < N; i++)); do
		wait "${recs[i]}"
		wait "${pids[i]}"
		rc=$?
		done_jobs=$((done_jobs + 1))
		if [ "$rc" -ne 0 ]; then
			echo "FAIL job $i exited $rc"
			grep -h -A20 "=== CRASH" "$OUT/job$i.err"
			crashed=$((crashed + 1))
			fail=1
			continue
		fi
		k=$(awk '/^done/ {print $5}' "$OUT/job$i.out")
		[ "$k" = 0 ] || { echo "FAIL job $i: checks failed ${k:-?}"; bad=$((bad + 1)); fail=1; }
		$T analyze --format json "$OUT/job$i.isr" > "$OUT/job$i.json" 2>/dev/null
		n=$(get "$OUT/job$i.json" "sum(p['kernels'] for p in d['gpu']['processes'])" 2>/dev/null)
		[ "${n:-0}" -gt 0 ] 2>/dev/null || { echo "FAIL job $i: no GPU kernels recorded"; fail=1; }
		rm -f "$OUT/job$i.isr"
	done
done
echo "fresh attaches: $done_jobs jobs (half --gpu-windows, half --gpu), $crashed crashed, $bad with a failed check"
[ $fail = 0 ] && echo "fresh_attach.sh: all passed" || echo "fresh_attach.sh: FAILURES above (logs in $OUT)"
exit $fail
