"""recurrent_dropout takes cuDNN away; dropout does not (Keras >= 3.4)."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np

from _pretend_gpu import pretend_gpu, takes_cudnn  # runs Keras's own choice without a GPU

x = np.zeros((2, 5, 3), "float32")
ones = np.ones((64, 10, 8), "float32")
# --8<-- [start:show]
import keras

for kind in (keras.layers.LSTM, keras.layers.GRU):
    slow = takes_cudnn(kind(4, recurrent_dropout=0.2), x, training=True)
    fixed = takes_cudnn(kind(4, dropout=0.2), x, training=True)
    print(f"{kind.__name__}: recurrent_dropout=0.2 -> cuDNN {slow}; dropout=0.2 -> cuDNN {fixed}")
    assert (slow, fixed) == (False, True)
print(f"Keras {keras.__version__}: only recurrent_dropout breaks the criteria.")

# What the cuDNN kernel receives from LSTM(4, dropout=0.5): dropped inputs in training only.
layer = keras.layers.LSTM(4, dropout=0.5)
zeroed = {}
for training in (True, False):
    with pretend_gpu() as calls:
        layer(ones, training=training)
    zeroed[training] = float(np.mean(np.asarray(calls.inputs[0]) == 0))
print(f"share of inputs zeroed before cuDNN: training=True {zeroed[True]:.2f}, "
      f"training=False {zeroed[False]:.2f}")
# --8<-- [end:show]
assert 0.3 < zeroed[True] < 0.7 and zeroed[False] == 0.0, zeroed
