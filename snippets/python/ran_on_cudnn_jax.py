"""Did my Keras layer run on cuDNN? Keras 3 on JAX: the program XLA compiles for the model calls
cuDNN's RNN by name (cudnn_rnn) when it runs on cuDNN.
Run it as it is (python ran_on_cudnn_jax.py), then ask cudnn_in_program of your model.
"""
# snippet: timeout=240
import os

os.environ["KERAS_BACKEND"] = "jax"
# --8<-- [start:show]
import jax
import keras
import numpy as np


def compiled_program(model, x):
    """The program XLA compiles for model(x), as text."""
    weights = [v.value for v in model.trainable_variables]
    others = [v.value for v in model.non_trainable_variables]
    call = jax.jit(lambda w, o, x: model.stateless_call(w, o, x)[0])
    return call.lower(weights, others, x).compile().as_text()


def cudnn_in_program(model, x):
    return "cudnn_rnn" in compiled_program(model, x)


model = keras.Sequential([keras.Input((20, 8)), keras.layers.LSTM(16), keras.layers.Dense(1)])
x = np.zeros((4, 20, 8), "float32")
print("JAX runs on:", jax.default_backend())
print("cuDNN in the compiled program:", cudnn_in_program(model, x))
# --8<-- [end:show]
assert cudnn_in_program(model, x) == (jax.default_backend() == "gpu")
assert "while" in compiled_program(model, x) or jax.default_backend() == "gpu"  # Keras's loop
