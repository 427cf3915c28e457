"""Three errors from the troubleshooting page, produced for real on this machine.

Run it as it is: python reproduce.py
"""
# snippet: timeout=240
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# --8<-- [start:show]
import re

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

# 3. A cuDNN RNN op inside an XLA-compiled function: XLA has no kernel for it.
@tf.function(jit_compile=True)
def cudnn_lstm(x, h, c, params):
    return tf.raw_ops.CudnnRNN(input=x, input_h=h, input_c=c, params=params,
                               rnn_mode="lstm")[0]

try:
    cudnn_lstm(tf.zeros([5, 3, 4]), tf.zeros([1, 3, 6]), tf.zeros([1, 3, 6]),
               tf.zeros([4 * 6 * (4 + 6) + 8 * 6]))
except tf.errors.InvalidArgumentError as e:
    errors["xla"] = e.message

# Print the sentence a search engine needs from each (Keras colours its messages: strip that).
patterns = {"use_cudnn": r"use_cudnn=True was specified[^\n]*?implementation\.",
            "mask": r"You are passing a RNN mask[^\n]*?not supported\.",
            "xla": r"No registered '\w+' OpKernel for \w+ devices compatible with node"}
for name, pattern in patterns.items():
    text = re.sub(r"\x1b\[[0-9;]*m", "", errors[name])
    print(f"{name}: {re.search(pattern, text).group(0)}")
# --8<-- [end:show]

# Self-checks: each error happened, with the text the troubleshooting page quotes.
assert set(errors) == set(patterns), errors
assert "No registered 'CudnnRNN' OpKernel for XLA_" in errors["xla"]
