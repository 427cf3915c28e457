"""On a GPU: PyTorch's three cuDNN-RNN messages that only CUDA builds print, reproduced, each
checked against the text quoted on the troubleshooting page, with the fix that removes it;
and whether a Keras 3 LSTM on PyTorch takes cuDNN and prints the contiguous-chunk warning.

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


# 1. Weights outside cuDNN's single buffer. Two ways to replace a weight by hand: a new
#    Parameter (PyTorch notices the new object at the next call and flattens again), and new
#    data under the same Parameter (it cannot notice that).
contiguous = "RNN module weights are not part of single contiguous chunk of memory"
for way in ("a new Parameter", "new .data"):
    lstm = nn.LSTM(16, 32).cuda()
    if way == "a new Parameter":
        lstm.weight_hh_l0 = nn.Parameter(lstm.weight_hh_l0.detach().clone())
    else:
        lstm.weight_hh_l0.data = lstm.weight_hh_l0.data.clone()
    found = rnn_warnings(lstm)
    print(f"weight replaced, {way + ':':16} " + (f"UserWarning: {found[0]}" if found
                                                 else "no warning"))
    lstm.flatten_parameters()
    assert rnn_warnings(lstm) == [], way
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

# 3. Deterministic algorithms and cuBLAS. Older PyTorch refused a cuBLAS call unless
#    CUBLAS_WORKSPACE_CONFIG was ":4096:8" or ":16:8" (read once per process, so each value
#    gets a new one); pytorch/pytorch#161749 removed the check.
code = ("import torch; torch.use_deterministic_algorithms(True); "
        "a = torch.randn(64, 64, device='cuda'); print((a @ a).sum().item())")
outcome = {}
for value in (None, ":4096:2", ":16:8"):
    env = {k: v for k, v in os.environ.items() if k != "CUBLAS_WORKSPACE_CONFIG"}
    if value:
        env["CUBLAS_WORKSPACE_CONFIG"] = value
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    refused = "it uses CuBLAS and you have CUDA >= 10.2" in run.stderr
    assert refused == (run.returncode != 0), run.stderr[-2000:]  # no other failure
    outcome[value] = "RuntimeError: Deterministic behavior was enabled ..." if refused else "runs"
    print(f"torch {torch.__version__}, CUBLAS_WORKSPACE_CONFIG={value or '(unset)':8}", outcome[value])
if outcome[None] != "runs":  # a PyTorch with the check: only the two exact values pass
    assert outcome[":16:8"] == "runs" and outcome[":4096:2"] != "runs", outcome
# 4. Keras 3 on PyTorch: Keras builds new weight tensors on every call and hands them to
#    PyTorch's cuDNN RNN (keras/src/backend/torch/rnn.py), so PyTorch may print the warning of
#    step 1. A Keras layer has no flatten_parameters() to call.
os.environ["KERAS_BACKEND"] = "torch"  # before Keras is imported
import keras
from torch.profiler import ProfilerActivity, profile

layer = keras.layers.LSTM(32)
batch_first = x.transpose(0, 1).contiguous()  # Keras takes (batch, time, features)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    layer(batch_first)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        layer(batch_first)
ran_cudnn = any(e.key == "aten::_cudnn_rnn" for e in prof.key_averages())
warned = any(contiguous in str(w.message) for w in caught)
print(f"Keras {keras.__version__} LSTM on PyTorch: cuDNN: {ran_cudnn}, "
      f"contiguous-chunk warning: {warned}")
if tuple(int(p) for p in keras.__version__.split(".")[:2]) >= (3, 15):
    assert ran_cudnn, "Keras 3.15 and newer call cuDNN for this LSTM on a GPU"
# --8<-- [end:show]
