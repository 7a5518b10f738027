#!/usr/bin/env python3
"""A launch-bound PyTorch thread with CPU work between launches: each
iteration spins PAD_US microseconds, then launches x.add_(1.0) on a
1024-element CUDA tensor; synchronizes every 10k launches. Prints the
launch rate (the throughput the overhead budget must protect) and the
number of launches the loop made (plus the 5000 of the warm-up).

    budget.py calibrate          # prints the untraced cost of one launch, us
    budget.py PAD_US SECONDS [--profiler]

--profiler: the same loop under torch.profiler with CUDA activities.
"""
import sys
import time

import torch

x = torch.ones(1024, device="cuda")
for _ in range(5000):  # warm up
    x.add_(1.0)
torch.cuda.synchronize()

if sys.argv[1] == "calibrate":
    best = None
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(20000):
            x.add_(1.0)
        torch.cuda.synchronize()
        us = (time.perf_counter() - t0) / 20000 * 1e6
        best = us if best is None or us < best else best
    print(f"{best:.3f}")
    sys.exit(0)

pad = float(sys.argv[1]) / 1e6
seconds = float(sys.argv[2])
clock = time.perf_counter


def loop():
    launches = 0
    t0 = clock()
    end = t0 + seconds
    while clock() < end:
        for _ in range(10000):
            if pad:
                t = clock()
                while clock() - t < pad:
                    pass
            x.add_(1.0)
        torch.cuda.synchronize()
        launches += 10000
    return launches, clock() - t0


if "--profiler" in sys.argv:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]):
        launches, took = loop()
else:
    launches, took = loop()
print(f"launches_per_s {launches / took:.0f} launches {launches}", flush=True)
