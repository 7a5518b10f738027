#!/usr/bin/env python3
"""PyTorch launches and synchronizations from known lines, for the Python
call sites in the report (tests/gpu/py_stacks.sh):

    py_sites.py ROUNDS

Each round: 2000 x.add_(1.0) from launch_site(), one bf16 matmul, then
torch.cuda.synchronize() from sync_site() (milliseconds of queued work, so
every sync is a stall). Prints the plan as JSON: counts and lines."""
import inspect
import json
import sys
import time

import torch

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 50
LAUNCHES = 2000
x = torch.ones(1 << 20, device="cuda")
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)


def launch_site():
    x.add_(1.0)  # the launch line


def sync_site():
    torch.cuda.synchronize()  # the sync line


def line_of(fn, marker):
    src, first = inspect.getsourcelines(fn)
    return first + next(i for i, l in enumerate(src) if marker in l)


def main():
    for _ in range(200):  # warm up: kernels loaded, allocator primed
        launch_site()
    (a @ a).sum()
    torch.cuda.synchronize()
    time.sleep(1.0)  # the tracer checks the interpreter meanwhile
    for _ in range(ROUNDS):
        for _ in range(LAUNCHES):
            launch_site()
        a @ a
        sync_site()
    time.sleep(1.0)  # the tracer reads the code objects of the last stacks
    print(json.dumps({"rounds": ROUNDS, "launches": ROUNDS * LAUNCHES,
                      "launch_line": line_of(launch_site, "the launch line"),
                      "sync_line": line_of(sync_site, "the sync line")}), flush=True)


main()
