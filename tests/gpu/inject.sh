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

INJECT_PROBE_MARKER="$OUT/marker" "$PY" tests/gpu/inject_target.py "$OUT/progress" 15 > "$OUT/target.log" 2>&1 &
P=$!
for _ in $(seq 600); do [ -s "$OUT/progress" ] && break; sleep 0.1; done
[ -s "$OUT/progress" ] || { bad "PyTorch job did not start"; cat "$OUT/target.log"; exit 1; }
sleep 2
for d in "/proc/$P/task"/*; do
	echo "${d##*/} $(cat "$d/comm") $(cut -d' ' -f1 "$d/syscall")"
done > "$OUT/threads_syscalls.txt"
if $CLI "$P" "$LIB" > "$OUT/inject.log" 2>&1; then pass "$(cat "$OUT/inject.log")"; else bad "inject: $(cat "$OUT/inject.log")"; fi
if grep -q libinject_probe.so "/proc/$P/maps"; then pass "library mapped in the job"; else bad "library not in /proc/$P/maps"; fi
# A second injection: same handle, constructor not run again.
if $CLI "$P" "$LIB" > "$OUT/inject2.log" 2>&1; then pass "second: $(cat "$OUT/inject2.log")"; else bad "second inject: $(cat "$OUT/inject2.log")"; fi
h1=$(sed -n 's/.*handle=\([^ ]*\).*/\1/p' "$OUT/inject.log")
h2=$(sed -n 's/.*handle=\([^ ]*\).*/\1/p' "$OUT/inject2.log")
if [ -n "$h1" ] && [ "$h1" = "$h2" ]; then pass "same handle $h1"; else bad "handles differ: $h1 / $h2"; fi
wait "$P"
rc=$?
cat "$OUT/target.log"
if [ "$rc" -eq 0 ]; then pass "job finished correctly (tensor right, SIGUSR1 handled once)"; else bad "job exit code $rc"; fi
lines=$(wc -l < "$OUT/marker" 2>/dev/null || echo 0)
if [ "$lines" -eq 1 ]; then pass "constructor ran once: $(cat "$OUT/marker")"; else bad "constructor ran $lines times"; fi
if [ "$fail" -eq 0 ]; then echo "inject: OK"; else echo "inject: FAILED (threads and their system calls: $OUT/threads_syscalls.txt)"; fi
exit $fail
