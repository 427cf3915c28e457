"""PyTorch: nn.LSTM and nn.GRU on cuDNN vs on PyTorch's own CUDA kernels, on the same GPU.

The same module, weights and data on both paths; the generic path runs inside
torch.backends.cudnn.flags(enabled=False). The sweep, timing, FLOP count and result files are in
_speedup.py, next to this file.
"""
# snippet: timeout=1800 needs=gpu exclusive
import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

import _speedup  # the shared half of the benchmark, next to this file

on_gpu = _speedup.use_gpu(torch.cuda.is_available(), "PyTorch sees no CUDA device")
device = "cuda" if on_gpu else "cpu"
sync = torch.cuda.synchronize if on_gpu else (lambda: None)
# FP32 on both paths: no TF32 in cuDNN, nor in cuBLAS (the generic path's matrix products).
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False


# --8<-- [start:show]
# --8<-- [start:compare]
def paths(layer, mode, size):
    """One step on cuDNN and the same step on PyTorch's generic CUDA kernels."""
    torch.manual_seed(0)
    units, steps, batch = size["units"], size["steps"], size["batch"]
    rnn = {"LSTM": nn.LSTM, "GRU": nn.GRU}[layer](units, units, batch_first=True).to(device)
    x = torch.randn(batch, steps, units, device=device)
    opt = torch.optim.SGD(rnn.parameters(), lr=1e-3)

    def step():
        if mode == "inference":
            with torch.no_grad():
                rnn(x)
        else:
            opt.zero_grad()
            rnn(x)[0].pow(2).mean().backward()
            opt.step()

    def generic():
        with torch.backends.cudnn.flags(enabled=False):  # cuDNN off for this block only
            step()

    return step, generic
# --8<-- [end:compare]


def ran_cudnn(fn):
    """Whether PyTorch's profiler saw the cuDNN RNN op while fn ran."""
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    with profile(activities=activities) as prof:
        fn()
    return "aten::_cudnn_rnn" in {e.key for e in prof.key_averages()}


for layer in ("LSTM", "GRU"):  # before timing anything: each path runs the kernel it claims
    fast, slow = paths(layer, "train", _speedup.sizes()[0])
    assert ran_cudnn(fast) == on_gpu and not ran_cudnn(slow), layer
    with torch.backends.cudnn.flags(enabled=False):  # the generic path keeps FP32 matmuls
        assert torch.backends.cuda.matmul.allow_tf32 is False
print(f"kernel check: the cuDNN path runs aten::_cudnn_rnn: {on_gpu}; the generic path: False")
# --8<-- [end:show]


def matmul(n):
    a = torch.randn(n, n, device=device)
    return lambda: a @ a


_speedup.run("PyTorch", paths, sync, matmul,
             notes={"torch": torch.__version__, "torch_cuda": torch.version.cuda,
                    "cudnn": torch.backends.cudnn.version() if on_gpu else None})
