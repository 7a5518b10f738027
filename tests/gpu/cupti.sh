#!/bin/bash
# GPU activity through the CUPTI bridge, end to end on the GPU machine, from
# the repository root, with a prebuilt static build/inferscope-bpf and
# build/libinferscope_cupti.so (built elsewhere; nvcc builds the CUDA program
# here):
#   tests/gpu/cupti.sh OUTDIR
# 1. record -- CMD on a CUDA C program that runs N kernels spinning SPIN_US
#    each and M host-to-device copies of BYTES: exactly N kernels and M
#    copies, durations near the planted one, every kernel joined to its
#    launch, 0 causality violations, 0 drops; prints the clock calibration's
#    residual p50/p99, bound and drift;
# 2. per-kernel cost (empty kernels back to back), ROUNDS interleaved rounds
#    of: no bridge, bridge loaded but dormant, traced without the bridge
#    (--no-cupti), traced with the bridge (both --budget off: every kernel),
#    and traced with the bridge under the default 1% budget; medians;
# 3. a PyTorch process started with CUDA_INJECTION64_PATH, attached with -p:
#    exactly NT relu_ kernels, all joined, 0 causality violations;
# 4. the same process started without the bridge: -p loads it (ptrace +
#    dlopen) and the same holds.
# Prints PASS/FAIL lines and "cupti.sh: all passed" at the end on success.
set -u
OUT=${1:?usage: cupti.sh OUTDIR}
PY=${PY:-/opt/torch/.venv/bin/python3}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
T=build/inferscope-bpf
B=$(realpath build/libinferscope_cupti.so)
N=${N:-200}
M=${M:-50}
SPIN_US=${SPIN_US:-200}
BYTES=${BYTES:-1048576}
K=${K:-20000}
ROUNDS=${ROUNDS:-5}
NT=${NT:-1000}
mkdir -p "$OUT"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
fail=0
# shellcheck source=tests/gpu/common.sh
. "$(dirname "$0")/common.sh"
{ [ -x "$T" ] && [ -f "$B" ]; } || { echo "FAIL build/inferscope-bpf or build/libinferscope_cupti.so missing: build them (make) and carry them"; exit 1; }

# The C program links libcudart statically: no libcupti beside it. The
# bridge looks in /usr/local/cuda; when the toolkit keeps it elsewhere, say
# where (INFERSCOPE_CUPTI_LIB).
if ! ls /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13 /usr/local/cuda/lib64/libcupti.so.13 \
	/usr/local/cuda/lib/libcupti.so.13 >/dev/null 2>&1; then
	c=$(first_file /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so.13 /usr/local/cuda*/targets/*/lib/libcupti.so.13 \
		/opt/torch/.venv/lib/python3*/site-packages/nvidia/cu13/lib/libcupti.so.13)
	[ -n "$c" ] && export INFERSCOPE_CUPTI_LIB=$c && echo "using INFERSCOPE_CUPTI_LIB=$c"
fi

# libcuda probed from the start, wherever the loader finds it.
CUDA_LIB_OPT=()
[ -e /usr/local/nvidia/lib64/libcuda.so.1 ] && CUDA_LIB_OPT=(--cuda-lib /usr/local/nvidia/lib64/libcuda.so.1)

$NVCC -O2 -arch=native -o "$OUT/cupti_kernels" tests/gpu/cupti_kernels.cu 2> "$OUT/nvcc.err" ||
	$NVCC -O2 -o "$OUT/cupti_kernels" tests/gpu/cupti_kernels.cu 2>> "$OUT/nvcc.err" ||
	{ echo "FAIL nvcc"; cat "$OUT/nvcc.err"; exit 1; }

# 1. planted kernels and copies, record -- CMD
$T record --gpu -o "$OUT/plant.isr" "${CUDA_LIB_OPT[@]}" --cupti-bridge "$B" -- "$OUT/cupti_kernels" plant "$N" "$M" "$SPIN_US" "$BYTES" \
	> "$OUT/plant.out" 2> "$OUT/plant.err"
