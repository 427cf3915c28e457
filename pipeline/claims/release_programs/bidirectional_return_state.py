"""Bidirectional(LSTM(return_state=True)), called on an array and on a keras.Input: one line
each, `ok` or the error it raised (the release's own words)."""
import re

import numpy as np

import keras


def plain(error):
    """The error's words on one line, without the terminal's bold (Keras wraps them in it)."""
    return " ".join(re.sub(r"\x1b\[[0-9;]*m", "", str(error)).split())


def attempt(what, call):
    try:
        call()
        print(f"{what}: ok")
    except Exception as e:  # the error is the result
        print(f"{what}: {type(e).__name__}: {plain(e)}")


def layer():
    return keras.layers.Bidirectional(keras.layers.LSTM(4, return_state=True))


attempt("array", lambda: layer()(np.zeros((2, 5, 3), "float32")))
attempt("keras.Input", lambda: layer()(keras.Input((5, 3))))
