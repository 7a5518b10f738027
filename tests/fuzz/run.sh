#!/bin/sh
# Runs the recording fuzzer (build/fuzz/fuzz_recording: the reader, the
# analysis and every report writer under ASan and UBSan) for SECONDS
# (default 60) from seed recordings written by make_corpus (from the unit
# tests' synthetic jobs, into build/fuzz/seeds/), after checking that they
# hold every event type. What it finds that reaches new
# code is kept in build/fuzz/corpus/ for the next run; a crash, a leak, an
# undefined behaviour, an input slower than 20 s or one that needs more
# than 2 GB fails the run, the input saved in build/fuzz/crashes/.
#   tests/fuzz/run.sh [SECONDS]
# With FUZZ_SEED set (make test sets 1): libFuzzer's random choices from
# that seed, FUZZ_RUNS inputs (default 3000; SECONDS stays a limit), from
# the seeds alone (a fresh corpus in build/fuzz/corpus-seeded/), so that a
# run explores nearly the same inputs each time (coverage feedback can
# differ a little between runs); a failing input is saved and replays
# exactly. Without it (make fuzz) every run
# explores anew from what earlier runs kept.
set -u
cd "$(dirname "$0")/../.." || exit 1
secs=${1:-60}
bin=build/fuzz/fuzz_recording
out=build/fuzz
corpus="$out/corpus"
how=""
if [ -n "${FUZZ_SEED:-}" ]; then
	corpus="$out/corpus-seeded"
	rm -rf "$corpus"
	how="-seed=$FUZZ_SEED -runs=${FUZZ_RUNS:-3000}"
fi
mkdir -p "$corpus" "$out/crashes"
rm -rf "$out/seeds" && mkdir -p "$out/seeds" || exit 1
build/asan/tests/fuzz/make_corpus "$out/seeds" && build/asan/tests/fuzz/make_corpus --check "$out/seeds" || exit 1
log="$out/fuzz.log"
# What the fuzzer found before, each input once: a crash, a leak or a run
# over 20 s fails at once (tests/fuzz/regressions/, named after the defect).
if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	"$bin" -timeout=20 -rss_limit_mb=2048 tests/fuzz/regressions/* >"$out/regressions.log" 2>&1; then
	tail -20 "$out/regressions.log"
	echo "fuzz: FAILED on an earlier finding (tests/fuzz/regressions/); the log is $out/regressions.log"
	exit 1
fi
# shellcheck disable=SC2086 # $how: several options, or none
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	"$bin" $how -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -dict=tests/fuzz/isr.dict \
	-print_final_stats=1 -artifact_prefix="$out/crashes/" "$corpus" "$out/seeds" >"$log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
features=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
if [ "$rc" -eq 0 ]; then
	echo "fuzz: ${execs:-0} executions${FUZZ_SEED:+ from seed $FUZZ_SEED} (at most ${secs} s), ${edges:-0} edges, ${features:-0} features, $(find "$corpus" -mindepth 1 -maxdepth 1 | wc -l) inputs in $corpus: no failure"
else
	grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|artifact_prefix|Test unit written)' "$log" | head -20
	echo "fuzz: FAILED after ${execs:-?} executions (exit $rc); the log is $log, the input in $out/crashes/"
fi
exit "$rc"
