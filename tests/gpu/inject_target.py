# A PyTorch job to inject into (tests/gpu/inject.sh):
#   inject_target.py PROGRESS_FILE SECONDS
# adds 1.0 to a CUDA tensor in a loop for SECONDS, synchronizing every 1000
# launches, then checks that every element equals the number of launches
# and that SIGUSR1 (sent by the injected test library's constructor) was
# handled exactly once. Exit 0 when both hold.
import signal
import sys
import time

import torch

progress, seconds = sys.argv[1], float(sys.argv[2])
usr1 = 0


def on_usr1(signum, frame):
    global usr1
    usr1 += 1


signal.signal(signal.SIGUSR1, on_usr1)
x = torch.zeros(1024, device="cuda")
torch.cuda.synchronize()
with open(progress, "w") as f:
    f.write("running\n")
n = 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    for _ in range(1000):
        x.add_(1.0)
    torch.cuda.synchronize()
    n += 1000
ok = bool((x == n).all().item())
print(f"launches {n} tensor_ok {ok} usr1 {usr1}", flush=True)
sys.exit(0 if ok and usr1 == 1 else 1)
