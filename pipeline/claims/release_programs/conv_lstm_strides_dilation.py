"""ConvLSTM1D with strides=2 and dilation_rate=2, on a keras.Input: one line, `ok` (the layer
accepted it) or the error it raised (the release's own words)."""
import re

import keras


def plain(error):
    """The error's words on one line, without the terminal's bold (Keras wraps them in it)."""
    return " ".join(re.sub(r"\x1b\[[0-9;]*m", "", str(error)).split())


try:
    keras.layers.ConvLSTM1D(2, 3, strides=2, dilation_rate=2)(keras.Input((4, 10, 3)))
    print("ConvLSTM1D(strides=2, dilation_rate=2): ok")
except Exception as e:  # the error is the result
    print(f"ConvLSTM1D(strides=2, dilation_rate=2): {type(e).__name__}: {plain(e)}")
