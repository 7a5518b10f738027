#!/bin/sh
# The daemon's figures (docs/daemon.md): its CPU time and memory over many
# windows, and what one window costs a traced job. Root; run from the
# repository root after `make build/dyn/inferscope-bpf build/tests/workloads/cuda_steady
# build/tests/workloads/launch_rate`.
#
#   tests/bench/daemon.sh resources MINUTES INTERVAL WINDOW OUTDIR
#       one cuda_steady job, the daemon for MINUTES; every 5 s: the
#       daemon's CPU seconds (utime + stime), RSS and peak RSS (OUTDIR/samples.csv)
#   tests/bench/daemon.sh window-cost ROUNDS SECONDS OUTDIR
#       a launch-bound job (launch_rate bound, 5 us of work per launch)
#       for SECONDS + 5 s, untraced and with one daemon window of SECONDS
#       (started 0.5 s into it), interleaved ROUNDS times: launches made,
#       the job's CPU time (user + system: what the probes cost it lands
#       there, while a busy machine's run-queue waits do not) and CPU ns per
#       launch (OUTDIR/window-cost.csv)
set -eu
BIN=${BIN:-build/dyn/inferscope-bpf}
W=build/tests/workloads
mode=$1
shift

resources() {
	minutes=$1 interval=$2 window=$3 out=$4
	mkdir -p "$out/state" "$out/textfile"
	$W/cuda_steady $((minutes * 60 + 30)) 77777777 > /dev/null &
	job=$!
	$BIN daemon --interval "$interval" --window "$window" --state-dir "$out/state" \
		--textfile-dir "$out/textfile" --no-cuda-processes --match 'cuda_steady [0-9.]+ 77777777' \
		--keep-severity info --keep-last 1000 --max-size 4G 2> "$out/daemon.log" &
	d=$!
	tck=$(getconf CLK_TCK)
	echo "t_s,cpu_s,rss_kib,hwm_kib,windows" > "$out/samples.csv"
	t0=$(date +%s)
	end=$((t0 + minutes * 60))
	while [ "$(date +%s)" -lt "$end" ]; do
		sleep 5
		# shellcheck disable=SC2046 # utime and stime, one word each
		set -- $(cut -d' ' -f14,15 "/proc/$d/stat")
		cpu=$(echo "scale=3; ($1 + $2) / $tck" | bc)
		rss=$(awk '/^VmRSS/ {print $2}' /proc/$d/status)
		hwm=$(awk '/^VmHWM/ {print $2}' /proc/$d/status)
		win=$(grep -c 'window [0-9]*: [0-9]* processes' "$out/daemon.log" || true)
		echo "$(( $(date +%s) - t0 )),$cpu,$rss,$hwm,$win" >> "$out/samples.csv"
	done
	kill -TERM $d
	wait $d
	kill $job 2> /dev/null || true
	wait $job 2> /dev/null || true
	tail -1 "$out/samples.csv"
}

window_cost() {
	rounds=$1 seconds=$2 out=$3
	run=$((seconds + 5))
	mkdir -p "$out/state" "$out/textfile"
	echo "round,mode,launches,job_cpu_s,job_wall_s,ns_cpu_per_launch" > "$out/window-cost.csv"
	for r in $(seq "$rounds"); do
		for mode in untraced window; do
			/usr/bin/time -f '%U %S %e' -o "$out/time" $W/launch_rate "$run" bound "$out/count" 5 1000 &
			job=$!
			if [ $mode = window ]; then
				sleep 0.5
				$BIN daemon --once --window "$seconds" --state-dir "$out/state" --textfile-dir "$out/textfile" \
					--no-cuda-processes --match "^$W/launch_rate $run bound" --keep-severity none --keep-last 1 \
					2>> "$out/daemon.log"
			fi
			wait $job
			# shellcheck disable=SC2046 # user and system seconds, one word each
			set -- $(cat "$out/time")
			cpu=$(echo "$1 + $2" | bc)
			n=$(cat "$out/count")
			echo "$r,$mode,$n,$cpu,$3,$(echo "scale=1; $cpu * 1000000000 / $n" | bc)" >> "$out/window-cost.csv"
		done
	done
	cat "$out/window-cost.csv"
}

case $mode in
resources) resources "$@" ;;
window-cost) window_cost "$@" ;;
*) echo "usage: $0 resources MINUTES INTERVAL WINDOW OUTDIR | window-cost ROUNDS SECONDS OUTDIR" >&2; exit 2 ;;
esac
