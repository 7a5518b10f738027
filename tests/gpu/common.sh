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
