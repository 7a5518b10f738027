#!/usr/bin/env python3
"""A launch-bound PyTorch loop (x.add_(1.0) on a 1024-element CUDA tensor,
a synchronization every 2000 launches) that times every block of 500
launches: for a tracer to attach while it runs, and for
tests/gpu/hot_ablation.py to tell the blocks whose launches the tracer's
hot path recorded from those it did not.

    launch_blocks.py SECONDS OUTFILE

Prints "ready PID" after the warm-up; runs SECONDS; then writes OUTFILE,
a line a block: "START_NS END_NS CPU_NS LAUNCHES SYNC" (CLOCK_MONOTONIC,
the BPF programs' clock; the thread's CPU time; SYNC 1: the block ended
with the synchronization), and prints "done BLOCKS".
"""
import os
import sys
import time

import torch

seconds = float(sys.argv[1])
x = torch.zeros(1024, device="cuda")
for _ in range(5000):  # warm up
    x.add_(1.0)
torch.cuda.synchronize()
print(f"ready {os.getpid()}", flush=True)
BLOCK, SYNC_EVERY = 500, 4
blocks = []
end = time.monotonic_ns() + int(seconds * 1e9)
i = 0
while True:
    t0, c0 = time.monotonic_ns(), time.thread_time_ns()
    if t0 >= end:
        break
    for _ in range(BLOCK):
        x.add_(1.0)
    i += 1
    sync = i % SYNC_EVERY == 0
    if sync:
        torch.cuda.synchronize()
    blocks.append((t0, time.monotonic_ns(), time.thread_time_ns() - c0, int(sync)))
with open(sys.argv[2], "w") as f:
    for t0, t1, cpu, sync in blocks:
        f.write(f"{t0} {t1} {cpu} {BLOCK} {sync}\n")
print(f"done {len(blocks)}", flush=True)
