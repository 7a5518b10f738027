#!/bin/bash
# The GPU's PCIe link in the host information and pcie_saturation, on the
# GPU machine, from the repository root, with a prebuilt static
# build/inferscope-bpf and build/libinferscope_cupti.so:
#   tests/gpu/pcie.sh OUTDIR
# 1. the recording's host information names every NVIDIA GPU with the PCIe
#    link nvidia-smi reports (maximum generation and width) and its NUMA
#    node as sysfs says;
# 2. pinned host-to-device copies back to back for 4 s (--gpu): a
#    pcie_saturation finding whose saturated bandwidth is within 10% of what
#    CUDA events measured and at least 80% of the link's, its cost at least
#    half the copying time;
# 3. the same copies from pageable memory: pageable_memcpy, and no
#    pcie_saturation unless they too ran at the link's limit.
# Prints PASS/FAIL lines and "pcie.sh: all passed" on success.
set -u
OUT=${1:?usage: pcie.sh OUTDIR}
PY=${PY:-/opt/torch/.venv/bin/python3}
T=build/inferscope-bpf
B=$(realpath build/libinferscope_cupti.so)
mkdir -p "$OUT"
fail=0
# shellcheck source=tests/gpu/common.sh
. "$(dirname "$0")/common.sh"
{ [ -x "$T" ] && [ -f "$B" ]; } || { echo "FAIL build/inferscope-bpf or build/libinferscope_cupti.so missing"; exit 1; }
CUDA_LIB_OPT=()
[ -e /usr/local/nvidia/lib64/libcuda.so.1 ] && CUDA_LIB_OPT=(--cuda-lib /usr/local/nvidia/lib64/libcuda.so.1)

for mode in pinned pageable; do
	$T record -q -o "$OUT/$mode.isr" "${CUDA_LIB_OPT[@]}" --gpu --cupti-bridge "$B" -- \
		"$PY" tests/gpu/pcie_copies.py "$mode" 4 > "$OUT/$mode.out" 2> "$OUT/$mode.err"
	echo "$mode: tracer exit $?; $(cat "$OUT/$mode.out")"
	$T analyze "$OUT/$mode.isr" --format json -o "$OUT/$mode.json"
	$T analyze "$OUT/$mode.isr" > "$OUT/$mode.md"
done

# 1. the host information against nvidia-smi and sysfs
grep -E '^- \*\*(GPUs|NUMA)' "$OUT/pinned.md"
nvidia-smi --query-gpu=pci.bus_id,pcie.link.gen.max,pcie.link.width.max,pcie.link.gen.current,pcie.link.width.current \
	--format=csv,noheader | tee "$OUT/nvidia-smi.csv"
while IFS=, read -r bus gen width _ _; do
	addr=$(echo "$bus" | tr 'A-F' 'a-f' | sed 's/^0000\(....:\)/\1/')
	addr=${addr: -12}
	sel="[g for g in d['recording']['host']['gpus'] if g['pci_address']=='$addr']"
	node=$(cat "/sys/bus/pci/devices/$addr/numa_node" 2>/dev/null)
	echo "GPU $addr: recorded $(get "$OUT/pinned.json" "$sel"); nvidia-smi max Gen$gen x$width; sysfs numa_node $node"
	if [ "$(get "$OUT/pinned.json" "len($sel)")" != 1 ]; then
		echo "FAIL GPU $addr is not in the host information"
		fail=1
		continue
	fi
	check "GPU $addr link generation (the best both ends support)" \
		"$(get "$OUT/pinned.json" "${sel}[0]['pcie']['generation']")" "$(echo "$gen" | tr -d ' ')"
	check "GPU $addr link width" "$(get "$OUT/pinned.json" "${sel}[0]['pcie']['width'] or ${sel}[0]['pcie']['max_width']")" \
		"$(echo "$width" | tr -d ' ')"
	check "GPU $addr NUMA node" "$(get "$OUT/pinned.json" "${sel}[0]['numa_node']")" \
		"$([ "$node" -ge 0 ] 2>/dev/null && echo "$node" || echo None)"
done < "$OUT/nvidia-smi.csv"

# 2. pinned copies saturate the link
finding="([f for f in d['findings'] if f['rule']=='pcie_saturation'] or [None])[0]"
events=$(get "$OUT/pinned.out" "d['gbps']")
copy_s=$(get "$OUT/pinned.out" "d['gpu_s']")
sat=$(get "$OUT/pinned.json" "${finding}['evidence']['host_to_device']['saturated_gbps'] if $finding else 0")
link=$(get "$OUT/pinned.json" "${finding}['evidence']['link_gbps'] if $finding else 0")
cost=$(get "$OUT/pinned.json" "${finding}['cost_s'] if $finding else 0")
echo "pinned: CUDA events $events GB/s; finding: saturated $sat GB/s of a $link GB/s link, cost $cost s of $copy_s s copying"
echo "pinned: not judged $(get "$OUT/pinned.json" "d['not_judged']")"
if $PY -c "import sys; s, e, l, c, t = $sat, $events, $link, $cost, $copy_s; sys.exit(0 if s and abs(s - e) <= 0.1 * e and s >= 0.8 * l and c >= 0.5 * t else 1)"; then
	echo "PASS pcie_saturation on pinned copies"
else
	echo "FAIL pcie_saturation on pinned copies"
	fail=1
fi

# 3. pageable copies are pageable_memcpy
n=$(get "$OUT/pageable.json" "len([f for f in d['findings'] if f['rule']=='pageable_memcpy'])")
check "pageable_memcpy findings on pageable copies" "$n" 1
echo "pageable: findings $(get "$OUT/pageable.json" "[(f['rule'], round(f['cost_s'], 3)) for f in d['findings']]")"

[ $fail -eq 0 ] && echo "pcie.sh: all passed"
exit $fail
