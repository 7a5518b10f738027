#!/usr/bin/env python3
"""A job whose GPU is busy part of the time, steadily: each step runs 8
bf16 matrix products (4096 x 4096, a few ms of GPU work), waits for them,
then spends SLEEP_MS on the CPU. For comparing GPU busy time measured in
windows with GPU busy time from full collection (tests/gpu/window_estimate.sh).

    busy_job.py SECONDS [SLEEP_MS]

Prints "ready PID" after the warm-up and "done steps N" at the end.
"""
import os
import sys
import time

import torch

seconds = float(sys.argv[1])
sleep_s = float(sys.argv[2]) / 1e3 if len(sys.argv) > 2 else 0.003
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
for _ in range(20):
    c = a @ b
torch.cuda.synchronize()
print(f"ready {os.getpid()}", flush=True)
t0 = time.monotonic()
steps = 0
while time.monotonic() - t0 < seconds:
    for _ in range(8):
        c = a @ b
    torch.cuda.synchronize()
    time.sleep(sleep_s)
    steps += 1
print(f"done steps {steps}", flush=True)
