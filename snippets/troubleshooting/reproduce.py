"""Four errors from the troubleshooting page, produced for real on this machine.

Run it as it is: python reproduce.py
"""
# snippet: timeout=240
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import re

# The sentence a search engine needs from each error.
PATTERNS = {"use_cudnn": r"use_cudnn=True was specified[^\n]*?implementation\.",
            "mask": r"You are passing a RNN mask[^\n]*?not supported\.",
            "xla": r"No registered '\w+' OpKernel for \w+ devices compatible with node",
            "xla_fit": r"graph __inference_(one_step_on_data)_.*?(No registered '\w+' OpKernel "
                       r"for \w+ devices compatible with node)"}


def print_sentences(errors):
    """Print that sentence of each error (Keras colours its messages: strip that)."""
    for name, pattern in PATTERNS.items():
        text = re.sub(r"\x1b\[[0-9;]*m", "", errors[name])
        found = re.search(pattern, text, re.S)
        print(f"{name}: {': '.join(found.groups()) or found.group(0)}")


# --8<-- [start:show]
import numpy as np
import tensorflow as tf
import keras
from keras.src.backend.tensorflow.rnn import _assert_valid_mask  # private: for this demo only

errors = {}

# 1. use_cudnn=True where cuDNN cannot run (here: no GPU) raises at the first call.
try:
    keras.layers.LSTM(4, use_cudnn=True)(np.zeros((2, 3, 5), "float32"))
except ValueError as e:
    errors["use_cudnn"] = str(e)

# 2. The check Keras 3 runs on a mask before calling cuDNN (on a GPU it runs inside the
#    layer). A left-padded row, as pad_sequences(padding="pre") makes, fails it.
try:
    _assert_valid_mask(tf.constant([[False, True, True]]))
except tf.errors.InvalidArgumentError as e:
    errors["mask"] = e.message

# 3. Keras's cuDNN LSTM inside an XLA-compiled function: XLA has no kernel for the op Keras
#    calls (CudnnRNNV3). This machine has no GPU, so tell Keras's TensorFlow backend it has one
#    (private: for this demo only); Keras then puts the same op in the graph as on a GPU.
import importlib
tf_rnn = importlib.import_module("keras.src.backend.tensorflow.rnn")
tf_rnn._is_gpu_available = lambda: True

lstm = keras.layers.LSTM(6)

@tf.function(jit_compile=True)
def run(x):
    return lstm(x)

try:
    run(tf.zeros([3, 5, 4]))
except tf.errors.InvalidArgumentError as e:
    errors["xla"] = e.message

# 4. The same error from Keras's own training step. An LSTM created in build() is not there
#    when compile() checks the layers, so compile(jit_compile=True) keeps XLA without a word.
class Model(keras.Model):
    def build(self, input_shape):
        self.rnn = keras.layers.LSTM(6)
        self.head = keras.layers.Dense(1)

    def call(self, x):
        return self.head(self.rnn(x))

model = Model()
model.compile("adam", "mse", jit_compile=True)
try:
    model.fit(np.zeros((4, 5, 4), "float32"), np.zeros((4, 1), "float32"), verbose=0)
except tf.errors.InvalidArgumentError as e:
    errors["xla_fit"] = e.message

print_sentences(errors)  # the sentence a search engine needs from each (above)
# --8<-- [end:show]

# Self-checks: each error happened, with the text the troubleshooting page quotes.
assert set(errors) == set(PATTERNS), errors
assert "No registered 'CudnnRNNV3' OpKernel for XLA_" in errors["xla"]
assert "one_step_on_data" in errors["xla_fit"] and "'CudnnRNNV3'" in errors["xla_fit"]
