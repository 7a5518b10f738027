# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A real training job for tests/gpu/realjob.sh: torchvision's ResNet-18
(random weights; a small hand-written ResNet-like model when torchvision
cannot be imported), synthetic images augmented in a DataLoader with 4
persistent worker processes and pin_memory=True, SGD.

   resnet_job.py [STEPS]   (default 250)

Starts the workers and warms up (20 steps), prints "ready PID" and waits
for SIGUSR1 (a tracer attaches meanwhile: the workers already run), then
trains STEPS steps and prints "steps N seconds S rate R" (steps per second
over those steps) and the model it used, and exits. With RATE_EVERY=SEC in
the environment it also prints "t SECONDS rate STEPS_PER_S" every SEC
seconds of training (tests/gpu/attach_ab.py)."""
import os
import signal
import sys
import threading
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

BATCH = 64
SIZE = 160
WORKERS = 4
WARMUP = 20


class Synthetic(Dataset):
    """Random images with the augmentation a training input pipeline does
    on the CPU: a random crop, a flip, normalization."""

    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        img = torch.rand(3, SIZE + 16, SIZE + 16, generator=g)
        x, y = torch.randint(0, 17, (2,), generator=g).tolist()
        img = img[:, y:y + SIZE, x:x + SIZE]
        if i % 2:
            img = img.flip(2)
        img = (img - 0.45) / 0.225
        return img.contiguous(), i % 1000


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return torch.relu(y + (self.down(x) if self.down is not None else x))


def small_resnet():
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000))


def make_model():
    try:
        import torchvision
        return torchvision.models.resnet18(weights=None), "torchvision resnet18"
    except ImportError:
        return small_resnet(), "hand-written ResNet-18-like (torchvision not importable)"


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 250
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False   # the same kernels, so the same launches, in every run
    model, name = make_model()
    model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    loader = DataLoader(Synthetic(), batch_size=BATCH, num_workers=WORKERS, pin_memory=True,
                        persistent_workers=True, prefetch_factor=2)
    batches = iter(loader)

    def step():
        x, y = next(batches)
        x = x.cuda(non_blocking=True)
        y = y.cuda(non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    go = threading.Event()
    # a Python handler: the signal may reach any thread (the pin-memory
    # thread, autograd's), the handler runs on the main one
    signal.signal(signal.SIGUSR1, lambda *_: go.set())
    print("ready %d" % os.getpid(), flush=True)
    while not go.wait(0.1):
        pass
    every = float(os.environ.get("RATE_EVERY", "0"))
    t0 = time.monotonic()
    mark, done = t0, 0
    for i in range(steps):
        loss = step()
        if i % 50 == 49:
            loss.item()     # a synchronization now and then, as a training loop logs its loss
        done += 1
        if every and time.monotonic() - mark >= every:
            torch.cuda.synchronize()
            now = time.monotonic()
            print("t %.2f rate %.2f" % (now - t0, done / (now - mark)), flush=True)
            mark, done = now, 0
    torch.cuda.synchronize()
    dt = time.monotonic() - t0
    print("steps %d seconds %.3f rate %.2f model %s" % (steps, dt, steps / dt, name), flush=True)


if __name__ == "__main__":
    main()
