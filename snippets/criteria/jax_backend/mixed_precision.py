"""JAX backend: what mixed_float16 and mixed_bfloat16 do to an LSTM, and what jaxlib's cuDNN
LSTM accepts."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "jax"  # Keras 3 on JAX; set before Keras is imported
import types

import numpy as np

from _pretend_gpu import pretend_gpu  # runs Keras's own choice without a GPU

x = np.zeros((2, 5, 3), "float32")
# --8<-- [start:show]
import jax.experimental.rnn as jax_rnn
import jax.numpy as jnp
import jaxlib.mlir.ir as ir
import keras
from jaxlib import gpu_rnn  # jaxlib's code that turns the cuDNN LSTM into a GPU call

def keras_asks(policy):
    """The dtype Keras hands to jax.experimental.rnn.lstm (cuDNN) on a GPU."""
    keras.mixed_precision.set_dtype_policy(policy)
    seen = []
    with pretend_gpu():
        recorder = jax_rnn.lstm
        jax_rnn.lstm = lambda x, *a, **k: (seen.append(x.dtype.name), recorder(x, *a, **k))[1]
        keras.layers.LSTM(4)(x)
    return seen[0] if seen else "no cuDNN call"

def jaxlib_accepts(dtype):
    """Run jaxlib's own lowering rule for the cuDNN LSTM up to its dtype check."""
    aval = types.SimpleNamespace(dtype=jnp.dtype(dtype), shape=(2, 5, 4))
    ctx = types.SimpleNamespace(avals_out=[aval], avals_in=[aval])
    try:
        with ir.Context(), ir.Location.unknown():
            gpu_rnn._rnn_fwd_lowering(None, "cuda", ctx, *[None] * 5, input_size=3,
                                      hidden_size=4, num_layers=1, dropout=False,
                                      bidirectional=False, cudnn_allow_tf32=True)
    except ValueError as err:  # the dtype check
        return f"no: ValueError: {err}"
    except NameError as err:  # past the check: the next step needs jaxlib's CUDA plugin
        assert "compute_rnn_workspace_reserve_space_sizes" in str(err), err
        return "yes"

results = {}
for policy in ("float32", "mixed_float16", "mixed_bfloat16"):
    dtype = keras_asks(policy)
    results[policy] = dtype, jaxlib_accepts(dtype)
    print(f"{policy:15} Keras asks cuDNN for {dtype:9} jaxlib accepts it: {results[policy][1]}")
# --8<-- [end:show]
assert results == {"float32": ("float32", "yes"),
                   "mixed_float16": ("float16", "no: ValueError: Unknown output type float16"),
                   "mixed_bfloat16": ("bfloat16", "no: ValueError: Unknown output type bfloat16")}, results
