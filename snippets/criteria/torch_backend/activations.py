"""PyTorch backend: which activation functions keep cuDNN. An identity test, with PyTorch's list."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "torch"  # Keras 3 on PyTorch; set before Keras is imported
import numpy as np

from _pretend_gpu import takes_cudnn  # runs Keras's own choice without a GPU

x = np.zeros((2, 5, 3), "float32")
# --8<-- [start:show]
import keras
import torch

activations = {'"tanh"': "tanh", "torch.tanh": torch.tanh, "keras.ops.tanh": keras.ops.tanh,
               "torch.nn.functional.tanh": torch.nn.functional.tanh}
recurrent = {'"sigmoid"': "sigmoid", "torch.sigmoid": torch.sigmoid,
             "keras.ops.sigmoid": keras.ops.sigmoid, '"hard_sigmoid"': "hard_sigmoid"}
results = {}
for label, fn in activations.items():
    results[f"activation={label}"] = takes_cudnn(keras.layers.LSTM(4, activation=fn), x)
for label, fn in recurrent.items():
    results[f"recurrent_activation={label}"] = takes_cudnn(
        keras.layers.LSTM(4, recurrent_activation=fn), x)
for args, cudnn in results.items():
    print(f"LSTM(4, {args:36}) cuDNN: {cudnn}")
# --8<-- [end:show]
assert list(results.values()) == [True, True, True, False, True, True, True, False], results
