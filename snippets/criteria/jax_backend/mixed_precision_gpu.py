"""On a GPU: what fit() does with an LSTM under each dtype policy (Keras 3, JAX), and with the
two fixes the criteria page gives."""
# snippet: timeout=300 needs=gpu
import os
import sys

os.environ["KERAS_BACKEND"] = "jax"  # Keras 3 on JAX; set before Keras is imported
import jax

if jax.default_backend() != "gpu":
    print(f"needs a GPU: JAX runs on {jax.default_backend()}, cuDNN cannot run here.")
    sys.exit(77)
# --8<-- [start:show]
import keras
import numpy as np

x = np.random.default_rng(0).normal(size=(64, 20, 8)).astype("float32")
y = np.zeros((64, 1), "float32")

def fit_once(policy, **lstm_args):
    keras.mixed_precision.set_dtype_policy(policy)
    model = keras.Sequential([keras.Input((20, 8)), keras.layers.LSTM(16, **lstm_args),
                              keras.layers.Dense(1, dtype="float32")])
    model.compile("adam", "mse")  # default jit_compile: each step is compiled by XLA
    try:
        model.fit(x, y, epochs=1, batch_size=32, verbose=0)
    except Exception as err:  # report what a reader would see
        return f"fit fails: {type(err).__name__}: {str(err).strip().splitlines()[0][:100]}"
    return "fit runs"

results = {}
for policy in ("float32", "mixed_float16", "mixed_bfloat16"):
    results[policy] = fit_once(policy)
    print(f"{policy:15} LSTM(16):                    {results[policy]}")
print(f"{'mixed_bfloat16':15} LSTM(16, use_cudnn=False):   {fit_once('mixed_bfloat16', use_cudnn=False)}")
print(f"{'mixed_bfloat16':15} LSTM(16, dtype='float32'):   {fit_once('mixed_bfloat16', dtype='float32')}")
# --8<-- [end:show]
assert results["float32"] == "fit runs", results
