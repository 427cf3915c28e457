"""A stateful LSTM in Keras 3: the fixed batch size it needs, the state it carries from one call
to the next, and the two errors a batch of another size gives (a direct call, and fit()'s last,
smaller batch). Run it as it is: python keras_stateful.py
"""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import re

import tensorflow as tf


def first_line(err):
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(getattr(err, "message", err)))  # Keras colours it
    return next(line.rstrip() for line in text.splitlines()
                if re.match(r"(When using|If an RNN|Incompatible shapes)", line))


# --8<-- [start:show]
import keras
import numpy as np

rng = np.random.default_rng(0)
x = rng.normal(size=(4, 10, 3)).astype("float32")  # 4 sequences of 10 steps

# 1. The layer keeps one state per row of the batch: the batch size must be fixed.
try:
    keras.Sequential([keras.Input((10, 3)), keras.layers.LSTM(8, stateful=True)])
    raise AssertionError("expected a ValueError")
except ValueError as err:
    print("keras.Input((10, 3)):       ValueError:", first_line(err))

model = keras.Sequential([keras.Input(batch_shape=(4, 5, 3)),  # batch of 4, 5 steps a call
                          keras.layers.LSTM(8, stateful=True)])
whole = keras.layers.LSTM(8)  # the same layer, not stateful, over all 10 steps at once
whole.build((4, 10, 3))
whole.set_weights(model.get_weights())

# 2. Two calls of 5 steps carry the state: the same as one call over the 10 steps.
model.layers[0].reset_state()
model(x[:, :5])
halves = model(x[:, 5:])
print("two calls of 5 steps:       same as one call of 10:",
      np.allclose(halves, whole(x), atol=1e-6))

# 3. Another batch size in a direct call (Keras 3.12 and newer check it).
try:
    model(x[:3, :5])
    raise AssertionError("expected a ValueError")
except ValueError as err:
    print("a batch of 3:               ValueError:", first_line(err))

# 4. fit() with 10 samples, batches of 4: the last batch holds 2.
model.compile("adam", "mse")
y = rng.normal(size=(12, 8)).astype("float32")
xs = rng.normal(size=(12, 5, 3)).astype("float32")
try:
    model.fit(xs[:10], y[:10], batch_size=4, verbose=0)
    raise AssertionError("expected an InvalidArgumentError")
except tf.errors.InvalidArgumentError as err:
    print("fit(), 10 samples:          InvalidArgumentError:", first_line(err))
model.fit(xs, y, batch_size=4, verbose=0)  # 12 samples: three full batches
print("fit(), 12 samples:          trains")
# --8<-- [end:show]
print(f"Keras {keras.__version__}, backend {keras.backend.backend()}")
assert np.allclose(halves, whole(x), atol=1e-6)
