# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""CUPTI attached and detached over and over under a launch-bound PyTorch
loop (tests/gpu/cupti_detach.c does the cycles on a thread of its own):

  python3 cupti_detach.py LIB VARIANT SECONDS WINDOW_MS GAP_MS

The loop: x.add_(1.0) on a 1024-element CUDA tensor, synchronized every
2000 launches, its value checked at each synchronization (every launch
ran, exactly once). Prints one line: "RESULT variant V cycles N ..." with
the launches made and whether every check held; a crash prints the
library's report and kills the process (exit status 128 + signal).
"""
import ctypes
import sys
import time

import torch

lib, variant, seconds, window_ms, gap_ms = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), \
    int(sys.argv[5])
cd = ctypes.CDLL(lib)
x = torch.zeros(1024, device="cuda")
for _ in range(2000):
    x.add_(1.0)
torch.cuda.synchronize()
expect = 2000.0
assert cd.cd_start(variant, window_ms, gap_ms, 0) == 0, "cd_start"
bad = 0
launches = 0
t0 = time.perf_counter()
while time.perf_counter() - t0 < seconds:
    for _ in range(2000):
        x.add_(1.0)
    torch.cuda.synchronize()
    launches += 2000
    expect += 2000
    if x[0].item() != expect or x[-1].item() != expect:
        bad += 1
        expect = x[0].item()
took = time.perf_counter() - t0
st = (ctypes.c_double * 9)()
cd.cd_stop(st)
print(f"RESULT torch variant {variant} cycles {st[0]:.0f} launches {launches} rate {launches / took:.0f} "
      f"checks_failed {bad} records {st[1]:.0f} drain_ms median {st[2]:.2f} max {st[3]:.2f} "
      f"finalize_ms median {st[4]:.2f} max {st[5]:.2f} forced_incomplete {st[6]:.0f} attach_ms {st[7]:.2f} "
      f"error {st[8]:.0f}", flush=True)
