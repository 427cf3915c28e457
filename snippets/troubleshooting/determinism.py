"""On a GPU: does a seeded training step of a two-layer nn.LSTM with dropout give the same
gradients twice, in one process and in two? And what does torch.use_deterministic_algorithms(True)
ask of it? Each case runs in fresh processes, as a reader's script starts.
Run it as it is: python determinism.py

BENCH_CPU_DRY_RUN=1 runs the same code on the CPU to check it (the tests do); that says nothing
about a GPU.
"""
# snippet: timeout=240 needs=gpu
import os
import subprocess
import sys

import torch

DRY_RUN = os.environ.get("BENCH_CPU_DRY_RUN") == "1"
if not torch.cuda.is_available() and not DRY_RUN:
    print("needs a GPU: PyTorch sees no CUDA device; on a CPU there is no cuDNN to ask.")
    sys.exit(77)
# --8<-- [start:show]
# One seeded training step, twice in the same process; prints a fingerprint of each step's
# gradients (their sum, to the last bit of a float64), or the error.
CHILD = """
import sys, torch
from torch import nn
{setup}
device, dropout = sys.argv[1], float(sys.argv[2])

def step():
    torch.manual_seed(0)
    lstm = nn.LSTM(64, 128, num_layers=2, dropout=dropout).to(device)
    x = torch.randn(50, 16, 64, device=device)
    lstm(x)[0].pow(2).mean().backward()
    return sum(p.grad.double().sum().item() for p in lstm.parameters())

try:
    print(repr(step()), repr(step()))
except RuntimeError as err:
    print("RuntimeError:", str(err).splitlines()[0])
"""
CASES = {
    "seeded": ("", {}),
    "use_deterministic_algorithms(True)": ("torch.use_deterministic_algorithms(True)", {}),
    "use_deterministic_algorithms(True), CUBLAS_WORKSPACE_CONFIG=:4096:8":
        ("torch.use_deterministic_algorithms(True)", {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}),
}


def start(setup, env, device, dropout):
    """Two processes, each doing the seeded step twice."""
    env = {**{k: v for k, v in os.environ.items() if k != "CUBLAS_WORKSPACE_CONFIG"}, **env}
    return [subprocess.Popen([sys.executable, "-c", CHILD.format(setup=setup), device,
                              str(dropout)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]


def outcome(procs):
    done = [p.communicate() for p in procs]
    outs = [out.strip() for out, _ in done]
    for o, (_, err) in zip(outs, done):
        if o.startswith("RuntimeError") or len(o.split()) != 2:
            return o or "failed: " + (err.strip().splitlines() or ["no output"])[-1]
    (a, b), (c, _) = (o.split() for o in outs)
    return f"same within a process: {a == b!s:5}  same in a new process: {a == c}"


device = "cpu" if DRY_RUN else "cuda"
print(f"PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, on {device}")
runs = {(dropout, label): start(setup, env, device, dropout)  # all at once: they are independent
        for dropout in (0.0, 0.3) for label, (setup, env) in CASES.items()}
for (dropout, label), procs in runs.items():
    print(f"dropout={dropout} {label:68} {outcome(procs)}")
# --8<-- [end:show]
