# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What CUPTI costs a launching thread, without the tracer (tests/gpu/cupti_cost.c).

  python3 cupti_cost.py LIB {c|torch} SECONDS ROUNDS [all|seq|seq-control|residual:MASK]

all (the default):
1. per-kernel time with each set of activity kinds enabled (empty kernels or
   x.add_(1.0), synchronized every 256), interleaved rounds, medians;
2. launches/s over SECONDS with CUPTI off, on, and switched on and off by a
   second thread (on/off periods below): the launches a toggled run lost
   against the time-weighted mix of the steady rates, per on/off cycle.
seq: the cost per launch before CUPTI, with its callbacks registered, while
   collecting, after one and after 20 more on/off cycles, after
   cuptiFinalize, collecting again and off again (seq-control: the same
   measurements with no CUPTI call, for the machine's drift).
residual:MASK: before, while and after one on/off cycle of the kinds in MASK.
"""
import ctypes
import statistics
import sys
import time

lib_path, mode, seconds, rounds = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
what = sys.argv[5] if len(sys.argv) > 5 else "all"
cc = ctypes.CDLL(lib_path)
cc.cc_finalize.restype = ctypes.c_longlong
cc.cc_reinit.restype = ctypes.c_longlong
cc.cc_enable.restype = ctypes.c_longlong
cc.cc_disable.restype = ctypes.c_longlong
cc.cc_launch.restype = ctypes.c_double
cc.cc_records.restype = ctypes.c_ulonglong
BATCH = 256

if mode == "torch":
    import torch
    x = torch.zeros(1024, device="cuda")
    torch.cuda.synchronize()

    def run_n(n):
        t0 = time.perf_counter()
        for i in range(n):
            x.add_(1.0)
            if (i + 1) % BATCH == 0:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
        return time.perf_counter() - t0
else:
    assert cc.cc_kernel_init() == 0, "cc_kernel_init"

    def run_n(n):
        return cc.cc_launch(n, BATCH)

run_n(2000)  # warm up
N = 20000


def seq(control, mask=None):
    """Per-launch cost before CUPTI, after its set-up, after one on/off
    cycle, after 20 more, after cuptiFinalize, and after a second set-up:
    does a process pay for CUPTI once collection is off again? A control
    run makes the same measurements with no CUPTI call at all."""
    import threading

    def measure(label, k=5):
        v = sorted(run_n(N) / N * 1e6 for _ in range(k))
        print(f"SEQ {mode} {'control' if control else 'cupti'} {label:28s} median {v[len(v) // 2]:.3f} us/launch "
              f"[{v[0]:.3f}-{v[-1]:.3f}]", flush=True)

    measure("before set-up")
    if not control:
        assert cc.cc_init() == 0
    measure("callbacks registered")
    if not control:
        cc.cc_enable(ALL)
    measure("collecting")
    if not control:
        cc.cc_disable(ALL)
    measure("after 1 on/off cycle")
    if not control:
        cc.cc_toggler_start(50, 50, ALL)
        run_n(N * 10)
        st = (ctypes.c_double * 6)()
        cc.cc_toggler_stop(st)
        print(f"  {st[0]:.0f} more cycles", flush=True)
    else:
        run_n(N * 10)
    measure("after 20+ cycles")
    if not control:
        res = []
        t = threading.Thread(target=lambda: res.append(cc.cc_finalize()))
        t.start()
        while t.is_alive():
            run_n(BATCH)
        t.join()
        print(f"  cuptiFinalize: {res[0] / 1e6:.2f} ms", flush=True)
    measure("after cuptiFinalize")
    if not control:
        t0 = time.perf_counter()
        r = cc.cc_reinit()
        en = cc.cc_enable(ALL)
        print(f"  set-up again: {r / 1e6:.2f} ms, enable {en / 1e6:.2f} ms (wall {(time.perf_counter() - t0) * 1e3:.1f} ms)",
              flush=True)
    measure("collecting again")
    if not control:
        cc.cc_disable(ALL)
    measure("off again")


ALL = 63
if what.startswith("residual:"):
    # one on/off cycle of the given kinds: the cost per launch before,
    # while collecting, and after (disabled, CUPTI still attached)
    m = int(what.split(":")[1])

    def med(label):
        v = sorted(run_n(N) / N * 1e6 for _ in range(5))
        print(f"RESIDUAL {mode} mask {m:2d} {label:12s} {v[2]:.3f} us/launch [{v[0]:.3f}-{v[-1]:.3f}]", flush=True)

    assert cc.cc_init() == 0
    med("before")
    cc.cc_enable(m)
    med("collecting")
    cc.cc_disable(m)
    med("after")
    sys.exit(0)
if what in ("seq", "seq-control"):
    for r in range(rounds):
        seq(what == "seq-control")
    sys.exit(0)
assert cc.cc_init() == 0, "cc_init"

masks = {"none": 0, "kernel": 1, "kernel+copy+memset+sync": 15, "kernel+driver": 17,
         "kernel+runtime": 33, "kernel+driver+runtime": 49, "all": ALL}
per = {k: [] for k in masks}
for r in range(rounds):
    for name, m in masks.items():
        en = cc.cc_enable(m) if m else 0
        t = run_n(N)
        dis = cc.cc_disable(m) if m else 0
        per[name].append(t / N * 1e6)
        print(f"round {r} {name}: {t / N * 1e6:.3f} us/launch (enable {en / 1e6:.2f} ms, disable {dis / 1e6:.2f} ms)",
              flush=True)
base = statistics.median(per["none"])
for name, v in per.items():
    m = statistics.median(v)
    print(f"KINDS {mode} {name:26s} {m:7.3f} us/launch ({m - base:+.3f}) [{min(v):.3f}-{max(v):.3f}]", flush=True)


def rate_for(sec):
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < sec:
        run_n(BATCH * 10)
        n += BATCH * 10
    return n / (time.perf_counter() - t0)


toggles = [(500, 500), (100, 100), (1000, 4000)]
res = {"off": [], "on": []}
for on_ms, off_ms in toggles:
    res[f"{on_ms}/{off_ms}"] = []
stats = (ctypes.c_double * 6)()
for r in range(rounds):
    res["off"].append(rate_for(seconds))
    cc.cc_enable(ALL)
    res["on"].append(rate_for(seconds))
    cc.cc_disable(ALL)
    for on_ms, off_ms in toggles:
        cc.cc_toggler_start(on_ms, off_ms, ALL)
        rt = rate_for(seconds)
        cc.cc_toggler_stop(stats)
        f = on_ms / (on_ms + off_ms)
        expect = f * res["on"][-1] + (1 - f) * res["off"][-1]
        cycles = max(stats[0], 1)
        lost_ms = (expect - rt) * seconds / expect / cycles * 1e3
        res[f"{on_ms}/{off_ms}"].append(rt)
        print(f"round {r} toggle {on_ms}/{off_ms} ms: {rt:.0f}/s (mix of steady {expect:.0f}/s), {stats[0]:.0f} cycles, "
              f"enable median {stats[1] / 1e6:.2f} ms max {stats[2] / 1e6:.2f}, disable+flush median "
              f"{stats[3] / 1e6:.2f} ms max {stats[4] / 1e6:.2f}; lost per cycle {lost_ms:.2f} ms", flush=True)
    print(f"round {r} off {res['off'][-1]:.0f}/s on {res['on'][-1]:.0f}/s", flush=True)
for k, v in res.items():
    print(f"RATE {mode} {k:10s} median {statistics.median(v):.0f}/s [{min(v):.0f}-{max(v):.0f}]", flush=True)
print(f"records {cc.cc_records()}")
