#!/bin/sh
# Regenerates vmlinux/<arch>/vmlinux.h from the running kernel's BTF.
# CO-RE relocations make the result usable on other kernels; regenerate only
# to pick up types that a newer kernel introduced.
set -eu
arch=${1:-x86}
btf=${BTF:-/sys/kernel/btf/vmlinux}
if [ ! -r "$btf" ]; then
	echo "gen-vmlinux: $btf is not readable: this kernel was built without CONFIG_DEBUG_INFO_BTF" >&2
	exit 1
fi
dir=$(dirname "$0")/$arch
mkdir -p "$dir"
bpftool btf dump file "$btf" format c > "$dir/vmlinux.h.tmp"
mv "$dir/vmlinux.h.tmp" "$dir/vmlinux.h"
echo "wrote $dir/vmlinux.h from $btf"
