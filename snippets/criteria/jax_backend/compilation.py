"""JAX backend: XLA and cuDNN go together. The compiled training step still chooses cuDNN."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "jax"  # Keras 3 on JAX; set before Keras is imported
import numpy as np

from _pretend_gpu import pretend_gpu  # runs Keras's own choice without a GPU

x, y = np.zeros((4, 5, 3), "float32"), np.zeros((4, 1), "float32")
# --8<-- [start:show]
import keras

with pretend_gpu() as calls:
    inputs = keras.Input((5, 3))
    model = keras.Model(inputs, keras.layers.Dense(1)(keras.layers.LSTM(4)(inputs)))
    model.compile("sgd", "mse")  # jit_compile="auto"
    model.fit(x, y, epochs=1, verbose=0)
print("jit_compile resolved to:", model.jit_compile)
print("every layer supports XLA:", all(l.supports_jit for l in model._flatten_layers()))
print("cuDNN chosen inside the compiled training step:", bool(calls))
# --8<-- [end:show]
assert model.jit_compile is True and calls
