#!/bin/bash
# GPU end-to-end checks, run on the GPU machine from the repository root
# with a prebuilt static build/inferscope-bpf (nothing is built there):
#   tests/gpu/run.sh OUTDIR
# 1. exact counts: attach with -p to tests/gpu/known_counts.py (calls from a
#    thread that existed before the attach), compare event_counts and device
#    memory with what the script did;
# 2. the same workload launched with `-- CMD` (kernel names learned at load);
# 3. attach time against a running PyTorch process;
# 4. launch rate untraced vs traced, interleaved A B A B.
set -u
OUT=${1:?usage: run.sh OUTDIR}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
N=${N:-1000}
mkdir -p "$OUT"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
fail=0
# shellcheck source=tests/gpu/common.sh
. "$(dirname "$0")/common.sh"

# 1. -p attach
$PY tests/gpu/known_counts.py "$N" --threads > "$OUT/py_attach.txt" 2>&1 &
P=$!
wait_line "$OUT/py_attach.txt" ready || { echo "FAIL workload did not start"; cat "$OUT/py_attach.txt"; exit 1; }
rm -f /tmp/isr.ready
s=$(date +%s%N)
$T record -v --budget off -o "$OUT/attach.isr" -p $P --ready-file /tmp/isr.ready 2> "$OUT/attach.err" &
TP=$!
for _ in $(seq 1000); do [ -e /tmp/isr.ready ] && break; sleep 0.005; done
e=$(date +%s%N)
echo "attach_ms $(( (e - s) / 1000000 ))" | tee "$OUT/attach_time.txt"
kill -USR1 $P
wait $P
wait $TP
echo "tracer exit $?"
$T analyze "$OUT/attach.isr" --format json -o "$OUT/attach.json"
$T analyze "$OUT/attach.isr" > "$OUT/attach.md"
check "cuLaunchKernel (elementwise, pre-existing thread)" "$(get "$OUT/attach.json" "d['event_counts'].get('cuLaunchKernel',0)")" "$N"
check "cuLaunchKernelEx (cuBLAS, 2 kernels per 256x256 mm)" "$(get "$OUT/attach.json" "d['event_counts'].get('cuLaunchKernelEx',0)")" "$((2 * N))"
check "cuMemcpyHtoDAsync_v2" "$(get "$OUT/attach.json" "d['event_counts'].get('cuMemcpyHtoDAsync_v2',0)")" "$N"
check "cuCtxSynchronize_v2 (N + the final one)" "$(get "$OUT/attach.json" "d['event_counts'].get('cuCtxSynchronize_v2',0)")" "$((N + 1))"
check "cuMemAlloc_v2" "$(get "$OUT/attach.json" "d['event_counts'].get('cuMemAlloc_v2',0)")" 4
check "device_memory_peak_bytes" "$(get "$OUT/attach.json" "[p for p in d['processes'] if p['pid']==$P][0]['device_memory_peak_bytes']")" $(( (12 + 14 + 16 + 18) << 20 ))
check "device_memory_live_bytes (the process exited)" "$(get "$OUT/attach.json" "[p for p in d['processes'] if p['pid']==$P][0]['device_memory_live_bytes']")" 0
check "drops_total" "$(get "$OUT/attach.json" "d['recording']['drops_total']")" 0

# 2. -- CMD: calls from the start, kernel names learned where they load
rm -f /tmp/isr.ready2
$T record --budget off -o "$OUT/launch.isr" --ready-file /tmp/isr.ready2 -- "$PY" tests/gpu/known_counts.py "$N" > "$OUT/py_launch.txt" 2> "$OUT/launch.err" &
TP=$!
wait_line "$OUT/py_launch.txt" ready
WP=$(awk '/ready/ {print $2}' "$OUT/py_launch.txt")
kill -USR1 "$WP"
wait $TP
$T analyze "$OUT/launch.isr" --format json -o "$OUT/launch.json"
$T analyze "$OUT/launch.isr" > "$OUT/launch.md"
named=$(get "$OUT/launch.json" "sum(1 for k in d['cuda']['kernels'] if not k['name'].startswith('kernel@'))")
echo "named kernels in the launched run: $named"
[ "${named:-0}" -gt 0 ] || { echo "FAIL no kernel names learned"; fail=1; }

# 4. launch rate: untraced / traced with the defaults (every probe, the
#    1% budget, no CUPTI) / traced with --gpu --budget off (every call and
#    kernel) / traced without CUPTI and without budget (every call) /
#    torch.profiler (CUDA activities), interleaved, ROUNDS rounds of RATE_S
#    seconds each
ROUNDS=${ROUNDS:-5}
RATE_S=${RATE_S:-6}
for round in $(seq "$ROUNDS"); do
	a=$($PY tests/gpu/launch_rate.py "$RATE_S" | awk '{print $2}')
	b=$($T record -q -o "$OUT/rate$round.isr" -- "$PY" tests/gpu/launch_rate.py "$RATE_S" 2>>"$OUT/rate.err" | awk '{print $2}')
	f=$($T record -q --gpu --budget off -o "$OUT/ratefull.isr" -- "$PY" tests/gpu/launch_rate.py "$RATE_S" 2>>"$OUT/rate.err" | awk '{print $2}')
	u=$($T record -q --budget off --no-cupti -o "$OUT/rateu.isr" -- "$PY" tests/gpu/launch_rate.py "$RATE_S" 2>>"$OUT/rate.err" | awk '{print $2}')
	c=$($PY tests/gpu/launch_rate.py "$RATE_S" --profiler 2>>"$OUT/rate.err" | awk '{print $2}')
	echo "round $round untraced $a traced_default $b traced_full $f traced_no_cupti_no_budget $u profiler $c" | tee -a "$OUT/rates.txt"
done
rm -f "$OUT"/rateu.isr
$T analyze "$OUT/rate1.isr" --format json -o "$OUT/rate1.json"
echo "gpu: $([ $fail = 0 ] && echo all checks passed || echo SOME CHECKS FAILED)"
exit $fail
