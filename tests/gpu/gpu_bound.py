#!/usr/bin/env python3
"""A GPU-bound PyTorch loop: 8192x8192 bf16 matmuls, synchronizing every 20.
Prints matmuls/s.

    gpu_bound.py SECONDS [--profiler]
"""
import sys
import time

import torch

seconds = float(sys.argv[1])
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
for _ in range(5):
    a @ b
torch.cuda.synchronize()


def loop():
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(20):
            a @ b
        torch.cuda.synchronize()
        n += 20
    return n / (time.perf_counter() - t0)


if "--profiler" in sys.argv:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]):
        rate = loop()
else:
    rate = loop()
print(f"matmuls_per_s {rate:.2f}", flush=True)
