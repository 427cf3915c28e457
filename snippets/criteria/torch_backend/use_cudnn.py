"""PyTorch backend: use_cudnn=True does not always raise. An ineligible LSTM falls back in silence."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "torch"  # Keras 3 on PyTorch; set before Keras is imported
import numpy as np

from _pretend_gpu import cuda_looking, pretend_gpu  # runs Keras's own choice without a GPU

x = cuda_looking(np.zeros((2, 5, 3), "float32"))
# --8<-- [start:show]
import keras

def outcome(layer):
    """cuDNN, or what Keras does instead. (The recorder fails every cuDNN call, so a chosen
    cuDNN call counts as chosen whatever follows.)"""
    with pretend_gpu() as calls:
        try:
            layer(x)
            error = None
        except ValueError as err:
            assert "use_cudnn=True was specified" in str(err), err
            error = err
    if calls:
        return "cuDNN"
    return "ValueError (use_cudnn=True was specified...)" if error else "generic loop, no error"

L = keras.layers
results = {
    "LSTM(4, use_cudnn=True)": outcome(L.LSTM(4, use_cudnn=True)),
    "LSTM(4, unroll=True, use_cudnn=True)": outcome(L.LSTM(4, unroll=True, use_cudnn=True)),
    "LSTM(4, activation='relu', use_cudnn=True)":
        outcome(L.LSTM(4, activation="relu", use_cudnn=True)),
    "LSTM(4, recurrent_dropout=0.2, use_cudnn=True)":
        outcome(L.LSTM(4, recurrent_dropout=0.2, use_cudnn=True)),
    "GRU(4, reset_after=False, use_cudnn=True)":
        outcome(L.GRU(4, reset_after=False, use_cudnn=True)),
    "GRU(4, unroll=True, use_cudnn=True)": outcome(L.GRU(4, unroll=True, use_cudnn=True)),
}
for label, result in results.items():
    print(f"{label:47} {result}")
# --8<-- [end:show]
raises = "ValueError (use_cudnn=True was specified...)"
silent = "generic loop, no error"
assert list(results.values()) == ["cuDNN", silent, silent, raises, raises, silent], results
