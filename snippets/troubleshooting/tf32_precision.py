"""On a GPU: do PyTorch's cuDNN LSTM and GRU compute in TF32 by default? Each precision setting
runs in a fresh process, as a reader's script starts; the layer's output is compared with the
same layer in float64 on the CPU. Run it as it is: python tf32_precision.py

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
    print("needs a GPU: PyTorch sees no CUDA device, and TF32 exists only on a GPU.")
    sys.exit(77)
# --8<-- [start:show]
# Each setting is one line a reader might put at the top of a script.
SETTINGS = {
    "defaults": "",
    "torch.set_float32_matmul_precision('highest')":
        "torch.set_float32_matmul_precision('highest')",
    "torch.backends.cudnn.allow_tf32 = False": "torch.backends.cudnn.allow_tf32 = False",
    "torch.backends.cudnn.rnn.fp32_precision = 'ieee'":
        "torch.backends.cudnn.rnn.fp32_precision = 'ieee'",
    "cuDNN off (PyTorch's own kernels)": "torch.backends.cudnn.enabled = False",
}

CHILD = """
import sys, torch
from torch import nn
{setting}
device = sys.argv[1]
for name in ("LSTM", "GRU"):
    torch.manual_seed(0)
    layer = getattr(nn, name)(256, 512, num_layers=2, batch_first=True)
    x = torch.randn(32, 100, 256)
    with torch.no_grad():
        reference = layer.double()(x.double())[0]          # float64 on the CPU
        out = layer.float().to(device)(x.to(device))[0].cpu().double()
    print(name, (out - reference).abs().max().item())
"""


def max_errors(setting, device):
    """{"LSTM": error, "GRU": error}: the largest difference from the float64 reference."""
    run = subprocess.run([sys.executable, "-c", CHILD.format(setting=setting), device],
                         capture_output=True, text=True)
    if run.returncode != 0:  # a setting this PyTorch does not know: say so, go on
        return run.stderr.strip().splitlines()[-1]
    return {name: float(err) for name, err in (ln.split() for ln in run.stdout.splitlines())}


device = "cpu" if DRY_RUN else "cuda"
print(f"PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, on {device}")
print("defaults: cudnn.allow_tf32 =", torch.backends.cudnn.allow_tf32,
      "| cuda.matmul.allow_tf32 =", torch.backends.cuda.matmul.allow_tf32)
errors = {}
for label, setting in SETTINGS.items():
    errors[label] = max_errors(setting, device)
    found = errors[label]
    shown = found if isinstance(found, str) else \
        "   ".join(f"{name} {err:.1e}" for name, err in found.items())
    print(f"{label:50} max |error|: {shown}")
# --8<-- [end:show]
full = errors["cuDNN off (PyTorch's own kernels)"]
assert isinstance(full, dict) and max(full.values()) < 1e-3, full  # FP32 arithmetic: small
tf32_by_default = max(errors["defaults"].values()) > 10 * max(full.values())
print("the default error is TF32-sized (over 10 times the FP32 one):", tf32_by_default)
