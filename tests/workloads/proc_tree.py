# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A parent whose workers run before a tracer attaches: a multiprocessing
pool of 2 (fork start method), one process of the spawn start method, and
2 processes of the stand-in CUDA workload (argv[1]: cuda_calls, which wait
for SIGUSR1 before calling anything).

Prints one JSON line once every worker runs: its pid and theirs. Then waits
for SIGUSR1 (the tracer is attached), has the pool burn CPU (each worker
about 0.2 s), lets the CUDA workloads make their calls, tells the spawned
process to end, and exits once all are done."""
import ctypes
import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1


def die_with_parent():
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def burn(seconds):
    end = time.process_time() + seconds
    n = 0
    while time.process_time() < end:
        n += 1
    return os.getpid()


def spawned_worker(conn):
    conn.send(os.getpid())
    conn.recv()     # until the parent says it is done


def main():
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    pool = mp.get_context("fork").Pool(2)
    pool.map(burn, [0.0] * 8)    # the workers run
    pool_pids = sorted(p.pid for p in pool._pool)
    spawn = mp.get_context("spawn")
    here, there = spawn.Pipe()
    worker = spawn.Process(target=spawned_worker, args=(there,))
    worker.start()
    spawn_pid = here.recv()
    cuda = [subprocess.Popen([sys.argv[1], "--wait-signal"], stdout=subprocess.PIPE,
                             preexec_fn=die_with_parent) for _ in range(2)]
    for p in cuda:
        assert p.stdout.readline() == b"ready\n"
    print(json.dumps({"parent": os.getpid(), "pool": pool_pids, "spawn": spawn_pid,
                      "cuda": [p.pid for p in cuda]}), flush=True)
    signal.sigwait([signal.SIGUSR1])
    pool.map(burn, [0.1] * 4)
    for p in cuda:
        p.send_signal(signal.SIGUSR1)
    for p in cuda:
        assert p.stdout.readline() == b"done\n"
        p.send_signal(signal.SIGUSR1)
        assert p.wait() == 0
    here.send("done")
    worker.join()
    pool.close()
    pool.join()


if __name__ == "__main__":
    main()
