#!/bin/sh
# `make demo`: trace the bundled example workload and print the report.
set -eu
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: loading BPF programs needs root: run 'sudo make demo'" >&2
	exit 1
fi
mkdir -p build
echo "demo: tracing build/examples/infer_loop (a stand-in inference loop) for 3 s"
echo "demo: \$ build/inferscope-bpf -o build/demo.isr -- build/examples/infer_loop 3"
echo
exec build/inferscope-bpf -o build/demo.isr -- build/examples/infer_loop 3
