# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""CPU time in known proportions: a() 60%, b() 30%, c() 10% of each 100 ms
of the main thread's CPU time (thread_time, so a busy machine changes the
wall time, not the split), for SECONDS (argv[1], default 4), once the
file GO (argv[2], optional) exists. Prints the plan as JSON: the line of
a()'s hot loop, where most samples must land."""
import inspect
import json
import os
import sys
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
GO = sys.argv[2] if len(sys.argv) > 2 else None


def spin(cpu_s):
    end = time.thread_time() + cpu_s
    n = 0
    while time.thread_time() < end:
        n += 1
    return n


def a(cpu_s):
    end = time.thread_time() + cpu_s
    n = 0
    while time.thread_time() < end:  # the hot line of a()
        n += 1
    return n


def b(cpu_s):
    return spin(cpu_s)


def c(cpu_s):
    return spin(cpu_s)


def main():
    src, first = inspect.getsourcelines(a)
    hot = first + next(i for i, l in enumerate(src) if "the hot line" in l)
    while GO and not os.path.exists(GO):
        time.sleep(0.01)
    start = time.thread_time()
    while time.thread_time() - start < SECONDS:
        a(0.060)
        b(0.030)
        c(0.010)
    print(json.dumps({"seconds": SECONDS, "hot_line": hot, "shares": {"a": 0.6, "b": 0.3, "c": 0.1}}),
          flush=True)


main()
