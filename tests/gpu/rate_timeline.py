#!/usr/bin/env python3
"""A launch-bound PyTorch loop (x.add_(1.0), synchronized every 2000
launches, the tensor's value checked at each synchronization) that prints
its launch rate every half second, with the time and the loop thread's
CPU time per launch:

    rate_timeline.py SECONDS

Prints "ready PID" after the warm-up, then "t SECONDS rate LAUNCHES_PER_S
cpu_us CPU_US_PER_LAUNCH" lines, for a tracer to attach and detach while it runs (tests/gpu/detach.sh,
tests/gpu/detach_cycles.sh), and at the end "done launches N checks_failed K"
(K: synchronizations after which the tensor did not hold exactly the
launches made). Exit status 1 when a check failed.
"""
import os
import sys
import time

import torch

seconds = float(sys.argv[1])
# float64: exact to 2^53 launches (float32 stops counting at 2^24, 2.2
# minutes of this loop)
x = torch.zeros(1024, device="cuda", dtype=torch.float64)
for _ in range(5000):
    x.add_(1.0)
torch.cuda.synchronize()
expect = 5000.0
print(f"ready {os.getpid()}", flush=True)
t0 = time.monotonic()
mark, n, total, failed = t0, 0, 0, 0
cpu_mark = time.thread_time()
while time.monotonic() - t0 < seconds:
    for _ in range(2000):
        x.add_(1.0)
    torch.cuda.synchronize()
    n += 2000
    total += 2000
    expect += 2000
    if x[0].item() != expect or x[-1].item() != expect:
        failed += 1
        expect = x[0].item()
    now = time.monotonic()
    if now - mark >= 0.5:
        cpu = time.thread_time()
        print(f"t {now - t0:.2f} rate {n / (now - mark):.0f} cpu_us {1e6 * (cpu - cpu_mark) / n:.4f}", flush=True)
        mark, n, cpu_mark = now, 0, cpu
print(f"done launches {total} checks_failed {failed}", flush=True)
sys.exit(1 if failed else 0)
