#!/bin/bash
# NCCL ranks side by side on a host with two GPUs, from the repository root,
# with a prebuilt static build/inferscope-bpf:
#   tests/gpu/nccl.sh OUTDIR
# torch.distributed, NCCL backend, two ranks (tests/gpu/nccl_job.py), rank 1's
# calling thread pinned to a CPU where a busy process (nccl_hog) runs.
# 1. One recording of both ranks (the launcher script followed into its
#    children): ncclAllReduce counted exactly per rank (NCCL_ITERS + 2: the
#    warm-up and the agreement on the GPU work included), both ranks named
#    from their communicator, rank 1 the
#    straggler, its reason waiting for a CPU, nccl_hog among those that had it.
# 2. The cost per NCCL call: the job without the busy process, untraced and
#    traced (wall time, two rounds).
# 3. One recording per rank (two tracers at once, each launching one rank),
#    analysed together (`analyze r0.isr r1.isr`): the same counts, straggler
#    and reason, and the alignment uncertainty between the recordings.
# Prints PASS/FAIL lines and "nccl.sh: all passed" on success. About 4
# minutes.
set -u
OUT=${1:?usage: nccl.sh OUTDIR}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
ITERS=${NCCL_ITERS:-200}
export NCCL_ITERS=$ITERS
mkdir -p "$OUT"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
fail=0
# shellcheck source=tests/gpu/common.sh
. "$(dirname "$0")/common.sh"
[ -x "$T" ] || { echo "FAIL build/inferscope-bpf missing"; exit 1; }
[ "$($PY -c 'import torch; print(torch.cuda.device_count())')" -ge 2 ] || { echo "FAIL needs two GPUs"; exit 1; }
# the job: both ranks, rank 1 pinned to HOG_CPU (common.sh)
nccl_setup "$OUT"
now() { $PY -c 'import time; print(time.monotonic())'; }
echo "libnccl: ${NCCL_LIB:-not found in the wheel (found in the maps of the ranks at the rescan)}"

# 1. one recording, the launcher followed into both ranks
start_hog
$T record -o "$OUT/job.isr" "${NCCL_OPT[@]}" -- "$OUT/launch.sh" > "$OUT/job.out" 2> "$OUT/job.err"
echo "job: tracer exit $?"
stop_hog
$T analyze "$OUT/job.isr" --format json -o "$OUT/job.json" && $T analyze "$OUT/job.isr" > "$OUT/job.md"
j=$OUT/job.json
for r in 0 1; do
	check "rank $r ncclAllReduce" "$(get "$j" "[x['calls'].get('ncclAllReduce', 0) for x in d['ranks'] if x['rank'] == $r]")" "[$((ITERS + 2))]"
	check "rank $r named from" "$(get "$j" "[x['rank_from'] for x in d['ranks'] if x['rank'] == $r]")" "['communicator']"
done
S="[f['evidence'] for f in d['findings'] if f['rule'] == 'nccl_straggler']"
check "straggler" "$(get "$j" "[e['rank'] for e in $S]")" "[1]"
check "reason" "$(get "$j" "[e['reason']['category'] for e in $S]")" "['runqueue']"
check "busy process named" "$(get "$j" "any(t['comm'] == 'nccl_hog' for e in $S for t in e['reason']['cpu_taken_by'])")" True
get "$j" "[(e['late_arrivals'], e['collectives'], e['first_rank_wait_s'], e['reason']) for e in $S]"

# 2. cost per NCCL call: untraced and traced, without the busy process
for round in 1 2; do
	[ -n "${NCCL_NO_COST:-}" ] && break	# set: skip the cost rounds
	s=$(now); "$OUT/launch.sh" > /dev/null 2>&1; u=$($PY -c "print($(now) - $s)")
	s=$(now); $T record -q -o "$OUT/cost.isr" "${NCCL_OPT[@]}" -- "$OUT/launch.sh" > /dev/null 2>&1
	t=$($PY -c "print($(now) - $s)")
	echo "cost round $round: untraced $u s, traced $t s, $(( 2 * (ITERS + 2) )) all-reduces"
done
# 3. one recording per rank, analysed together
start_hog
port=$((29500 + RANDOM % 1000))
tracers=()
for r in 0 1; do
	cpu=-1
	[ $r = 1 ] && cpu=$HOG_CPU
	MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 RANK=$r LOCAL_RANK=$r \
		$T record -q -o "$OUT/r$r.isr" "${NCCL_OPT[@]}" -- "$PY" "$(pwd)/tests/gpu/nccl_job.py" "$cpu" \
		> "$OUT/r$r.out" 2> "$OUT/r$r.err" &
	tracers+=($!)
done
# the two tracers, not the busy process (it runs until stop_hog)
for p in "${tracers[@]}"; do
	wait "$p"
	echo "rank tracer $p: exit $?"
done
stop_hog
$T analyze "$OUT/r0.isr" "$OUT/r1.isr" --format json -o "$OUT/set.json"
j=$OUT/set.json
for r in 0 1; do
	check "per-rank recordings: rank $r ncclAllReduce" "$(get "$j" "[x['calls'].get('ncclAllReduce', 0) for x in d['ranks'] if x['rank'] == $r]")" "[$((ITERS + 2))]"
done
check "per-rank recordings: straggler" "$(get "$j" "[e['rank'] for e in $S]")" "[1]"
check "per-rank recordings: reason" "$(get "$j" "[e['reason']['category'] for e in $S]")" "['runqueue']"
echo "per-rank recordings: alignment uncertainty $(get "$j" "d['collectives']['alignment_uncertainty_s'] * 1e6") us," \
	"recordings $(get "$j" "len(d['recordings'])")"

[ $fail = 0 ] && echo "nccl.sh: all passed"
exit $fail
