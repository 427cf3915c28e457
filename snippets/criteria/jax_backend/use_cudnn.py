"""JAX backend: what use_cudnn=True does. It raises for an ineligible LSTM, not for a GRU."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "jax"  # Keras 3 on JAX; set before Keras is imported
import numpy as np

from _pretend_gpu import pretend_gpu  # runs Keras's own choice without a GPU

x = np.zeros((2, 5, 3), "float32")
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
    "GRU(4, use_cudnn=True)": outcome(L.GRU(4, use_cudnn=True)),
    "LSTM(4, use_cudnn=False)": outcome(L.LSTM(4, use_cudnn=False)),
}
for label, result in results.items():
    print(f"{label:37} {result}")
# --8<-- [end:show]
assert list(results.values()) == [
    "cuDNN", "ValueError (use_cudnn=True was specified...)", "generic loop, no error",
    "generic loop, no error"], results
