#!/usr/bin/env python3
"""A PyTorch loop that launches at a fixed rate: x.add_(1.0) on a 1024-element
CUDA tensor, in batches of 100 paced to RATE launches/s, for SECONDS.
Prints the rate reached and the process's CPU time per launch (user +
system: the time the trap of a uprobe costs is in it).

    paced_rate.py RATE SECONDS
"""
import sys
import time

import torch

rate = float(sys.argv[1])
seconds = float(sys.argv[2])
x = torch.ones(1024, device="cuda")
for _ in range(2000):
    x.add_(1.0)
torch.cuda.synchronize()
batch = 100
period = batch / rate
launches = 0
cpu0 = time.process_time()
t0 = time.perf_counter()
deadline = t0
while time.perf_counter() - t0 < seconds:
    for _ in range(batch):
        x.add_(1.0)
    launches += batch
    deadline += period
    delay = deadline - time.perf_counter()
    if delay > 0:
        time.sleep(delay)
torch.cuda.synchronize()
wall = time.perf_counter() - t0
cpu = time.process_time() - cpu0
print(f"rate {launches / wall:.0f} cpu_us_per_launch {cpu / launches * 1e6:.3f} cpu_pct {cpu / wall * 100:.2f}",
      flush=True)
