"""Did my layer run on cuDNN? PyTorch's nn.LSTM, and Keras 3 on PyTorch (which calls the same
op): PyTorch's profiler names aten::_cudnn_rnn among the ops of a call that ran on cuDNN.
Run it as it is (python ran_on_cudnn_torch.py), then call ran_on_cudnn on yours.
"""
# snippet: timeout=240
import os

os.environ["KERAS_BACKEND"] = "torch"
# --8<-- [start:show]
import keras
import torch
from torch import nn
from torch.profiler import profile


def ops_that_ran(call):
    """The ops PyTorch's profiler saw during call()."""
    with torch.no_grad(), profile() as seen:
        call()
    return {event.name for event in seen.events()}


def ran_on_cudnn(call):
    return "aten::_cudnn_rnn" in ops_that_ran(call)


device = "cuda" if torch.cuda.is_available() else "cpu"
lstm = nn.LSTM(8, 16, batch_first=True).to(device)
x = torch.zeros(4, 20, 8, device=device)
model = keras.Sequential([keras.Input((20, 8)), keras.layers.LSTM(16)])
print("device:", device)
print("nn.LSTM ran on cuDNN:", ran_on_cudnn(lambda: lstm(x)))
print("Keras 3 LSTM on PyTorch ran on cuDNN:", ran_on_cudnn(lambda: model(x)))
# --8<-- [end:show]
assert ran_on_cudnn(lambda: lstm(x)) == (device == "cuda")
assert "aten::lstm" in ops_that_ran(lambda: lstm(x))  # the profiler saw the call's ops
