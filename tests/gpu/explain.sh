#!/bin/bash
# The findings of a real PyTorch job with planted bottlenecks, on the GPU
# machine, from the repository root, with a prebuilt static
# build/inferscope-bpf and build/libinferscope_cupti.so:
#   tests/gpu/explain.sh OUTDIR
# 1. tests/gpu/planted.py planted, attached with -p (GPU activity through
#    the injected CUPTI bridge): each planted bottleneck is found, its cost
#    within 20% of the planted time (sync stall 0.8 s, GPU idle behind
#    Python 0.4 s, GIL starvation 2.2 s), 100 pageable copies, 240 MiB held
#    at exit;
# 2. tests/gpu/planted.py healthy (a GPU-bound loop): no finding;
# 3. the planted job again without GPU activity (host view): the sync stall
#    and the GIL still found, GPU busy time reported as unknown, exactly the
#    100 pageable copies (300 more come from a tensor pinned before the attach).
# Prints PASS/FAIL lines and "explain.sh: all passed" on success.
set -u
OUT=${1:?usage: explain.sh OUTDIR}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
B=$(realpath build/libinferscope_cupti.so)
mkdir -p "$OUT"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
fail=0
# shellcheck source=tests/gpu/common.sh
. "$(dirname "$0")/common.sh"
{ [ -x "$T" ] && [ -f "$B" ]; } || { echo "FAIL build/inferscope-bpf or build/libinferscope_cupti.so missing"; exit 1; }
CUDA_LIB_OPT=()
[ -e /usr/local/nvidia/lib64/libcuda.so.1 ] && CUDA_LIB_OPT=(--cuda-lib /usr/local/nvidia/lib64/libcuda.so.1)

# run NAME MODE [tracer options...]: start the job, attach, release it, wait
# for both, write NAME.json and NAME.md.
run() {
	local name=$1 mode=$2
	shift 2
	$PY tests/gpu/planted.py "$mode" > "$OUT/$name.out" 2>&1 &
	local p=$!
	wait_line "$OUT/$name.out" ready || { echo "FAIL $name: job did not start"; cat "$OUT/$name.out"; fail=1; return; }
	rm -f "$OUT/$name.ready"
	$T record -o "$OUT/$name.isr" -p $p "${CUDA_LIB_OPT[@]}" --cupti-bridge "$B" --ready-file "$OUT/$name.ready" "$@" \
		2> "$OUT/$name.err" &
	local tp=$!
	for _ in $(seq 2000); do [ -e "$OUT/$name.ready" ] && break; sleep 0.01; done
	sleep 1
	kill -USR1 $p
	wait $p
	wait $tp
	echo "$name: tracer exit $?"
	$T analyze "$OUT/$name.isr" --format json -o "$OUT/$name.json"
	$T analyze "$OUT/$name.isr" > "$OUT/$name.md"
}

# within RULE PLANTED JSON: the finding of RULE costs PLANTED +-20%
within() {
	local cost
	cost=$(get "$3" "max([f['cost_s'] for f in d['findings'] if f['rule']=='$1'] or [-1])")
	if $PY -c "import sys; c=float('$cost'); p=float('$2'); sys.exit(0 if abs(c-p) <= 0.2*p else 1)"; then
		echo "PASS $1 cost $cost s (planted $2 s)"
	else
		echo "FAIL $1 cost $cost s, planted $2 s"
		fail=1
	fi
}

run planted planted --gpu --gil
within sync_stall 0.8 "$OUT/planted.json"
within gil_contention 2.2 "$OUT/planted.json"
check "gpu_idle names Python" "$(get "$OUT/planted.json" "any(f['rule']=='gpu_idle' and 'Python' in f['summary'] for f in d['findings'])")" True
check "GPU idle behind Python (python cause, s, +-20% of 0.4)" \
	"$(get "$OUT/planted.json" "abs(sum(x['idle_by_cause_s']['python'] for p in d['metrics']['processes'] for x in p['devices']) - 0.4) <= 0.08")" True
check "pageable copies" "$(get "$OUT/planted.json" "[f['evidence']['copies'] for f in d['findings'] if f['rule']=='pageable_memcpy']")" "[100]"
check "held at exit >= 240 MiB" "$(get "$OUT/planted.json" "any(p['device_memory_held_at_exit_bytes'] >= 240<<20 for p in d['metrics']['processes'])")" True
check "causality violations" "$(get "$OUT/planted.json" "sum(p['causality_violations'] for p in d['gpu']['processes'])")" 0

run healthy healthy --gpu --gil
check "healthy: findings" "$(get "$OUT/healthy.json" "[f['rule'] for f in d['findings']]")" "[]"

run host planted --gil
within sync_stall 0.8 "$OUT/host.json"
check "host view: GIL found" "$(get "$OUT/host.json" "any(f['rule']=='gil_contention' for f in d['findings'])")" True
check "host view: gpu_idle not judged" "$(get "$OUT/host.json" "any(n['rule']=='gpu_idle' for n in d['not_judged'])")" True
# a tensor pinned before the attach makes 300 more copies: pinned, not pageable (issue 25 item 5)
check "host view: pageable copies" "$(get "$OUT/host.json" "[f['evidence']['copies'] for f in d['findings'] if f['rule']=='pageable_memcpy']")" "[100]"

for n in planted healthy host; do
	echo "== $n findings"
	get "$OUT/$n.json" "'\n'.join('%-20s %7.3f s  %s' % (f['rule'], f['cost_s'], f['summary'][:160]) for f in d['findings'])"
done
[ $fail = 0 ] && echo "explain.sh: all passed"
exit $fail
