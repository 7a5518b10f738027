# Two ranks of torch.distributed with the NCCL backend, one GPU each,
# started by tests/gpu/common.sh's nccl_setup launcher (RANK, WORLD_SIZE,
# MASTER_ADDR, MASTER_PORT in the environment). Each of ITERS steps:
# NCCL_GPU_MS of matrix products launched, NCCL_WORK loop iterations of
# Python on the calling thread while the GPU runs them, an all-reduce of
# a 4 MiB tensor, a synchronize. Without a straggler the job is GPU-bound:
# the Python work hides behind the GPU's. The late rank's calling thread is
# pinned (after the set-up, it alone) to the CPU its argument names, where
# the scripts run a busy process: when its Python work waits for that CPU
# long enough, it comes to the all-reduce after the other rank's GPU has
# run out of work.
import os
import sys
import time

import torch
import torch.distributed as dist

ITERS = int(os.environ.get("NCCL_ITERS", "200"))
WORK = int(os.environ.get("NCCL_WORK", "30000"))        # loop iterations of Python work per step
GPU_MS = float(os.environ.get("NCCL_GPU_MS", "4"))       # GPU work per step


def main():
    rank = int(os.environ["RANK"])
    cpu = int(sys.argv[1]) if len(sys.argv) > 1 else -1
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    x = torch.ones(1 << 20, device="cuda")
    a = torch.randn(2048, 2048, device="cuda")
    dist.all_reduce(x)                # warm-up: the communicator is set up here at the latest
    # as many products as take GPU_MS, the same on every rank (the most asked)
    for _ in range(3):
        b = a @ a
    torch.cuda.synchronize()
    t = time.monotonic()
    for _ in range(20):
        b = a @ a
    torch.cuda.synchronize()
    n = torch.tensor([max(1, round(GPU_MS / 1e3 / ((time.monotonic() - t) / 20)))], device="cuda")
    dist.all_reduce(n, op=dist.ReduceOp.MAX)
    products = int(n.item())
    # the calling thread alone pinned, after the set-up: the threads made
    # before (CUDA's, NCCL's, a tracer's) keep every CPU
    if cpu >= 0:
        os.sched_setaffinity(0, {cpu})
    print(f"rank {rank} ready, {products} products per step", flush=True)
    t0 = time.monotonic()
    for _ in range(ITERS):
        for _ in range(products):
            b = a @ a
        s = 0
        for i in range(WORK):
            s += i
        dist.all_reduce(x)
        x.mul_(0.5)
        torch.cuda.synchronize()
    print(f"rank {rank} loop_s {time.monotonic() - t0:.6f}", flush=True)
    dist.destroy_process_group()
    print(f"rank {rank} done {ITERS + 2} all-reduces", flush=True)
    del b


main()
