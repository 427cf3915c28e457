"""Keras 3 on the PyTorch backend: LSTM and GRU with use_cudnn="auto" vs use_cudnn=False, on the
same GPU. The model and timing are in _speedup.py."""
# snippet: timeout=1800 needs=gpu exclusive
import os

os.environ["KERAS_BACKEND"] = "torch"  # this program measures one backend
import torch
from torch.profiler import ProfilerActivity, profile
import keras

import _speedup  # the shared half of the benchmark, next to this file

on_gpu = _speedup.use_gpu(torch.cuda.is_available(), "PyTorch sees no CUDA device")
torch.backends.cudnn.allow_tf32 = False  # FP32 on both paths
torch.backends.cuda.matmul.allow_tf32 = False


# --8<-- [start:show]
def ran_cudnn(layer):
    """Whether PyTorch's profiler saw the cuDNN RNN op while a model holding the layer ran."""
    model = keras.Sequential([keras.Input((8, 16)), layer])
    x = keras.ops.zeros((2, 8, 16))  # on the GPU when there is one: Keras's default device
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    with profile(activities=activities) as prof:
        model(x)
    return "aten::_cudnn_rnn" in {e.key for e in prof.key_averages()}


for layer in ("LSTM", "GRU"):  # before timing anything: each path runs the kernel it claims
    auto = ran_cudnn(getattr(keras.layers, layer)(16, use_cudnn="auto"))
    off = ran_cudnn(getattr(keras.layers, layer)(16, use_cudnn=False))
    print(f"kernel check: {layer} use_cudnn='auto' ran cuDNN: {auto}; use_cudnn=False: {off}")
    assert auto == on_gpu and not off, (layer, auto, off)
# --8<-- [end:show]

_speedup.run("Keras 3 (PyTorch)", _speedup.keras3_paths(keras, jit_compile=False),
             _speedup.no_sync, _speedup.keras_matmul(keras),
             notes={"keras": keras.__version__, "torch": torch.__version__})
