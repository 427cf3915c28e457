"""On a GPU: PyTorch's profiler names the cuDNN RNN op that Keras's PyTorch backend runs."""
# snippet: timeout=300 needs=gpu
import os
import sys

os.environ["KERAS_BACKEND"] = "torch"  # Keras 3 on PyTorch; set before Keras is imported
import torch

if not torch.cuda.is_available():
    print("needs a GPU: torch.cuda.is_available() is False, cuDNN cannot run here.")
    sys.exit(77)
# --8<-- [start:show]
import keras
from torch.profiler import ProfilerActivity, profile

def cudnn_ops(layer):
    """cuDNN operators PyTorch runs for one call of the layer on the GPU."""
    x = torch.zeros(8, 20, 16, device="cuda")
    layer(x)  # build, warm up
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        layer(x)
        torch.cuda.synchronize()
    return sorted({e.key for e in prof.key_averages() if "cudnn" in e.key.lower()})

print("LSTM(32):                 ", cudnn_ops(keras.layers.LSTM(32)))
print("GRU(32):                  ", cudnn_ops(keras.layers.GRU(32)))
print("LSTM(32, use_cudnn=False):", cudnn_ops(keras.layers.LSTM(32, use_cudnn=False)))
print("LSTM(32, unroll=True):    ", cudnn_ops(keras.layers.LSTM(32, unroll=True)))
# --8<-- [end:show]
assert "aten::_cudnn_rnn" in cudnn_ops(keras.layers.LSTM(32))
assert "aten::_cudnn_rnn" in cudnn_ops(keras.layers.GRU(32))
assert not cudnn_ops(keras.layers.LSTM(32, use_cudnn=False))
assert not cudnn_ops(keras.layers.LSTM(32, unroll=True))
