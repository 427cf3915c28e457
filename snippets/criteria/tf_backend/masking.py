"""Masks: cuDNN takes right-padded masks only, with no fully masked row."""
# snippet: timeout=120
import os
import sys

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numpy as np

from _pretend_gpu import pretend_gpu  # runs Keras's own choice without a GPU
from cudnn_check import check_mask

# --8<-- [start:show]
import keras
import tensorflow as tf

seqs = [[3, 7, 2], [5, 1]]
post = keras.utils.pad_sequences(seqs, padding="post")  # [[3 7 2] [5 1 0]]
pre = keras.utils.pad_sequences(seqs)  # default padding="pre": [[3 7 2] [0 5 1]]
print("post:", post.tolist(), "findings:", check_mask(post, padding_value=0))
print("pre: ", pre.tolist(), "findings:", [f.criterion for f in check_mask(pre, padding_value=0)])

def model_fit(batch):
    model = keras.Sequential([keras.layers.Embedding(10, 4, mask_zero=True),
                              keras.layers.LSTM(4), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    with pretend_gpu() as calls:
        try:
            model.fit(batch, np.zeros((len(batch), 1)), epochs=1, verbose=0)
            return f"trains, cuDNN called: {bool(calls)}"
        except tf.errors.InvalidArgumentError as err:
            return "InvalidArgumentError: " + err.message.split("[")[1].split(".")[0]

fit_post, fit_pre = model_fit(post), model_fit(pre)
print('fit on padding="post":', fit_post)
print('fit on padding="pre": ', fit_pre)
# --8<-- [end:show]
assert check_mask(post, padding_value=0) == []
assert [f.criterion for f in check_mask(pre, padding_value=0)] == ["mask_right_padded"]
assert [f.criterion for f in check_mask([[True, True], [False, False]])] == ["mask_fully_masked"]
assert fit_post == "trains, cuDNN called: True"
assert fit_pre.startswith("InvalidArgumentError: You are passing a RNN mask")
