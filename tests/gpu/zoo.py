#!/usr/bin/env python3
"""Real jobs with one planted cause each, for tests/gpu/zoo.sh.

    zoo.py JOB

Set-up first (model, data, CUDA warm-up); then the ablation, the same job
with the cause removed, for ABLATION_S seconds, printing "ablation RATE"
(steps/s); then "planted PID", and the job with its cause, until killed,
printing "rate RATE" each second. The harness attaches the tracer to the
planted phase and compares what a finding costs with what the ablation
saves.

  input     ResNet-18 fed by 2 DataLoader workers whose __getitem__ makes
            each image on the CPU (pin_memory, persistent workers);
            ablation: one batch kept on the GPU
  launch    200 tiny kernels a step (x.add_ on 1024 elements); ablation:
            the same step captured in a CUDA graph
  item      a ResNet-18 step (batch 128 of 224x224: the GPU's work larger
            than the host's), then 10 ms of Python before the next (logging,
            metrics), with loss.item() after each step: the Python waits
            for the GPU instead of overlapping it; ablation: .item() every
            100 steps
  pageable  a 32 MiB host-to-device copy a step from pageable memory;
            ablation: from pinned memory
  noisy     a launch-heavy step on CPU 0 while a busy process (started by
            the harness, no relative of the job) shares CPU 0; ablation: the
            same step before it starts
  gil       a launch-heavy step while a thread of the job runs pure Python;
            ablation: no such thread
  healthy   large matmuls queued ahead (GPU-bound): no ablation, nothing
            to find
"""
import json
import os
import sys
import threading
import time

import torch

JOB = sys.argv[1]
ABLATION_S = 4.0
dev = torch.device("cuda")
torch.backends.cudnn.benchmark = True


def rate_loop(step, seconds=None, label="rate"):
    """Runs step() and prints the steps/s each second (once at the end when
    seconds is given)."""
    t0 = last = time.monotonic()
    n = total = 0
    while True:
        step()
        n += 1
        total += 1
        now = time.monotonic()
        if seconds is not None and now - t0 >= seconds:
            torch.cuda.synchronize()
            print(label, "%.3f" % (total / (time.monotonic() - t0)), flush=True)
            return
        if seconds is None and now - last >= 1.0:
            torch.cuda.synchronize()
            now = time.monotonic()
            print(label, "%.3f" % (n / (now - last)), flush=True)
            last, n = now, 0


def python_work(seconds):
    """seconds of this thread's CPU time in Python"""
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        x += sum(range(200))
    return x


def resnet():
    import torchvision

    m = torchvision.models.resnet18(num_classes=100).to(dev)
    return m, torch.optim.SGD(m.parameters(), lr=0.01), torch.nn.CrossEntropyLoss()


class Images(torch.utils.data.Dataset):
    """Each image made on the CPU: the __getitem__ of a decoding, augmenting
    data set."""

    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.rand(3, 224, 224, generator=g)
        for _ in range(10):  # the making line
            x = (x * 1.01 + 0.001).clamp_(0, 1)
            x = torch.roll(x, 1, 2)
        return x, i % 100


def job_input():
    m, opt, lossf = resnet()
    loader = torch.utils.data.DataLoader(Images(), batch_size=32, num_workers=2, pin_memory=True,
                                         persistent_workers=True, prefetch_factor=2)
    it = iter(loader)
    x0, y0 = next(it)
    xg, yg = x0.to(dev), y0.to(dev)

    def train(x, y):
        opt.zero_grad(set_to_none=True)
        loss = lossf(m(x), y)
        loss.backward()
        opt.step()

    for _ in range(5):
        train(xg, yg)
    rate_loop(lambda: train(xg, yg), ABLATION_S, "ablation")

    def planted():
        x, y = next(it)
        train(x.to(dev, non_blocking=True), y.to(dev, non_blocking=True))

    return planted


def job_launch():
    x = torch.zeros(1024, device=dev)

    def step():
        for _ in range(200):
            x.add_(1.0)

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    rate_loop(g.replay, ABLATION_S, "ablation")
    return step


def job_item():
    m, opt, lossf = resnet()
    x = torch.randn(128, 3, 224, 224, device=dev)
    y = torch.randint(0, 100, (128,), device=dev)
    n = [0]

    def train(every):
        opt.zero_grad(set_to_none=True)
        loss = lossf(m(x), y)
        loss.backward()
        opt.step()
        n[0] += 1
        if n[0] % every == 0:
            loss.item()  # the sync line
        python_work(0.010)

    for _ in range(5):
        train(1)
    rate_loop(lambda: train(100), ABLATION_S, "ablation")
    return lambda: train(1)


def job_pageable():
    src = torch.randn(8 << 20)  # 32 MiB
    pinned = src.pin_memory()
    dst = torch.empty(8 << 20, device=dev)
    w = torch.randn(2048, 2048, device=dev)

    def step(host):
        dst.copy_(host, non_blocking=True)
        torch.mm(w, w)

    # how the memory a tensor was pinned in shows in the memory map (is a
    # copy from it recognisable as pinned without CUPTI?)
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = (int(v, 16) for v in line.split()[0].split("-"))
            if lo <= pinned.data_ptr() < hi or lo <= src.data_ptr() < hi:
                print("maps", "pinned" if lo <= pinned.data_ptr() < hi else "pageable", line.strip(), flush=True)
    with open("/proc/self/status") as f:
        print("status", " ".join(l.strip() for l in f if l.startswith(("VmPin", "VmLck"))), flush=True)

    rate_loop(lambda: step(pinned), ABLATION_S, "ablation")
    return lambda: step(src)


def small_step_factory():
    x = torch.zeros(1024, device=dev)
    k = torch.ones(1024, device=dev)

    def step():
        for _ in range(50):
            x.mul_(0.5).add_(k)
        x.sum()

    return step


def job_noisy():
    os.sched_setaffinity(0, {0})
    step = small_step_factory()
    rate_loop(step, ABLATION_S, "ablation")
    return step


def job_gil():
    step = small_step_factory()
    rate_loop(step, ABLATION_S, "ablation")

    def hog():
        x = 0
        while True:
            for i in range(10000):  # the hog line
                x += i

    threading.Thread(target=hog, name="hog", daemon=True).start()
    return step


def job_healthy():
    a = torch.randn(4096, 4096, device=dev)

    def step():
        for _ in range(10):
            torch.mm(a, a)
        torch.cuda.synchronize()

    return step


planted = {"input": job_input, "launch": job_launch, "item": job_item, "pageable": job_pageable,
           "noisy": job_noisy, "gil": job_gil, "healthy": job_healthy}[JOB]()
for _ in range(3):
    planted()
torch.cuda.synchronize()
print("planted", os.getpid(), flush=True)
print(json.dumps({"job": JOB}), flush=True)
rate_loop(planted)
