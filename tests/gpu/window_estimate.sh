#!/bin/bash
# GPU busy time from windows (--gpu-windows) against full collection (--gpu)
# on the same running job, on the GPU machine with a prebuilt
# build/inferscope-bpf and build/libinferscope_cupti.so:
#   tests/gpu/window_estimate.sh OUTDIR [SECONDS]
# Two jobs, each attached with -p twice in a row for SECONDS: with windows
# every second (--gpu-windows --gpu-period 1), then with --gpu; the crash
# report of tests/gpu/cupti_detach.c is preloaded into both. The jobs: matrix products
# with CPU pauses between (tests/gpu/busy_job.py, GPU busy about half the
# time) and the launch-bound loop (tests/gpu/rate_timeline.py). Prints the
# busy fraction of each and the windows' error against full collection;
# PASS within 10%. Runtime: per job 2 x SECONDS + 12 s (default 10: 32 s)
# plus its PyTorch start: about 1.5 minutes.
set -u
OUT=${1:?usage: window_estimate.sh OUTDIR [SECONDS]}
SEC=${2:-10}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
B=$(realpath build/libinferscope_cupti.so)
mkdir -p "$OUT"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
fail=0
# shellcheck source=tests/gpu/common.sh
. "$(dirname "$0")/common.sh"
# the crash report in both jobs: a crash goes to OUTDIR/JOB.err
crash_report "$OUT"

busy() { # json, pid: busy fraction, estimated, windows, observed share, how extrapolated, launches in windows / gaps
	get "$1" "' '.join(str(x) for x in [(round(1 - dv['idle_fraction'], 4), p['estimated'], p['windows'], round(p['observed_s'] / max(p['span_s'], 1e-9), 3), p.get('busy_method'), '%s/%s' % (p.get('window_launches'), round(p.get('gap_launches') or 0))) for p in d['gpu']['processes'] if p['pid'] == $2 for dv in d['gpu']['devices'] if dv['pid'] == $2][0])"
}

for job in busy_job rate_timeline; do
	CD_CRASH_REPORT=1 LD_PRELOAD="$OUT/libcupti_detach.so" $PY "tests/gpu/$job.py" $((2 * SEC + 12)) \
		> "$OUT/$job.out" 2> "$OUT/$job.err" &
	P=$!
	wait_line "$OUT/$job.out" ready || { echo "FAIL $job did not start"; cat "$OUT/$job.err"; exit 1; }
	$T record -q --gpu-windows --gpu-period 1 -d "$SEC" -o "$OUT/${job}_win.isr" -p "$P" --cupti-bridge "$B" 2> "$OUT/${job}_win.err"
	$T record -q --gpu -d "$SEC" -o "$OUT/${job}_all.isr" -p "$P" --cupti-bridge "$B" 2> "$OUT/${job}_all.err"
	wait "$P"
	check "$job: exit status" "$?" 0
	grep -h -A30 "=== CRASH" "$OUT/$job.err"
	$T analyze --format json "$OUT/${job}_win.isr" > "$OUT/${job}_win.json"
	$T analyze --format json "$OUT/${job}_all.isr" > "$OUT/${job}_all.json"
	read -r bw ew nw cw mw lw <<< "$(busy "$OUT/${job}_win.json" "$P")"
	read -r ba ea _ ca _ _ <<< "$(busy "$OUT/${job}_all.json" "$P")"
	err=$(awk -v w="$bw" -v a="$ba" 'BEGIN { printf "%+.1f", 100 * (w / a - 1) }')
	echo "$job: GPU busy from $nw windows ($cw of the time observed, estimated $ew per $mw, launches in" \
		"windows/gaps $lw) $bw, from full collection ($ca observed, estimated $ea) $ba: error $err%"
	if awk -v e="$err" 'BEGIN { exit !(e < 10 && e > -10) }'; then
		echo "PASS $job: windows within 10% of full collection"
	else
		echo "FAIL $job: windows off by $err%"; fail=1
	fi
done
rm -f "$OUT"/*.isr
exit $fail
