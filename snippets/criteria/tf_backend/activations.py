"""Identity, not numbers: a function that computes tanh is not `tanh`."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np

from _pretend_gpu import takes_cudnn  # runs Keras's own choice without a GPU

x = np.zeros((2, 5, 3), "float32")
# --8<-- [start:show]
import keras
import tensorflow as tf

candidates = {
    '"tanh" (default)': "tanh",
    "tf.tanh": tf.tanh,
    "keras.ops.tanh": keras.ops.tanh,
    "lambda v: tf.tanh(v)": lambda v: tf.tanh(v),
    '"relu"': "relu",
}
verdicts = {}
for label, act in candidates.items():
    layer = keras.layers.LSTM(4, activation=act)
    verdicts[label] = takes_cudnn(layer, x)
    print(f"activation={label:24} cuDNN: {verdicts[label]}")
lam = keras.layers.LSTM(4, activation=lambda v: tf.tanh(v))
same = np.allclose(lam(x), keras.layers.LSTM(4)(x))  # both zero on zero input
print("the lambda computes the same numbers:", same, "- and still loses cuDNN")
# --8<-- [end:show]
assert verdicts == {'"tanh" (default)': True, "tf.tanh": True, "keras.ops.tanh": True,
                    "lambda v: tf.tanh(v)": False, '"relu"': False}, verdicts
assert same
