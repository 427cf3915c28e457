"""unroll=True, use_bias=False, and GRU's reset_after=False each take cuDNN away; go_backwards,
return_state and stateful do not."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np

from _pretend_gpu import takes_cudnn  # runs Keras's own choice without a GPU

x = np.zeros((2, 5, 3), "float32")
# --8<-- [start:show]
import keras

cases = [
    ("LSTM(4, unroll=True)", keras.layers.LSTM(4, unroll=True), False),
    ("LSTM(4, use_bias=False)", keras.layers.LSTM(4, use_bias=False), False),
    ("GRU(4, reset_after=False)", keras.layers.GRU(4, reset_after=False), False),
    ("GRU(4)  # reset_after=True", keras.layers.GRU(4), True),
    ("LSTM(4, go_backwards=True, return_state=True)",
     keras.layers.LSTM(4, go_backwards=True, return_state=True), True),
    ("LSTM(4, stateful=True)", keras.layers.LSTM(4, stateful=True), True),
]
for label, layer, expected in cases:
    got = takes_cudnn(layer, x)
    print(f"{label:46} cuDNN: {got}")
    assert got == expected, label
# --8<-- [end:show]
