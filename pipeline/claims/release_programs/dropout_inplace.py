"""One epoch of fit() for GRU, SimpleRNN and LSTM with dropout, then with recurrent_dropout: one
line each, `ok` or the error it raised (the release's own words)."""
import re

import numpy as np

import keras


def plain(error):
    """The error's words on one line, without the terminal's bold (Keras wraps them in it)."""
    return " ".join(re.sub(r"\x1b\[[0-9;]*m", "", str(error)).split())

x = np.random.default_rng(0).random((4, 5, 3), dtype="float32")
y = np.zeros((4, 2), "float32")
for name in ("GRU", "SimpleRNN", "LSTM"):
    for argument in ("dropout", "recurrent_dropout"):
        model = keras.Sequential([keras.Input((5, 3)),
                                  getattr(keras.layers, name)(4, **{argument: 0.5}),
                                  keras.layers.Dense(2)])
        model.compile("sgd", "mse")
        try:
            model.fit(x, y, epochs=1, verbose=0)
            result = "ok"
        except Exception as e:  # the error is the result
            result = f"{type(e).__name__}: {plain(e)}"
        print(f"{name}({argument}=0.5): {result}")
