#!/bin/sh
# Loads a library into a running PyTorch process that is launching CUDA
# kernels, and checks that the job is unharmed. Run on the GPU machine from
# the repository root with the prebuilt build/tests/tools/inject_cli and
# build/tests/workloads/libinject_probe.so (nothing is built there):
#   tests/gpu/inject.sh OUTDIR
# Prints PASS/FAIL lines and "inject: OK" when all pass.
set -u
OUT=${1:?usage: inject.sh OUTDIR}
PY=${PY:-/opt/torch/.venv/bin/python3}
CLI=build/tests/tools/inject_cli
LIB=$(pwd)/build/tests/workloads/libinject_probe.so
mkdir -p "$OUT"
rm -f "$OUT/marker" "$OUT/progress"
fail=0
pass() { echo "PASS $1"; }
bad() { echo "FAIL $1"; fail=1; }

INJECT_PROBE_MARKER="$OUT/marker" $PY tests/gpu/inject_target.py "$OUT/progress" 15 > "$OUT/target.log" 2>&1 &
P=$!
for _ in $(seq 600); do [ -s "$OUT/progress" ] && break; sleep 0.1; done
[ -s "$OUT/progress" ] || { bad "PyTorch job did not start"; cat "$OUT/target.log"; exit 1; }
sleep 2
ls /proc/$P/task > "$OUT/threads.txt"
for t in $(cat "$OUT/threads.txt"); do
	echo "$t $(cat /proc/$P/task/$t/comm) $(cut -d' ' -f1 /proc/$P/task/$t/syscall)"
done > "$OUT/threads_syscalls.txt"
if $CLI $P "$LIB" > "$OUT/inject.log" 2>&1; then pass "$(cat "$OUT/inject.log")"; else bad "inject: $(cat "$OUT/inject.log")"; fi
grep -q libinject_probe.so /proc/$P/maps && pass "library mapped in the job" || bad "library not in /proc/$P/maps"
# A second injection: same handle, constructor not run again.
$CLI $P "$LIB" > "$OUT/inject2.log" 2>&1 && pass "second: $(cat "$OUT/inject2.log")" || bad "second inject: $(cat "$OUT/inject2.log")"
h1=$(sed -n 's/.*handle=\([^ ]*\).*/\1/p' "$OUT/inject.log")
h2=$(sed -n 's/.*handle=\([^ ]*\).*/\1/p' "$OUT/inject2.log")
[ -n "$h1" ] && [ "$h1" = "$h2" ] && pass "same handle $h1" || bad "handles differ: $h1 / $h2"
wait $P
rc=$?
cat "$OUT/target.log"
[ "$rc" -eq 0 ] && pass "job finished correctly (tensor right, SIGUSR1 handled once)" || bad "job exit code $rc"
lines=$(wc -l < "$OUT/marker" 2>/dev/null || echo 0)
[ "$lines" -eq 1 ] && pass "constructor ran once: $(cat "$OUT/marker")" || bad "constructor ran $lines times"
[ "$fail" -eq 0 ] && echo "inject: OK" || echo "inject: FAILED (threads and their system calls: $OUT/threads_syscalls.txt)"
exit $fail