echo "tracer exit $?"
$T analyze "$OUT/plant.isr" --format json > "$OUT/plant.json"
$T analyze "$OUT/plant.isr" > "$OUT/plant.md"
G="[p for p in d['gpu']['processes'] if p['kernels']][0]"
check "spin_kernel count" "$(get "$OUT/plant.json" "sum(k['count'] for k in d['gpu']['kernels'] if k['name'].startswith('spin_kernel'))")" "$N"
check "kernels (all)" "$(get "$OUT/plant.json" "${G}['kernels']")" "$N"
check "memcpy HtoD count" "$(get "$OUT/plant.json" "sum(c['count'] for c in d['gpu']['memcpy'] if c['kind']=='HtoD')")" "$M"
check "memcpy HtoD bytes" "$(get "$OUT/plant.json" "sum(c['bytes'] for c in d['gpu']['memcpy'] if c['kind']=='HtoD')")" "$((M * BYTES))"
check "kernels joined to their launch" "$(get "$OUT/plant.json" "${G}['kernels_joined']")" "$N"
check "causality violations" "$(get "$OUT/plant.json" "${G}['causality_violations']")" 0
check "drops_total" "$(get "$OUT/plant.json" "d['recording']['drops_total']")" 0
# The spin counts SM clock cycles at the clock rate the device reports: a
# GPU clocked below it spins longer. Within -10% .. +50% of the plan.
check "spin_kernel mean within -10%..+50% of ${SPIN_US} us" "$(get "$OUT/plant.json" \
	"[0.9 <= k['mean_s'] * 1e6 / $SPIN_US <= 1.5 for k in d['gpu']['kernels'] if k['name'].startswith('spin_kernel')][0]")" True
get "$OUT/plant.json" "'spin_kernel mean %.1f us (planted $SPIN_US us); launch to GPU start p50 %.1f us' % ([k['mean_s'] * 1e6 for k in d['gpu']['kernels'] if k['name'].startswith('spin_kernel')][0], ${G}['launch_to_start_p50_s'] * 1e6)"
get "$OUT/plant.json" "'calibration: %d pairs, %d rejected, residual p50 %.0f ns, p99 %.0f ns, max %.0f ns, bound %.0f ns, drift %.3f ppm' % tuple(${G}['clock_fit'][k] for k in ('pairs', 'pairs_rejected', 'residual_p50_ns', 'residual_p99_ns', 'residual_max_ns', 'bound_ns', 'drift_ppm'))" | tee "$OUT/calibration.txt"

# 2. per-kernel cost, interleaved rounds
: > "$OUT/bench.txt"
for r in $(seq "$ROUNDS"); do
	a=$("$OUT/cupti_kernels" bench "$K" | awk '/per_kernel_us/ {print $2}')
	b=$(CUDA_INJECTION64_PATH="$B" "$OUT/cupti_kernels" bench "$K" 2>> "$OUT/bench.err" | awk '/per_kernel_us/ {print $2}')
	c=$($T record -q --budget off -o "$OUT/bench_nocupti.isr" --no-cupti -- "$OUT/cupti_kernels" bench "$K" 2>> "$OUT/bench.err" | awk '/per_kernel_us/ {print $2}')
	d=$($T record -q --gpu --budget off -o "$OUT/bench_cupti.isr" --cupti-bridge "$B" -- "$OUT/cupti_kernels" bench "$K" 2>> "$OUT/bench.err" | awk '/per_kernel_us/ {print $2}')
	e=$($T record -q --gpu -o "$OUT/bench_budget.isr" --cupti-bridge "$B" -- "$OUT/cupti_kernels" bench "$K" 2>> "$OUT/bench.err" | awk '/per_kernel_us/ {print $2}')
	echo "round $r: no_bridge $a dormant $b traced_no_cupti $c traced_cupti $d traced_cupti_budget $e" | tee -a "$OUT/bench.txt"
done
$PY - "$OUT/bench.txt" <<'PYEOF' | tee "$OUT/bench_summary.txt"
import statistics, sys
cols = {}
for line in open(sys.argv[1]):
    f = line.split()[2:]
    for name, v in zip(f[0::2], f[1::2]):
        cols.setdefault(name, []).append(float(v))
base = statistics.median(cols["no_bridge"])
for name, vs in cols.items():
    m = statistics.median(vs)
    print(f"per-kernel median {name:16s} {m:8.3f} us  ({m - base:+.3f} us vs no bridge)")
PYEOF
$T analyze "$OUT/bench_cupti.isr" --format json > "$OUT/bench_cupti.json"
check "empty_kernel records in the last traced bench run (K + the warm-up)" \
	"$(get "$OUT/bench_cupti.json" "sum(k['count'] for k in d['gpu']['kernels'] if k['name'].startswith('empty_kernel'))")" "$((K + 1))"

