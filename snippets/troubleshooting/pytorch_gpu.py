"""On a GPU: PyTorch's three cuDNN-RNN messages that only CUDA builds print, reproduced, each
checked against the text quoted on the troubleshooting page, with the fix that removes it.

Run it as it is: python pytorch_gpu.py
"""
# snippet: timeout=300 needs=gpu
import os
import subprocess
import sys
import warnings

import torch

if not (torch.cuda.is_available() and torch.backends.cudnn.is_available()):
    print("needs a GPU: torch.cuda.is_available() is False, so PyTorch's CUDA-only messages "
          "cannot appear here.")
    sys.exit(77)
# --8<-- [start:show]
from torch import nn

x = torch.randn(20, 8, 16, device="cuda")  # (time, batch, features)


def rnn_warnings(module):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module(x)
    return [str(w.message) for w in caught if "contiguous chunk" in str(w.message)]


# 1. A weight replaced by hand is outside cuDNN's single buffer.
lstm = nn.LSTM(16, 32).cuda()
lstm.weight_hh_l0 = nn.Parameter(lstm.weight_hh_l0.detach().clone())
contiguous = "RNN module weights are not part of single contiguous chunk of memory"
found = rnn_warnings(lstm)
assert found and found[0].startswith(contiguous), found
print("weight replaced:        UserWarning:", found[0])
lstm.flatten_parameters()
assert rnn_warnings(lstm) == []
print("after flatten_parameters(): no warning")

# 2. Backward through a cuDNN RNN in eval mode.
lstm.eval()
try:
    lstm(x)[0].sum().backward()
    raise SystemExit("expected cuDNN to refuse a backward pass in eval mode")
except RuntimeError as err:
    assert "cudnn RNN backward can only be called in training mode" in str(err), err
    print("eval mode, backward:    RuntimeError:", err)
with torch.backends.cudnn.flags(enabled=False):  # this call only: PyTorch's own CUDA kernel
    lstm(x)[0].sum().backward()
print("eval mode, cuDNN off for the call: backward works")

# 3. Deterministic algorithms and cuBLAS: PyTorch reads CUBLAS_WORKSPACE_CONFIG once per
#    process, so each value gets a new one.
code = ("import torch; torch.use_deterministic_algorithms(True); "
        "a = torch.randn(64, 64, device='cuda'); print((a @ a).sum().item())")
# PyTorch accepts exactly ":4096:8" or ":16:8" (aten/src/ATen/Context.cpp); nn.LSTM's docs
# also name ":4096:2", which this check refuses.
expect_error = {None: True, ":4096:2": True, ":16:8": False, ":4096:8": False}
for value, should_fail in expect_error.items():
    env = {k: v for k, v in os.environ.items() if k != "CUBLAS_WORKSPACE_CONFIG"}
    if value:
        env["CUBLAS_WORKSPACE_CONFIG"] = value
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    failed = "it uses CuBLAS and you have CUDA >= 10.2" in run.stderr
    assert failed == (run.returncode != 0) == should_fail, (value, run.stderr[-2000:])
    print(f"CUBLAS_WORKSPACE_CONFIG={value or '(unset)':8}", "RuntimeError: Deterministic "
          "behavior was enabled ..." if failed else "runs")
# --8<-- [end:show]
