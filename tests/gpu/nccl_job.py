# Two ranks of torch.distributed with the NCCL backend, one GPU each,
# started by tests/gpu/nccl.sh (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT in
# the environment): ITERS all-reduces of a 4 MiB tensor, each after a
# fixed amount of CPU work on the calling thread, then one barrier-free
# synchronize. The late rank's calling thread is pinned to CPU `--cpu`,
# where nccl.sh runs a busy process: its CPU work takes longer, and it is
# the last to arrive at the all-reduces.
import os
import sys
import time

import torch
import torch.distributed as dist

ITERS = int(os.environ.get("NCCL_ITERS", "200"))
WORK = int(os.environ.get("NCCL_WORK", "20000"))   # loop iterations of Python work per all-reduce


def main():
    rank = int(os.environ["RANK"])
    cpu = int(sys.argv[1]) if len(sys.argv) > 1 else -1
    if cpu >= 0:
        os.sched_setaffinity(0, {cpu})
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    x = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(x)                # warm-up: the communicator is set up here at the latest
    torch.cuda.synchronize()
    print(f"rank {rank} ready", flush=True)
    t0 = time.monotonic()
    for _ in range(ITERS):
        s = 0
        for i in range(WORK):
            s += i
        dist.all_reduce(x)
        x.mul_(0.5)
        torch.cuda.synchronize()
    print(f"rank {rank} loop_s {time.monotonic() - t0:.6f}", flush=True)
    dist.destroy_process_group()
    print(f"rank {rank} done {ITERS + 1} all-reduces", flush=True)


main()
