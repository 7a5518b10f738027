# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A PyTorch process for tests/gpu/cupti.sh, started with
# CUDA_INJECTION64_PATH set to the CUPTI bridge: warms up, prints
# "ready PID", waits for SIGUSR1 (the tracer is attached by then), runs N
# in-place relu_ on a CUDA tensor (one elementwise kernel each), synchronizes,
# prints "done" and waits for a second SIGUSR1 before exiting.
import os
import signal
import sys

import torch

n = int(sys.argv[1])
x = torch.randn(1 << 16, device="cuda")
for _ in range(10):
    x.relu_()
torch.cuda.synchronize()
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
print("ready", os.getpid(), flush=True)
signal.sigwait([signal.SIGUSR1])
for _ in range(n):
    x.relu_()
torch.cuda.synchronize()
print("done", flush=True)
signal.sigwait([signal.SIGUSR1])
