"""A stacked RNN (keras.layers.RNN over two LSTMCell) behind a Masking layer, called on an array
with padded steps: one line, `ok` or the error it raised (the release's own words)."""
import re

import numpy as np

import keras


def plain(error):
    """The error's words on one line, without the terminal's bold (Keras wraps them in it)."""
    return " ".join(re.sub(r"\x1b\[[0-9;]*m", "", str(error)).split())


x = np.ones((2, 5, 3), "float32")
x[0, 3:] = 0  # the first sequence is padded after 3 steps
model = keras.Sequential([keras.Input((5, 3)), keras.layers.Masking(),
                          keras.layers.RNN([keras.layers.LSTMCell(4), keras.layers.LSTMCell(4)])])
try:
    model(x)
    print("stacked RNN with a mask: ok")
except Exception as e:  # the error is the result
    print(f"stacked RNN with a mask: {type(e).__name__}: {plain(e)}")
