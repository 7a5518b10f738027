# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Host-to-device copies of a 256 MiB tensor, back to back, for SECONDS:
the PCIe link is the limit (tests/gpu/pcie.sh).

    pcie_copies.py pinned|pageable SECONDS

pinned: from page-locked memory, as fast as the link goes; pageable: from
ordinary memory, staged by the driver. Prints the copies, bytes and the
bandwidth CUDA events measured, as JSON.
"""
import json
import sys
import time

import torch

MODE, SECONDS = sys.argv[1], float(sys.argv[2])
src = torch.empty(256 << 20, dtype=torch.uint8, pin_memory=(MODE == "pinned"))
dst = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
dst.copy_(src)
torch.cuda.synchronize()
copies, gpu_s = 0, 0.0
end = time.monotonic() + SECONDS
while time.monotonic() < end:
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    dst.copy_(src, non_blocking=(MODE == "pinned"))
    b.record()
    b.synchronize()
    gpu_s += a.elapsed_time(b) / 1e3
    copies += 1
print(json.dumps({"mode": MODE, "copies": copies, "bytes": copies * (256 << 20), "gpu_s": gpu_s,
                  "gbps": copies * (256 << 20) / gpu_s / 1e9}), flush=True)
