"""Keras 3 on the JAX backend: LSTM and GRU with use_cudnn="auto" vs use_cudnn=False, on the same
GPU. A layer whose "auto" path holds no cuDNN call in its compiled program is not timed: there
is nothing to compare. The model and timing are in _speedup.py."""
# snippet: timeout=1800 needs=gpu exclusive
import os

os.environ["KERAS_BACKEND"] = "jax"  # this program measures one backend
import jax
import keras

import _speedup  # the shared half of the benchmark, next to this file

on_gpu = _speedup.use_gpu(jax.default_backend() == "gpu", "JAX sees no GPU")
jax.config.update("jax_default_matmul_precision", "highest")  # FP32 on both paths (no TF32)


# --8<-- [start:show]
def cudnn_in_program(layer):
    """Whether the program XLA compiles for a model holding this layer calls cuDNN's RNN."""
    model = keras.Sequential([keras.Input((8, 16)), layer])
    weights = [v.value for v in model.trainable_variables]
    others = [v.value for v in model.non_trainable_variables]
    call = jax.jit(lambda w, o, x: model.stateless_call(w, o, x)[0])
    hlo = call.lower(weights, others, keras.ops.zeros((2, 8, 16))).compile().as_text()
    return "cudnn_rnn" in hlo


measured = []
for layer in ("LSTM", "GRU"):  # before timing anything: which path calls cuDNN
    auto = cudnn_in_program(getattr(keras.layers, layer)(16, use_cudnn="auto"))
    off = cudnn_in_program(getattr(keras.layers, layer)(16, use_cudnn=False))
    print(f"kernel check: {layer} use_cudnn='auto' calls cuDNN: {auto}; use_cudnn=False: {off}")
    assert not off and (auto or not on_gpu or layer == "GRU"), (layer, auto, off)
    if auto or not on_gpu:
        measured.append(layer)
    else:
        print(f"{layer}: no cuDNN kernel with use_cudnn='auto' on the JAX backend; not timed")
# --8<-- [end:show]

_speedup.run("Keras 3 (JAX)", _speedup.keras3_paths(keras, jit_compile=True),
             _speedup.no_sync, _speedup.keras_matmul(keras), layers=measured,
             notes={"keras": keras.__version__, "jax": jax.__version__})
