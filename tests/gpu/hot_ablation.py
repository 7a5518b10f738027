#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What the CUDA hot path's probes cost a launch in a real PyTorch loop,
measured inside one traced run against the recorder's own account of it.

With the defaults the overhead budget switches the hot path's probes on
for a window of at least 100 ms about once a second and off in between.
The loop (tests/gpu/launch_blocks.py) times every block of 500 launches;
the recording says which launches the hot path saw. A block whose every
launch is in the recording ran with the probes on, a block with none of
them with the probes off, in the same process a few milliseconds apart:
the host's swings in speed (20-45% within seconds, tests/gpu/noise.sh),
which no comparison of separate runs or of seconds-long stretches gets
past, move both alike. Per on-window: the CPU time per launch of its
blocks against that of the off blocks within 100 ms before and after it.

On the GPU machine, from the repository root, with a prebuilt static
build/inferscope-bpf:

    tests/gpu/hot_ablation.py OUTDIR [SECONDS]   (default 30)

Runs the loop for SECONDS + 8, attaches `record -p PID -d SECONDS` with
every default 3 s in, then prints: the windows, the median cost of a
launch's probes with its spread, the recorder's measured cost of a hit
(its account line), the share of launches the hot path saw, and from
them the hot path's share of the loop's CPU time against what the
account charged. Everything under OUTDIR.
"""
import bisect
import os
import sqlite3
import statistics
import subprocess
import sys
import time

PY = os.environ.get("PY", "/opt/torch/.venv/bin/python3")
T = "build/inferscope-bpf"
NEAR_NS = 100_000_000


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: hot_ablation.py OUTDIR [SECONDS]")
    out = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 30
    os.makedirs(out, exist_ok=True)
    blocks_file, rec, db = f"{out}/blocks.txt", f"{out}/hot.isr", f"{out}/hot.db"
    for p in (blocks_file, rec, db):
        if os.path.exists(p):
            os.unlink(p)
    job = subprocess.Popen([PY, "tests/gpu/launch_blocks.py", str(secs + 8), blocks_file],
                           stdout=subprocess.PIPE, stderr=open(f"{out}/job.err", "w"), text=True)
    pid = 0
    for line in job.stdout:
        if line.startswith("ready"):
            pid = int(line.split()[1])
            break
    if not pid:
        sys.exit(f"FAIL: the loop did not start (see {out}/job.err)")
    time.sleep(3)
    err = open(f"{out}/record.err", "w")
    subprocess.run([T, "record", "-o", rec, "-p", str(pid), "-d", str(secs)], stdout=subprocess.DEVNULL, stderr=err)
    err.close()
    job.wait()
    subprocess.run([T, "export", rec, "--sqlite", db], check=True, stdout=subprocess.DEVNULL)
    c = sqlite3.connect(db)
    rec_start, rec_end = c.execute("SELECT start_ns, end_ns FROM recordings").fetchone()
    launches = sorted(r[0] for r in c.execute(
        "SELECT start_ns FROM api_calls WHERE function = 'cuLaunchKernel' AND pid = ?", (pid,)))
    blocks = []
    for line in open(blocks_file):
        t0, t1, cpu, n, sync = (int(v) for v in line.split())
        if t0 >= rec_start and t1 <= rec_end and not sync:
            seen = bisect.bisect_right(launches, t1) - bisect.bisect_left(launches, t0)
            blocks.append((t0, t1, cpu / n, seen / n))
    on = [b for b in blocks if b[3] >= 0.99]
    off = [b for b in blocks if b[3] == 0]
    # consecutive on blocks: a window
    windows, cur = [], []
    for b in blocks:
        if b[3] >= 0.99:
            cur.append(b)
        elif cur:
            windows.append(cur)
            cur = []
    if cur:
        windows.append(cur)
    diffs, rel = [], []
    for w in windows:
        a, z = w[0][0], w[-1][1]
        near = [b[2] for b in off if a - NEAR_NS <= b[1] <= a or z <= b[0] <= z + NEAR_NS]
        if len(w) < 3 or len(near) < 6:
            continue
        m_on, m_off = statistics.mean(b[2] for b in w), statistics.mean(near)
        diffs.append(m_on - m_off)
        rel.append(m_on / m_off - 1)
        print(f"window at {(a - rec_start) / 1e9:6.2f} s: {len(w)} blocks on, {len(near)} off beside it: "
              f"{m_on / 1e3:.3f} against {m_off / 1e3:.3f} us a launch: {diffs[-1]:+.0f} ns ({rel[-1]:+.1%})")
    account = [ln.strip() for ln in open(f"{out}/record.err") if "tracing cost" in ln]
    for ln in account[:1]:
        print(f"account: {ln}")
    seen_share = len(launches) / max(1, sum(1 for line in open(blocks_file)
                                            if rec_start <= int(line.split()[0]) <= rec_end) * 500)
    print(f"blocks in the recording: {len(blocks)} without a synchronization, {len(on)} with the probes on, "
          f"{len(off)} off, the rest across a switch; launches the hot path saw: {len(launches)} "
          f"({seen_share:.1%} of those made)")
    if diffs:
        med, cpu_off = statistics.median(diffs), statistics.median(b[2] for b in off)
        q = statistics.quantiles(diffs, n=4) if len(diffs) >= 4 else [min(diffs), med, max(diffs)]
        print(f"ABLATION: {len(diffs)} windows: the hot path's probes cost a launch {med:+.0f} ns median "
              f"(quartiles {q[0]:+.0f} .. {q[-1]:+.0f}, range {min(diffs):+.0f} .. {max(diffs):+.0f}), "
              f"{statistics.median(rel):+.1%} of its {cpu_off / 1e3:.3f} us with them off; with {seen_share:.1%} of "
              f"the launches seen: {seen_share * med / cpu_off:.2%} of the loop's CPU time")
    os.unlink(rec)
    os.unlink(db)


if __name__ == "__main__":
    main()
