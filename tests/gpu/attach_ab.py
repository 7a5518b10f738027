#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What attaching with the defaults costs a job, measured inside one
process: the job runs untraced and traced by turns, and each traced
stretch is compared with the untraced stretches on either side of it.
Runs of separate processes differ by more than the 1-2% to measure (one
launch loop read 94k to 137k launches/s untraced across processes on the
same H100), a process against itself far less. On the GPU machine, from
the repository root, with a prebuilt static build/inferscope-bpf:

    tests/gpu/attach_ab.py OUTDIR [CYCLES] [SECONDS] [JOBS]

JOBS (comma-separated, default launch,resnet): launch is
tests/gpu/rate_timeline.py (launch-bound: x.add_(1.0), a synchronization
every 2000 launches, its rate every 0.5 s); resnet is tests/gpu/resnet_job.py
(ResNet-18 fed by 4 DataLoader workers, its steps/s every 1 s). Each job:
SECONDS untraced, then CYCLES times: `record -q -p PID -d SECONDS` with
every default (traced from its ready file, every probe armed, to its exit),
then SECONDS untraced. A rate interval counts for the stretch it lies in
whole; those across a switch are left out. Per cycle: the traced stretch's
mean rate over the mean of the untraced stretches before and after it.
Prints each cycle, the median change with its range, the attach times,
the launch loop thread's CPU time per launch traced against untraced (what
the probes add to each launch, whatever the GPU's pace),
and the recorder's account of each traced stretch (its "tracing cost" line
on standard error); the tracer's output and the job's under OUTDIR.
"""
import os
import signal
import statistics
import subprocess
import sys
import threading
import time

PY = os.environ.get("PY", "/opt/torch/.venv/bin/python3")
T = "build/inferscope-bpf"
JOBS = {
    # name: (command, seconds per rate line, needs SIGUSR1 to start, rate unit)
    "launch": (["tests/gpu/rate_timeline.py"], 0.5, False, "launches/s"),
    "resnet": (["tests/gpu/resnet_job.py", "100000"], 1.0, True, "steps/s"),
}


def run_job(out, name, cycles, secs):
    cmd, every, go, unit = JOBS[name]
    total = secs * (2 * cycles + 1) + 5
    args = [PY] + cmd + ([str(total)] if name == "launch" else [])
    env = dict(os.environ, RATE_EVERY=str(every))
    job = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=open(f"{out}/{name}.job.err", "w"),
                           text=True, bufsize=1, env=env)
    lines = []   # (monotonic time read, rate)
    ready = threading.Event()
    pid = [0]

    def reader():
        with open(f"{out}/{name}.job.out", "w") as log:
            for line in job.stdout:
                now = time.monotonic()
                log.write(f"{now:.3f} {line}")
                f = line.split()
                if f and f[0] == "ready":
                    pid[0] = int(f[1])
                    ready.set()
                elif len(f) >= 4 and f[0] == "t" and f[2] == "rate":
                    lines.append((now, float(f[3]), float(f[5]) if len(f) >= 6 and f[4] == "cpu_us" else None))
        ready.set()

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    if not ready.wait(300) or not pid[0]:
        print(f"FAIL {name}: the job did not start (see {out}/{name}.job.err)")
        job.kill()
        return None
    if go:
        os.kill(pid[0], signal.SIGUSR1)
    stretches = []   # (start, end, traced)
    attach_ms = []
    t = time.monotonic()
    time.sleep(secs)
    stretches.append((t, time.monotonic(), False))
    for c in range(cycles):
        ready_file = f"{out}/{name}{c}.ready"
        if os.path.exists(ready_file):
            os.unlink(ready_file)
        t0 = time.monotonic()
        tr = subprocess.Popen([T, "record", "-o", f"{out}/{name}{c}.isr", "-p", str(pid[0]), "-d", str(secs),
                               "--ready-file", ready_file],
                              stdout=subprocess.DEVNULL, stderr=open(f"{out}/{name}{c}.err", "w"))
        while not os.path.exists(ready_file) and tr.poll() is None:
            time.sleep(0.001)
        on = time.monotonic()
        attach_ms.append(1000 * (on - t0))
        stretches.append((t0, on, None))   # attaching: neither
        tr.wait()
        off = time.monotonic()
        stretches.append((on, off, True))
        time.sleep(secs)
        stretches.append((off, time.monotonic(), False))
    job.send_signal(signal.SIGTERM)
    try:
        job.wait(30)
    except subprocess.TimeoutExpired:
        job.kill()
    th.join(5)

    def mean_rate(a, b, k=1):
        # a line read at `now` covers (now - every, now]
        r = [ln[k] for ln in lines if ln[0] - every >= a and ln[0] <= b and ln[k] is not None]
        return statistics.mean(r) if r else None

    changes, cpu_changes = [], []
    untraced = [s for s in stretches if s[2] is False]
    traced = [s for s in stretches if s[2] is True]
    for c, s in enumerate(traced):
        before, after = mean_rate(*untraced[c][:2]), mean_rate(*untraced[c + 1][:2])
        during = mean_rate(*s[:2])
        if before is None or after is None or during is None:
            print(f"{name} cycle {c + 1}: too few rate lines")
            continue
        base = (before + after) / 2
        changes.append(100 * (during / base - 1))
        print(f"{name} cycle {c + 1}: untraced {before:.1f} / {after:.1f}, traced {during:.1f} {unit}: "
              f"{changes[-1]:+.1f}% (attach {attach_ms[c]:.0f} ms)")
        # the loop thread's CPU time per launch, where the job tells it
        cb, ca, cd = mean_rate(*untraced[c][:2], k=2), mean_rate(*untraced[c + 1][:2], k=2), mean_rate(*s[:2], k=2)
        if cb and ca and cd:
            cpu_changes.append(100 * (cd / ((cb + ca) / 2) - 1))
            print(f"{name} cycle {c + 1}: CPU per launch untraced {cb:.3f} / {ca:.3f} us, traced {cd:.3f} us: "
                  f"{cpu_changes[-1]:+.1f}%")
    for c in range(len(traced)):
        try:
            acct = [ln.strip() for ln in open(f"{out}/{name}{c}.err") if "tracing cost" in ln]
        except OSError:
            acct = []
        for ln in acct[:1]:
            print(f"{name} account {c + 1}: {ln}")
    if changes:
        print(f"{name}: traced against untraced in the same process, {len(changes)} cycles of {secs} s: "
              f"median {statistics.median(changes):+.1f}%, range {min(changes):+.1f}% .. {max(changes):+.1f}%; "
              f"attach median {statistics.median(attach_ms):.0f} ms ({min(attach_ms):.0f}-{max(attach_ms):.0f})")
    if cpu_changes:
        print(f"{name}: the loop thread's CPU time per launch, traced against untraced: median "
              f"{statistics.median(cpu_changes):+.1f}%, range {min(cpu_changes):+.1f}% .. {max(cpu_changes):+.1f}%")
    for c in range(len(traced)):
        try:
            os.unlink(f"{out}/{name}{c}.isr")
        except OSError:
            pass
    return changes


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: attach_ab.py OUTDIR [CYCLES] [SECONDS] [JOBS]")
    out = sys.argv[1]
    cycles = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    secs = float(sys.argv[3]) if len(sys.argv) > 3 else 6
    jobs = sys.argv[4].split(",") if len(sys.argv) > 4 else ["launch", "resnet"]
    os.makedirs(out, exist_ok=True)
    if not os.access(T, os.X_OK):
        sys.exit(f"attach_ab.py: {T} missing")
    for name in jobs:
        run_job(out, name, cycles, secs)


if __name__ == "__main__":
    main()
