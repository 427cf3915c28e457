"""Keras 2 and Keras 3 define hard_sigmoid differently, so an old model loaded into Keras 3
already gives other numbers before you change anything."""
# snippet: timeout=180
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# --8<-- [start:show]
import keras  # Keras 3
import numpy as np
import tensorflow as tf
import tf_keras  # Keras 2


def row(values):
    return " ".join(f"{v:6.3f}" for v in values)


points = np.array([-3, -2.5, -1, 0, 1, 2.5, 3], "float32")
k2 = tf_keras.activations.hard_sigmoid(tf.constant(points)).numpy()
k3 = keras.ops.convert_to_numpy(keras.activations.hard_sigmoid(points))
print(f"{'x':30}{row(points)}")
print(f"{'tf-keras ' + tf_keras.__version__ + ' hard_sigmoid':30}{row(k2)}  = 0.2 x + 0.5, clipped")
print(f"{'Keras ' + keras.__version__ + ' hard_sigmoid':30}{row(k3)}  = x / 6 + 0.5, clipped")

# The same LSTM weights in both Keras versions, with recurrent_activation="hard_sigmoid".
rng = np.random.default_rng(0)
x = rng.normal(size=(4, 10, 3)).astype("float32")
old = tf_keras.layers.LSTM(8, recurrent_activation="hard_sigmoid")
old.build(x.shape)
weights = [rng.normal(scale=0.5, size=w.shape).astype("float32") for w in old.get_weights()]
old.set_weights(weights)
out_k2 = old(x).numpy()


def keras3_lstm(recurrent_activation):
    layer = keras.layers.LSTM(8, recurrent_activation=recurrent_activation)
    layer.build(x.shape)
    layer.set_weights(weights)
    return keras.ops.convert_to_numpy(layer(x))


def keras2_hard_sigmoid(v):  # Keras 2's formula, written with Keras 3 ops
    return keras.ops.clip(0.2 * v + 0.5, 0.0, 1.0)


for label, fn in [('"hard_sigmoid"', "hard_sigmoid"), ("Keras 2's formula", keras2_hard_sigmoid),
                  ('"sigmoid"', "sigmoid")]:
    diff = np.abs(keras3_lstm(fn) - out_k2).max()
    print(f"Keras 3 LSTM with {label:18}: max |output - Keras 2 output| = {diff:.1e}")
# --8<-- [end:show]
assert np.abs(keras3_lstm("hard_sigmoid") - out_k2).max() > 1e-2
assert np.abs(keras3_lstm(keras2_hard_sigmoid) - out_k2).max() < 1e-5
np.testing.assert_allclose(k2, np.clip(0.2 * points + 0.5, 0, 1), atol=1e-6)
np.testing.assert_allclose(k3, np.clip(points / 6 + 0.5, 0, 1), atol=1e-6)
