#!/usr/bin/env python3
"""A PyTorch workload that makes a known number of CUDA calls, for exact-count
tests of the tracer on a GPU machine.

    known_counts.py N [--threads]

Set-up (CUDA context, cuBLAS handle, caching allocator pools, kernel
loading) happens first; then it prints "ready" and waits for SIGUSR1, so a
tracer can attach to it while it runs. After the signal it makes, in order:
  N  elementwise launches         x.add_(1.0)             -> cudaLaunchKernel / cuLaunchKernel
  N  matmuls                       torch.mm(a, b)          -> cuLaunchKernelEx (cuBLAS)
  N  host-to-device copies of 1 MiB from pinned memory   -> cuMemcpyHtoDAsync_v2
  N  synchronizations              torch.cuda.synchronize  -> cuCtxSynchronize_v2
  4  allocations of 12, 14, 16 and 18 MiB from an emptied caching allocator
     (above 10 MiB the allocator asks the driver for exactly that) -> cuMemAlloc_v2
With --threads the elementwise launches run on a thread that already
existed when the tracer attached. It prints a JSON line of what it did.
"""
import json
import os
import signal
import sys
import threading

import torch

N = int(sys.argv[1])
THREADED = "--threads" in sys.argv

dev = torch.device("cuda")
x = torch.ones(1024, device=dev)
a = torch.randn(256, 256, device=dev)
b = torch.randn(256, 256, device=dev)
host = torch.empty(1 << 18, dtype=torch.float32).pin_memory()  # 1 MiB
dst = torch.empty(1 << 18, dtype=torch.float32, device=dev)
# Warm every path once so that lazy initialization is over before "ready".
x.add_(1.0)
torch.mm(a, b)
dst.copy_(host, non_blocking=True)
torch.cuda.synchronize()

go = threading.Event()


def elementwise():
    go.wait()
    for _ in range(N):
        x.add_(1.0)


worker = threading.Thread(target=elementwise, name="launcher") if THREADED else None
if worker:
    worker.start()

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print("ready", os.getpid(), flush=True)
signal.sigwait({signal.SIGUSR1})

if worker:
    go.set()
    worker.join()
else:
    for _ in range(N):
        x.add_(1.0)
for _ in range(N):
    torch.mm(a, b)
for _ in range(N):
    dst.copy_(host, non_blocking=True)
for _ in range(N):
    torch.cuda.synchronize()

# Allocations: free the cache, then allocate sizes that each need a new segment.
torch.cuda.empty_cache()
sizes = [12 << 20, 14 << 20, 16 << 20, 18 << 20]
held = [torch.empty(s // 4, dtype=torch.float32, device=dev) for s in sizes]
torch.cuda.synchronize()
print(json.dumps({"n": N, "threads": THREADED, "alloc_sizes": sizes,
                  "allocated": torch.cuda.memory_allocated()}), flush=True)
del held
