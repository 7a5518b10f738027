#!/bin/sh
# `make demo`: trace the bundled example workload and print the report;
# then a job on a simulated CUDA driver (the tests' stand-in libcuda), so
# that the report's CUDA sections show on a machine without a GPU
# (docs/getting-started.md).
set -eu
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: loading BPF programs needs root: run 'sudo make demo'" >&2
	exit 1
fi
mkdir -p build
echo "demo: 1/2: tracing build/examples/infer_loop (a stand-in inference loop, CPU only) for 3 s"
echo "demo: \$ build/inferscope-bpf -o build/demo.isr -- build/examples/infer_loop 3"
echo
build/inferscope-bpf -o build/demo.isr -- build/examples/infer_loop 3
echo
echo "demo: 2/2: a training loop fed by 3 worker processes, on a SIMULATED CUDA driver:"
echo "demo: build/tests/standin/libcuda.so.1 is the tests' stand-in for libcuda (tests/standin/), not NVIDIA's"
echo "demo: driver: the real driver API's names and signatures, no GPU; its kernels do nothing and its"
echo "demo: synchronizations sleep. The CUDA sections below are real measurements of calls into it."
echo "demo: (the job writes a JSON line to standard output; the report then goes to standard error)"
echo "demo: \$ build/inferscope-bpf -o build/demo-cuda.isr --cuda-lib build/tests/standin/libcuda.so.1 -- /usr/bin/python3 tests/workloads/py_pipeline.py build/tests/standin/libcuda.so.1 input 60"
echo
build/inferscope-bpf -o build/demo-cuda.isr --cuda-lib build/tests/standin/libcuda.so.1 -- \
	/usr/bin/python3 tests/workloads/py_pipeline.py build/tests/standin/libcuda.so.1 input 60
echo
echo "demo: the same recording as a web page and as a Perfetto trace (docs/getting-started.md):"
echo "demo: \$ build/inferscope-bpf analyze build/demo-cuda.isr --format html -o build/demo.html"
build/inferscope-bpf analyze build/demo-cuda.isr --format html -o build/demo.html
echo "demo: \$ build/inferscope-bpf analyze build/demo-cuda.isr --format perfetto -o build/demo.pftrace"
build/inferscope-bpf analyze build/demo-cuda.isr --format perfetto -o build/demo.pftrace
echo "demo: open build/demo.html in a browser; load build/demo.pftrace in https://ui.perfetto.dev (Open trace file)"
