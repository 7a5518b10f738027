#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Runs the kernel-CI suite (inferscope-bpf bench --kci) in a QEMU VM booted
# on a kernel under test, from an initramfs that holds the static binary and
# a static /init (scripts/kci-init.c), nothing else. docs/kernel-ci.md says
# what the kernel must have.
#
#   scripts/kci-vm.sh [options] KERNEL_IMAGE OUTDIR [-- BENCH_ARGS...]
#
#   --binary FILE    the static inferscope-bpf (default build/inferscope-bpf)
#   --init FILE      the static init (default build/kci-init: make build/kci-init)
#   --baseline FILE  compare with this earlier run (bench --baseline inside the VM)
#   --mem MIB        guest memory (default 2048)
#   --cpus N         guest CPUs (default 2)
#   --timeout SEC    give up after SEC seconds (default 1800)
#   --dry-run        build OUTDIR/initramfs.cpio.gz, print the QEMU command, boot nothing
#
# BENCH_ARGS default to "--kci --ktap" (add --quick for the quick subset).
# OUTDIR gets initramfs.cpio.gz, console.log (kernel log, progress),
# kci.ktap (the KTAP), kci.json (the results). Exit status: 0 every test
# passed, 1 a test failed, 2 the suite did not run to its end.
set -eu

usage() {
	sed -n '/^#   scripts\/kci-vm.sh/,/^# passed,/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

die() {
	echo "kci-vm: $*" >&2
	exit 2
}

binary=build/inferscope-bpf
init=build/kci-init
baseline=
mem=2048
cpus=2
timeout_s=1800
dry_run=0
while [ $# -gt 0 ]; do
	case $1 in
	--binary) binary=$2; shift 2 ;;
	--init) init=$2; shift 2 ;;
	--baseline) baseline=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--dry-run) dry_run=1; shift ;;
	-h|--help) usage ;;
	--) break ;;
	-*) die "unknown option $1 (--help lists them)" ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || usage
kernel=$1
out=$2
shift 2
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || set -- --kci --ktap

for n in "$mem" "$cpus" "$timeout_s"; do
	case $n in ''|*[!0-9]*) die "--mem, --cpus and --timeout take whole numbers, not '$n'" ;; esac
done
[ -r "$kernel" ] || die "cannot read the kernel image $kernel"
[ -x "$binary" ] || die "no $binary: build it with make"
file "$binary" 2>/dev/null | grep -q 'statically linked' || \
	echo "kci-vm: $binary does not look static; the initramfs has no libraries" >&2
[ -x "$init" ] || die "no $init: build it with make $init"
[ -z "$baseline" ] || [ -r "$baseline" ] || die "cannot read the baseline $baseline"
command -v cpio >/dev/null || die "cpio is missing (Debian: apt-get install cpio)"
command -v gzip >/dev/null || die "gzip is missing"

mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$binary" "$stage/inferscope-bpf"
cp "$init" "$stage/init"
mkdir "$stage/proc" "$stage/sys" "$stage/dev" "$stage/tmp"
: > "$stage/kci-args"
for a in "$@"; do
	printf '%s\n' "$a" >> "$stage/kci-args"
done
if [ -n "$baseline" ]; then
	cp "$baseline" "$stage/baseline.json"
	printf -- '--baseline\n/baseline.json\n' >> "$stage/kci-args"
fi
(cd "$stage" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out/initramfs.cpio.gz"

if [ -w /dev/kvm ]; then
	accel="-enable-kvm -cpu host"
else
	# Software emulation: minutes to boot and run, figures meaningless
	# (delivery checks still hold).
	accel="-accel tcg -cpu max"
fi
# shellcheck disable=SC2086 # $accel: several options
set -- qemu-system-x86_64 -m "$mem" -smp "$cpus" $accel -kernel "$kernel" -initrd "$out/initramfs.cpio.gz" \
	-append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init" -display none -no-reboot \
	-serial "file:$out/console.log" -serial "file:$out/kci.ktap" -serial "file:$out/kci.json"
if [ "$dry_run" = 1 ]; then
	echo "$*"
	exit 0
fi
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing (Debian: apt-get install qemu-system-x86)"
rm -f "$out/console.log" "$out/kci.ktap" "$out/kci.json"
rc=0
timeout "$timeout_s" "$@" || rc=$?
[ "$rc" -eq 124 ] && echo "kci-vm: the VM ran past ${timeout_s}s and was stopped" >&2
cat "$out/kci.ktap" 2>/dev/null || true
if ! grep -q '^KTAP version 1' "$out/kci.ktap" 2>/dev/null || ! grep -q '^# Totals:' "$out/kci.ktap"; then
	echo "kci-vm: the suite did not run to its end; the console's last lines ($out/console.log):" >&2
	tail -n 30 "$out/console.log" >&2 2>/dev/null || true
	exit 2
fi
grep -q '^# Totals: pass:[0-9]* fail:0 .* error:0$' "$out/kci.ktap" || exit 1
exit 0
