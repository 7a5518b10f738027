#!/usr/bin/env python3
"""A PyTorch job with planted bottlenecks, for tests/gpu/explain.sh.

    planted.py planted   five bottlenecks, one after the other
    planted.py healthy   a GPU-bound loop: no finding expected

Set-up (CUDA context, cuBLAS, caching allocator pools) happens first; then
it prints "ready PID" and waits for SIGUSR1, so a tracer attaches to a job
that already runs. After the signal, "planted" runs, each between stretches
of GPU-bound work (a chain of matmuls that keeps the GPU busy):

  sync_stall    20 x (50 ms of matmuls queued, torch.cuda.synchronize(),
                40 ms of Python before the next launch): the GPU's queue is
                empty 0.8 s, host work that would have overlapped the GPU
                work each synchronization waited for
  python_idle   a short kernel, then 0.4 s of Python (no synchronization):
                the GPU idles 0.4 s behind the launching thread
  gil           for 2.2 s a second thread runs pure Python while the
                launching thread launches small kernels (each launch
                releases and retakes the GIL): it waits for the GIL
  pageable      100 device-to-host copies into pageable memory (.cpu())
  held          240 MiB allocated and still held when the process exits

It prints a JSON line with the plan (the planted times) at the end and
exits without freeing the 240 MiB.
"""
import json
import os
import signal
import sys
import threading
import time

import torch

MODE = sys.argv[1] if len(sys.argv) > 1 else "planted"
dev = torch.device("cuda")
a = torch.randn(2048, 2048, device=dev)
b = torch.randn(2048, 2048, device=dev)
small = torch.ones(1024, device=dev)
big = torch.empty(1 << 22, device=dev)  # 16 MiB to copy out
torch.mm(a, b)
small.add_(1.0)
big.cpu()
torch.cuda.synchronize()


def busy_gpu(seconds):
    """GPU-bound: matmuls queued ahead, one synchronization at the end."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(20):
            torch.mm(a, b)
        torch.cuda.synchronize()


def python_work(seconds):
    """seconds of this thread's CPU time"""
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        x += sum(range(300))
    return x


def mm_seconds():
    """GPU time of one torch.mm(a, b)"""
    t = time.monotonic()
    for _ in range(20):
        torch.mm(a, b)
    torch.cuda.synchronize()
    return (time.monotonic() - t) / 20


def sync_stall():
    n = max(1, round(0.05 / mm_seconds()))
    for _ in range(20):
        for _ in range(n):
            torch.mm(a, b)
        torch.cuda.synchronize()
        python_work(0.04)
    torch.mm(a, b)


def python_idle():
    small.add_(1.0)
    python_work(0.4)
    small.add_(1.0)


def gil():
    stop = threading.Event()

    def hog():
        x = 0
        while not stop.is_set():
            x += 1

    h = threading.Thread(target=hog, name="hog")
    h.start()
    end = time.monotonic() + 2.2
    while time.monotonic() < end:
        small.add_(1.0)
    stop.set()
    h.join()
    torch.cuda.synchronize()


def pageable():
    for _ in range(100):
        big.cpu()


signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print("ready", os.getpid(), flush=True)
signal.sigwait({signal.SIGUSR1})

plan = {"mode": MODE}
if MODE == "healthy":
    busy_gpu(4.0)
else:
    busy_gpu(0.5)
    sync_stall()
    busy_gpu(0.5)
    python_idle()
    busy_gpu(0.5)
    gil()
    busy_gpu(0.5)
    pageable()
    busy_gpu(0.5)
    held = torch.empty(60 << 20, device=dev)  # 240 MiB, never freed
    torch.cuda.synchronize()
    plan.update({"sync_stall_s": 0.8, "python_idle_s": 0.4, "gil_s": 2.2, "pageable_copies": 100,
                 "held_bytes": 240 << 20})
print(json.dumps(plan), flush=True)
os._exit(0)
