"""Two claims from elsewhere, tested: tf.contrib / rnn_mode, and "input size"."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np

from _pretend_gpu import takes_cudnn  # runs Keras's own choice without a GPU

# --8<-- [start:show]
import importlib.util

import keras
import tensorflow as tf

print("tensorflow.contrib exists:", importlib.util.find_spec("tensorflow.contrib") is not None)
try:
    keras.layers.LSTM(4, rnn_mode="cudnn")
    rnn_mode = "accepted"
except (TypeError, ValueError) as err:
    rnn_mode = f"rejected ({type(err).__name__})"
print("LSTM(..., rnn_mode=...):", rnn_mode)

# Sizes do not matter: every shape below takes the cuDNN path.
for batch, steps, features, units in [(1, 1, 1, 1), (3, 7, 5, 13), (64, 200, 300, 256)]:
    x = np.zeros((batch, steps, features), "float32")
    used = takes_cudnn(keras.layers.LSTM(units), x)
    print(f"batch {batch:3}, steps {steps:3}, features {features:3}, units {units:3}: cuDNN {used}")
    assert used
# --8<-- [end:show]
assert importlib.util.find_spec("tensorflow.contrib") is None
assert rnn_mode.startswith("rejected")
