# shellcheck shell=bash
# Helpers of the GPU scripts (sourced; $PY names the Python with PyTorch,
# and a failed check sets fail=1).
# shellcheck disable=SC2034 # fail: the sourcing script's
check() { # name, observed, expected
	if [ "$2" = "$3" ]; then echo "PASS $1 = $2"; else echo "FAIL $1 = $2, expected $3"; fail=1; fi
}
wait_line() { # file, pattern: up to 60 s
	for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
first_file() { # paths (globs expanded by the caller): prints the first that exists
	for f in "$@"; do
		[ -e "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}
get() { # json file, Python expression over it as d
	$PY -c "import json,sys; d=json.load(open('$1')); print(eval(sys.argv[1]))" "$2"
}
crash_report() { # dir: builds the crash report of tests/gpu/cupti_detach.c there, as
	# DIR/libcupti_detach.so (preloaded with CD_CRASH_REPORT=1, a crash prints
	# the faulting instruction and every thread's backtrace to stderr)
	gcc -O2 -g -shared -fPIC -I/usr/local/cuda/include tests/gpu/cupti_detach.c -o "$1/libcupti_detach.so" \
		-ldl -lpthread || { echo "FAIL gcc tests/gpu/cupti_detach.c"; exit 1; }
}
# The two-rank NCCL job of tests/gpu/nccl_job.py (nccl.sh, zoo_nccl.sh):
# writes DIR/launch.sh, which starts both ranks, rank 1's calling thread
# pinned to CPU $HOG_CPU (the last), and waits for them; given a PREFIX,
# each rank's output goes to PREFIX.rank0 and PREFIX.rank1, else to its
# own. Sets HOG_CPU and NCCL_OPT (--nccl-lib with the wheel's libnccl, for
# the tracer).
nccl_setup() { # dir
	HOG_CPU=$(( $(nproc) - 1 ))
	local job
	job="$(pwd)/tests/gpu/nccl_job.py"
	cat > "$1/launch.sh" <<EOS
#!/bin/bash
export MASTER_ADDR=127.0.0.1 MASTER_PORT=\$((29500 + RANDOM % 1000)) WORLD_SIZE=2
if [ -n "\${1:-}" ]; then
	RANK=0 LOCAL_RANK=0 $PY $job -1 > "\$1.rank0" 2>&1 &
	RANK=1 LOCAL_RANK=1 $PY $job $HOG_CPU > "\$1.rank1" 2>&1 &
else
	RANK=0 LOCAL_RANK=0 $PY $job -1 &
	RANK=1 LOCAL_RANK=1 $PY $job $HOG_CPU &
fi
wait
EOS
	chmod +x "$1/launch.sh"
	NCCL_LIB=$($PY -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))" 2>/dev/null)
	NCCL_OPT=()
	[ -n "$NCCL_LIB" ] && [ -e "$NCCL_LIB" ] && NCCL_OPT=(--nccl-lib "$NCCL_LIB")
}
# A busy process named nccl_hog on CPU $HOG_CPU, and its end.
start_hog() {
	taskset -c "$HOG_CPU" "$PY" -c "import ctypes
ctypes.CDLL(None).prctl(15, b'nccl_hog', 0, 0, 0)
while True:
    pass" &
	HOG=$!
}
stop_hog() { kill "$HOG" 2>/dev/null; wait "$HOG" 2>/dev/null; }
