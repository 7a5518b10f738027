#!/usr/bin/env python3
"""A launch-bound PyTorch loop (x.add_(1.0), synchronized every 2000
launches) that prints its launch rate every half second, with the time:

    rate_timeline.py SECONDS

Prints "ready PID" after the warm-up, then "t SECONDS rate LAUNCHES_PER_S"
lines, for a tracer to attach and detach while it runs (tests/gpu/detach.sh).
"""
import os
import sys
import time

import torch

seconds = float(sys.argv[1])
x = torch.ones(1024, device="cuda")
for _ in range(5000):
    x.add_(1.0)
torch.cuda.synchronize()
print(f"ready {os.getpid()}", flush=True)
t0 = time.monotonic()
mark, n = t0, 0
while time.monotonic() - t0 < seconds:
    for _ in range(2000):
        x.add_(1.0)
    torch.cuda.synchronize()
    n += 2000
    now = time.monotonic()
    if now - mark >= 0.5:
        print(f"t {now - t0:.2f} rate {n / (now - mark):.0f}", flush=True)
        mark, n = now, 0
