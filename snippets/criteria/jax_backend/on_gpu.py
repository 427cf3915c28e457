"""On a GPU: the compiled JAX program of an eligible LSTM holds cuDNN's RNN call (Keras 3, JAX)."""
# snippet: timeout=300 needs=gpu
import os
import sys

os.environ["KERAS_BACKEND"] = "jax"  # Keras 3 on JAX; set before Keras is imported
import jax

if jax.default_backend() != "gpu":
    print(f"needs a GPU: JAX runs on {jax.default_backend()}, cuDNN cannot run here.")
    sys.exit(77)
# --8<-- [start:show]
import jax.numpy as jnp
import keras

def cudnn_calls(layer, mask=None):
    """cuDNN custom calls in the program XLA compiles for this layer."""
    x = jnp.zeros((8, 20, 16))
    layer.build(x.shape)

    def run(trainable, non_trainable, x):
        return layer.stateless_call(trainable, non_trainable, x, mask=mask)[0]

    args = ([v.value for v in layer.trainable_variables],
            [v.value for v in layer.non_trainable_variables], x)
    text = jax.jit(run).lower(*args).compile().as_text()
    return sorted({word for word in text.replace('"', " ").split() if "dnn_rnn" in word})

print("LSTM(32):                 ", cudnn_calls(keras.layers.LSTM(32)))
print("LSTM(32), with a mask:    ", cudnn_calls(keras.layers.LSTM(32), mask=jnp.ones((8, 20), bool)))
print("LSTM(32, use_cudnn=False):", cudnn_calls(keras.layers.LSTM(32, use_cudnn=False)))
print("GRU(32):                  ", cudnn_calls(keras.layers.GRU(32)))
# --8<-- [end:show]
assert cudnn_calls(keras.layers.LSTM(32))
assert not cudnn_calls(keras.layers.LSTM(32), mask=jnp.ones((8, 20), bool))
assert not cudnn_calls(keras.layers.LSTM(32, use_cudnn=False))
assert not cudnn_calls(keras.layers.GRU(32))
