#!/bin/sh
# Runs the cmocka test binaries, then the recording fuzzer (one test):
# FUZZ_RUNS inputs (default 3000) from FUZZ_SEED (default 1) on a fresh
# corpus, within FUZZ_SECONDS (default 240), and prints one closing line:
# "tests: N passed, N failed". Integration tests need root (they load BPF).
# With all of them, the shell scripts are linted (tests/lint_shell.sh: one
# test).
#   tests/run.sh               all
#   tests/run.sh unit          unit tests only
#   tests/run.sh integration   integration tests only
#   tests/run.sh fuzz          the fuzzer only
#   tests/run.sh lint          the shell scripts only
set -u
cd "$(dirname "$0")/.." || exit 1
which=${1:-all}
bins=""
[ "$which" = all ] || [ "$which" = unit ] && bins="$bins $(ls build/asan/tests/unit/test_* 2>/dev/null)"
[ "$which" = all ] || [ "$which" = integration ] && bins="$bins $(ls build/asan/tests/integration/test_* 2>/dev/null)"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
passed=0
failed=0
failed_bins=""
log=$(mktemp)
for b in $bins; do
	echo "== $b"
	"$b" 2>&1 | tee "$log"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	# A crash or sanitizer abort leaves no cmocka summary: count it.
	if ! grep -q '^\[  PASSED  \]' "$log" && [ -z "$f" ]; then
		failed=$((failed + 1))
		failed_bins="$failed_bins $b"
	elif [ -n "$f" ]; then
		failed_bins="$failed_bins $b"
	fi
done
rm -f "$log"
if [ "$which" = all ] || [ "$which" = lint ]; then
	echo "== shell scripts (bash -n, shellcheck)"
	if sh tests/lint_shell.sh; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_bins="$failed_bins lint_shell"
	fi
fi
if [ "$which" = all ] || [ "$which" = fuzz ]; then
	echo "== fuzz (${FUZZ_RUNS:-3000} inputs from seed ${FUZZ_SEED:-1})"
	if FUZZ_SEED=${FUZZ_SEED:-1} FUZZ_RUNS=${FUZZ_RUNS:-3000} sh tests/fuzz/run.sh "${FUZZ_SECONDS:-240}"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_bins="$failed_bins fuzz"
	fi
fi
[ -n "$failed_bins" ] && echo "failing:$failed_bins"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
