"""PyTorch backend: Bidirectional LSTM and GRU run both directions in one cuDNN call (Keras >= 3.15)."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "torch"  # Keras 3 on PyTorch; set before Keras is imported
import numpy as np

from _pretend_gpu import cuda_looking, pretend_gpu  # runs Keras's own choice without a GPU

x = cuda_looking(np.zeros((2, 5, 3), "float32"))
# --8<-- [start:show]
import keras

def first_cudnn_call(layer):
    """What Keras asks cuDNN for first (the recorder then fails it, so Keras goes on)."""
    with pretend_gpu() as calls:
        layer(x, training=True)
    return calls[0] if calls else None

L = keras.layers
results = {
    "Bidirectional(LSTM(4))": first_cudnn_call(L.Bidirectional(L.LSTM(4))),
    "Bidirectional(GRU(4))": first_cudnn_call(L.Bidirectional(L.GRU(4))),
    "Bidirectional(LSTM(4, dropout=0.2))": first_cudnn_call(L.Bidirectional(L.LSTM(4, dropout=0.2))),
    "Bidirectional(GRU(4, reset_after=False))":
        first_cudnn_call(L.Bidirectional(L.GRU(4, reset_after=False))),
}
for label, call in results.items():
    print(f"{label:41} first cuDNN call: {call}")
print(f"Keras {keras.__version__}")
# --8<-- [end:show]
assert list(results.values()) == ["bidirectional lstm", "bidirectional gru", "lstm", None], results
