# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""CUDA calls from known Python lines, through ctypes on the libcuda given
as argv[1] (the tests' stand-in): SYNCS cuStreamSynchronize calls (the
stand-in blocks 5 ms in each) from sync_here() and LAUNCHES cuLaunchKernel
calls from launch_here(). Prints the plan as JSON: the calls and the lines
they come from. It waits 1.5 s before the calls (stacks are captured once
the tracer has checked the initialized interpreter, which it polls for every
5 ms; a loaded machine slows that) and 0.5 s after them (the tracer reads
the code objects a stack names from the live process)."""
import ctypes
import inspect
import json
import sys
import time

SYNCS = 200
LAUNCHES = 640

cuda = ctypes.CDLL(sys.argv[1])


def sync_here():
    return cuda.cuStreamSynchronize(None)  # the sync line


def launch_here(f):
    one = ctypes.c_uint(1)
    return cuda.cuLaunchKernel(f, one, one, one, one, one, one, ctypes.c_uint(0), None, None, None)  # the launch line


def line_of(fn, marker):
    src, first = inspect.getsourcelines(fn)
    return first + next(i for i, l in enumerate(src) if marker in l)


def main():
    f = ctypes.c_void_p(0x1000)
    time.sleep(1.5)
    for _ in range(SYNCS):
        assert sync_here() == 0
    for _ in range(LAUNCHES):
        assert launch_here(f) == 0
    time.sleep(0.5)
    print(json.dumps({"syncs": SYNCS, "sync_line": line_of(sync_here, "the sync line"),
                      "launches": LAUNCHES, "launch_line": line_of(launch_here, "the launch line")}), flush=True)


main()
