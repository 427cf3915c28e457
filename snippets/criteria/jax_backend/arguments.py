"""JAX backend: the arguments that take cuDNN away, and GRU, which never has it."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "jax"  # Keras 3 on JAX; set before Keras is imported
import numpy as np

from _pretend_gpu import takes_cudnn  # runs Keras's own choice without a GPU

x = np.zeros((2, 5, 3), "float32")
# --8<-- [start:show]
import keras

L = keras.layers
cases = [
    ("LSTM(4)", L.LSTM(4), True),
    ("LSTM(4, dropout=0.2)  # training=True", L.LSTM(4, dropout=0.2), True),
    ("LSTM(4, recurrent_dropout=0.2)", L.LSTM(4, recurrent_dropout=0.2), False),
    ("LSTM(4, unroll=True)", L.LSTM(4, unroll=True), False),
    ("LSTM(4, use_bias=False)", L.LSTM(4, use_bias=False), False),
    ("LSTM(4, go_backwards=True, return_state=True)",
     L.LSTM(4, go_backwards=True, return_state=True), True),
    ("LSTM(4, stateful=True)", L.LSTM(4, stateful=True), True),
    ("GRU(4)", L.GRU(4), False),
    ("GRU(4, reset_after=False)", L.GRU(4, reset_after=False), False),
    ("RNN(LSTMCell(4))", L.RNN(L.LSTMCell(4)), False),
]
for label, layer, expected in cases:
    got = takes_cudnn(layer, x, training=True)
    print(f"{label:46} cuDNN: {got}")
    assert got == expected, label
print(f"Keras {keras.__version__}, backend {keras.backend.backend()}")
# --8<-- [end:show]