# 3. PyTorch started with the bridge, attached with -p
CUDA_INJECTION64_PATH="$B" $PY tests/gpu/cupti_torch.py "$NT" > "$OUT/torch.out" 2> "$OUT/torch.err" &
P=$!
wait_line "$OUT/torch.out" ready || { echo "FAIL the PyTorch workload did not start"; cat "$OUT/torch.err"; exit 1; }
rm -f "$OUT/torch.ready"
$T record -o "$OUT/torch.isr" -p "$P" --ready-file "$OUT/torch.ready" 2> "$OUT/torch_rec.err" &
TP=$!
for _ in $(seq 600); do [ -e "$OUT/torch.ready" ] && break; sleep 0.05; done
sleep 0.3	# the bridge enables within 100 ms of the attach
kill -USR1 "$P"
wait_line "$OUT/torch.out" "done"
kill -INT "$TP"
wait "$TP"
echo "tracer exit $?"
kill -USR1 "$P"
wait "$P"
$T analyze "$OUT/torch.isr" --format json > "$OUT/torch.json"
$T analyze "$OUT/torch.isr" > "$OUT/torch.md"
GT="[p for p in d['gpu']['processes'] if p['pid']==$P][0]"
check "PyTorch: a kernel run exactly $NT times (relu_)" "$(get "$OUT/torch.json" "any(k['count']==$NT for k in d['gpu']['kernels'] if k['pid']==$P)")" True
check "PyTorch: kernels unjoined" "$(get "$OUT/torch.json" "${GT}['kernels_unjoined']")" 0
check "PyTorch: causality violations" "$(get "$OUT/torch.json" "${GT}['causality_violations']")" 0
check "PyTorch: drops_total" "$(get "$OUT/torch.json" "d['recording']['drops_total']")" 0
get "$OUT/torch.json" "'PyTorch calibration: residual p50 %.0f ns, p99 %.0f ns, bound %.0f ns' % tuple(${GT}['clock_fit'][k] for k in ('residual_p50_ns', 'residual_p99_ns', 'bound_ns'))"

# 4. PyTorch started WITHOUT the bridge: -p loads it into the running job
$PY tests/gpu/cupti_torch.py "$NT" > "$OUT/inj.out" 2> "$OUT/inj.err" &
P=$!
wait_line "$OUT/inj.out" ready || { echo "FAIL the PyTorch workload did not start"; cat "$OUT/inj.err"; exit 1; }
rm -f "$OUT/inj.ready"
$T record -v --gpu -o "$OUT/inj.isr" -p "$P" --cupti-bridge "$B" --ready-file "$OUT/inj.ready" 2> "$OUT/inj_rec.err" &
TP=$!
for _ in $(seq 600); do [ -e "$OUT/inj.ready" ] && break; sleep 0.05; done
sleep 0.3
if grep -q libinferscope_cupti "/proc/$P/maps"; then
	echo "PASS bridge injected: $(grep 'CUPTI bridge loaded' "$OUT/inj_rec.err")"
else
	echo "FAIL bridge not injected"; grep -v "^  " "$OUT/inj_rec.err" | tail -5; fail=1
fi
kill -USR1 "$P"
wait_line "$OUT/inj.out" "done"
kill -INT "$TP"
wait "$TP"
kill -USR1 "$P"
wait "$P"
check "injected PyTorch: job exit status" "$?" 0
$T analyze "$OUT/inj.isr" --format json > "$OUT/inj.json"
GT="[p for p in d['gpu']['processes'] if p['pid']==$P][0]"
check "injected PyTorch: a kernel run exactly $NT times (relu_)" "$(get "$OUT/inj.json" "any(k['count']==$NT for k in d['gpu']['kernels'] if k['pid']==$P)")" True
check "injected PyTorch: kernels unjoined" "$(get "$OUT/inj.json" "${GT}['kernels_unjoined']")" 0
check "injected PyTorch: causality violations" "$(get "$OUT/inj.json" "${GT}['causality_violations']")" 0
check "injected PyTorch: drops_total" "$(get "$OUT/inj.json" "d['recording']['drops_total']")" 0

[ $fail = 0 ] && echo "cupti.sh: all passed" || echo "cupti.sh: FAILURES above (logs in $OUT)"
exit $fail
