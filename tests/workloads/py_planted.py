# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A launching thread with one planted bottleneck, through ctypes on the
libcuda given as argv[1] (the tests' stand-in, whose cuCtxSynchronize_v2
blocks 10 ms and whose copies and allocations return at once). The report
must name the bottleneck (tests/integration/test_explain.c).

    py_planted.py LIBCUDA MODE

  healthy     100 x (5 launches, a synchronization): the thread waits for
              the "GPU" and nothing else; no finding
  sync_stall  5 x (a launch, a synchronization that waits 250 ms for the
              "GPU", 200 ms of Python before the next launch): the GPU's
              queue is empty 1.0 s after syncs, host work the 250 ms of GPU
              work each sync waited for would have hidden
  gil         thread "launcher" launches and synchronizes (ctypes releases
              the GIL around each call) for 2 s while thread "hog" runs
              pure Python: the launcher waits for the GIL the hog holds
  pageable    100 copies from the GPU into pageable memory (a bytearray),
              10 into pinned memory (cuMemHostAlloc), 10 into a bytearray
              page-locked with cuMemHostRegister_v2 (pinned until its
              cuMemHostUnregister)
  held        allocates 240 MiB of device memory and exits holding it
  timer       100 x (a launch, a 10 ms sleep) on CPU 0, while a child
              process spins on CPU 0: the timer's interrupt that ends each
              sleep interrupts the child, which woke nobody; no finding
              says the loop waited for it

Prints the plan as JSON at the end.
"""
import ctypes
import json
import sys
import threading
import time

cuda = ctypes.CDLL(sys.argv[1])
# PyDLL keeps the GIL across the call: naming a thread plants no GIL wait.
_prctl = ctypes.PyDLL(None).prctl


def set_os_name(name):
    """The thread's name as the kernel (and so the report) sees it."""
    _prctl(15, ctypes.c_char_p(name.encode()), 0, 0, 0)  # PR_SET_NAME
MODE = sys.argv[2]
F = ctypes.c_void_p(0x1000)
ONE = ctypes.c_uint(1)


def launch():
    return cuda.cuLaunchKernel(F, ONE, ONE, ONE, ONE, ONE, ONE, ctypes.c_uint(0), None, None, None)


def sync():
    return cuda.cuCtxSynchronize_v2(None)


# the stand-in's stall stream: cuStreamSynchronize on it blocks 250 ms
STALL_250MS = ctypes.c_void_p(0x57A1100000000 | 250)


def python_work(seconds):
    """seconds of this thread's CPU time: longer in wall time on a busy host"""
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        x += sum(range(200))
    return x


def healthy():
    for _ in range(100):
        for _ in range(5):
            assert launch() == 0
        assert sync() == 0
    return {"syncs": 100, "launches": 500}


def sync_stall():
    for _ in range(5):
        assert launch() == 0
        assert cuda.cuStreamSynchronize(STALL_250MS) == 0
        python_work(0.2)
    assert launch() == 0
    return {"syncs": 5, "stall_s": 1.0}


def gil():
    stop = threading.Event()
    done = {}

    def hog():
        set_os_name("hog")
        x = 0
        while not stop.is_set():
            x += 1

    def launcher():
        set_os_name("launcher")
        n = 0
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            assert launch() == 0
            assert sync() == 0
            n += 1
        done["iterations"] = n

    h = threading.Thread(target=hog, name="hog")
    h.start()
    time.sleep(0.05)
    t = threading.Thread(target=launcher, name="launcher")
    t.start()
    t.join()
    stop.set()
    h.join()
    return done


def pageable():
    dst = bytearray(1 << 20)
    buf = (ctypes.c_char * len(dst)).from_buffer(dst)
    pinned = ctypes.c_void_p()
    cuda.cuMemHostAlloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_uint]
    assert cuda.cuMemHostAlloc(ctypes.byref(pinned), 1 << 20, 0) == 0
    cuda.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t]
    for _ in range(100):
        assert cuda.cuMemcpyDtoH_v2(ctypes.addressof(buf), 0x7f0000000000, 1 << 20) == 0
    for _ in range(10):
        assert cuda.cuMemcpyDtoH_v2(pinned, 0x7f0000000000, 1 << 20) == 0
    registered = bytearray(1 << 20)
    reg = (ctypes.c_char * len(registered)).from_buffer(registered)
    cuda.cuMemHostRegister_v2.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
    cuda.cuMemHostUnregister.argtypes = [ctypes.c_void_p]
    assert cuda.cuMemHostRegister_v2(ctypes.addressof(reg), len(registered), 0) == 0
    for _ in range(10):
        assert cuda.cuMemcpyDtoH_v2(ctypes.addressof(reg), 0x7f0000000000, 1 << 20) == 0
    assert cuda.cuMemHostUnregister(ctypes.addressof(reg)) == 0
    assert launch() == 0
    return {"pageable": 100, "pinned": 10, "registered": 10}


def held():
    ptr = ctypes.c_uint64()
    cuda.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    assert cuda.cuMemAlloc_v2(ctypes.byref(ptr), 240 << 20) == 0
    assert launch() == 0
    return {"held_bytes": 240 << 20}


def timer():
    import os
    import signal
    os.sched_setaffinity(0, {0})
    child = os.fork()
    if child == 0:
        set_os_name("spinner")
        end = time.monotonic() + 30
        while time.monotonic() < end:
            pass
        os._exit(0)
    time.sleep(0.05)
    for _ in range(100):
        assert launch() == 0
        time.sleep(0.01)
    assert launch() == 0
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    return {"sleeps": 100, "spinner": child}


time.sleep(0.3)
plan = {"healthy": healthy, "sync_stall": sync_stall, "gil": gil, "pageable": pageable, "held": held,
        "timer": timer}[MODE]()
time.sleep(0.1)
print(json.dumps(plan), flush=True)
