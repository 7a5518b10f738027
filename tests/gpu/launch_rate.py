#!/usr/bin/env python3
"""Launch-bound PyTorch loop: x.add_(1.0) on a 1024-element CUDA tensor,
synchronizing every 20k launches. Prints the launch rate of each round.

    launch_rate.py SECONDS [--profiler]

--profiler: the same loop under torch.profiler with CUDA activities, the
comparison users make.
"""
import sys
import time

import torch

seconds = float(sys.argv[1])
x = torch.ones(1024, device="cuda")
for _ in range(2000):  # warm up
    x.add_(1.0)
torch.cuda.synchronize()


def loop():
    end = time.perf_counter() + seconds
    launches = 0
    t0 = time.perf_counter()
    while time.perf_counter() < end:
        for _ in range(20000):
            x.add_(1.0)
        torch.cuda.synchronize()
        launches += 20000
    return launches / (time.perf_counter() - t0)


if "--profiler" in sys.argv:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]):
        rate = loop()
else:
    rate = loop()
print(f"launches_per_s {rate:.0f}", flush=True)
