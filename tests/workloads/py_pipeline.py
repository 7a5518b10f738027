# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A training loop fed by worker processes, as a PyTorch DataLoader feeds
one, on the stand-in libcuda given as argv[1] (ctypes): WORKERS processes
make batches in Python (make_batch: BATCH_MS of CPU work each) and put them
on a multiprocessing queue; the loop takes one per step, copies it to the
"GPU" (cuMemcpyHtoDAsync_v2), launches LAUNCHES kernels and synchronizes on
the stand-in's stall stream, which blocks STEP_MS (the GPU's work).

  py_pipeline.py LIBCUDA MODE STEPS

MODE input: the loop takes batches from the workers' queue: it is
input-bound (the workers make a batch every BATCH_MS / WORKERS, the step
takes STEP_MS). MODE relay: a thread of the loop's process moves the
batches from the workers' queue to a queue of its own, which the loop
takes them from (as PyTorch's pin-memory thread does): the loop's waits
are ended by that thread, whose waits are ended by the workers. MODE
cached: the ablation: one batch made once, reused every step (no input
pipeline). Prints JSON: the steps, the seconds they took, the seconds the
loop waited for batches, its thread id, the workers' pids."""
import ctypes
import json
import multiprocessing as mp
import os
import queue
import sys
import threading
import time

WORKERS = 3
BATCH_MS = 30
STEP_MS = 2
LAUNCHES = 8


def make_batch(i):
    end = time.thread_time() + BATCH_MS / 1000.0
    x = i
    while time.thread_time() < end:  # the batch line
        x = (x * 1103515245 + 12345) % 2147483648
    return bytes(64)


def worker(q, n, wid, nworkers):
    for i in range(wid, n, nworkers):
        q.put(make_batch(i))


def relay(src, dst, n):
    for _ in range(n):
        dst.put(src.get())


def main():
    cuda = ctypes.CDLL(sys.argv[1])
    mode, steps = sys.argv[2], int(sys.argv[3])
    stall = ctypes.c_void_p(0x57A1100000000 | STEP_MS)
    f = ctypes.c_void_p(0x1000)
    one = ctypes.c_uint(1)
    src = ctypes.create_string_buffer(64)
    time.sleep(1.0)  # the tracer checks the interpreter before stacks are taken
    procs = []
    if mode in ("input", "relay"):
        q = mp.Queue(maxsize=4)
        procs = [mp.Process(target=worker, args=(q, steps, w, WORKERS), name="pipeline_worker")
                 for w in range(WORKERS)]
        for p in procs:
            p.start()
        take = q.get
        if mode == "relay":
            local = queue.Queue(maxsize=2)
            threading.Thread(target=relay, args=(q, local, steps), name="relay", daemon=True).start()
            take = local.get
    else:
        batch = make_batch(0)
        take = lambda: batch
    waited = 0.0
    t0 = time.perf_counter()
    for _ in range(steps):
        w0 = time.perf_counter()
        take()  # the input line
        waited += time.perf_counter() - w0
        assert cuda.cuMemcpyHtoDAsync_v2(ctypes.c_uint64(0x20000), src, ctypes.c_size_t(64), None) == 0
        for _ in range(LAUNCHES):
            assert cuda.cuLaunchKernel(f, one, one, one, one, one, one, ctypes.c_uint(0), None, None, None) == 0
        assert cuda.cuStreamSynchronize(stall) == 0
    seconds = time.perf_counter() - t0
    for p in procs:
        p.join()
    time.sleep(0.5)  # the tracer reads the code objects the stacks name
    print(json.dumps({"mode": mode, "steps": steps, "seconds": seconds, "waited": waited,
                      "tid": threading.get_native_id(), "workers": [p.pid for p in procs]}), flush=True)


if __name__ == "__main__":
    main()
