"""PyTorch backend: under torch.compile or torch.jit tracing, Keras takes its own loop, not cuDNN."""
# snippet: timeout=120
import os
from unittest import mock

os.environ["KERAS_BACKEND"] = "torch"  # Keras 3 on PyTorch; set before Keras is imported
import numpy as np

from _pretend_gpu import takes_cudnn  # runs Keras's own choice without a GPU

x = np.zeros((2, 5, 3), "float32")
# --8<-- [start:show]
import keras
import torch

# Keras asks torch.compiler.is_compiling() and torch.jit.is_tracing() before it calls cuDNN.
# Inside torch.compile the first answers True; here we make it answer True.
print("eager:                 LSTM cuDNN", takes_cudnn(keras.layers.LSTM(4), x))
with mock.patch.object(torch.compiler, "is_compiling", lambda: True):
    print("inside torch.compile:  LSTM cuDNN", takes_cudnn(keras.layers.LSTM(4), x),
          "  GRU cuDNN", takes_cudnn(keras.layers.GRU(4), x))
with mock.patch.object(torch.jit, "is_tracing", lambda: True):
    print("inside torch.jit.trace: LSTM cuDNN", takes_cudnn(keras.layers.LSTM(4), x))

inputs = keras.Input((5, 3))
model = keras.Model(inputs, keras.layers.LSTM(4)(inputs))
model.compile("sgd", "mse")  # jit_compile="auto": eager on this backend
print('compile(jit_compile="auto") resolves to', model.jit_compile,
      '; jit_compile=True means torch.compile')
# --8<-- [end:show]
assert takes_cudnn(keras.layers.LSTM(4), x) and model.jit_compile is False
with mock.patch.object(torch.compiler, "is_compiling", lambda: True):
    assert not takes_cudnn(keras.layers.LSTM(4), x) and not takes_cudnn(keras.layers.GRU(4), x)
with mock.patch.object(torch.jit, "is_tracing", lambda: True):
    assert not takes_cudnn(keras.layers.LSTM(4), x)
