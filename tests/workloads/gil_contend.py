# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""GIL contention with a known answer (tests/integration/test_python.c).

A thread named "spinner" runs pure Python until a thread named "waiter" has
done N sleeps of 1 ms. Each time the waiter comes back from a sleep it waits
in PyEval_RestoreThread for the GIL: its take_gil times out after the switch
interval, asks the spinner to drop the GIL, and gets it. The planted GIL
wait of the waiter is therefore about N x INTERVAL (the waiter measures
it: its time in the sleeps beyond 1 ms each, printed as planted_wait_s);
the spinner never calls a blocking function while the waiter runs, so its
own wait is small.

Usage: gil_contend.py [--idle] [GO_FILE]  (waits for GO_FILE to exist
first, so that a tracer attached with -p sees everything). Prints the plan
as JSON. --idle: the spinner sleeps instead of spinning, so nothing
contends for the GIL (a planted wait of 0).
"""
import ctypes
import json
import os
import sys
import threading
import time

N = 20
INTERVAL = 0.05

# PyDLL keeps the GIL across the call: naming a thread plants no GIL wait.
_prctl = ctypes.PyDLL(None).prctl
PR_SET_NAME = 15


def set_os_name(name):
    _prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()), 0, 0, 0)


done = False
IDLE = "--idle" in sys.argv[1:]
ARGS = [a for a in sys.argv[1:] if a != "--idle"]


def spin():
    set_os_name("spinner")
    x = 0
    while not done:
        if IDLE:
            time.sleep(0.005)
        x += 1


waited = 0.0


def wait():
    global done, waited
    set_os_name("waiter")
    for _ in range(N):
        t0 = time.perf_counter()
        time.sleep(0.001)
        waited += time.perf_counter() - t0 - 0.001
    done = True


def main():
    if ARGS:
        deadline = time.monotonic() + 10
        while not os.path.exists(ARGS[0]) and time.monotonic() < deadline:
            time.sleep(0.01)
    sys.setswitchinterval(INTERVAL)
    spinner = threading.Thread(target=spin, name="spinner")
    waiter = threading.Thread(target=wait, name="waiter")
    spinner.start()
    waiter.start()
    waiter.join()
    spinner.join()
    # planted: what the waiter measured (about N x INTERVAL; less on a busy
    # machine, where the GIL is sometimes free when it comes back because
    # the spinner waits for a CPU to take it)
    print(json.dumps({"iterations": N, "interval_s": INTERVAL, "designed_wait_s": N * INTERVAL,
                      "planted_wait_s": 0 if IDLE else round(waited, 6)}), flush=True)


main()
