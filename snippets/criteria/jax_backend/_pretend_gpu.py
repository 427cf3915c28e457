"""Run Keras 3's own kernel choice on the JAX backend on a CPU-only machine.

Inside `pretend_gpu()`, Keras's JAX backend believes a GPU is present (`_is_gpu_available`), and
`jax.experimental.rnn.lstm`, the function that runs cuDNN's LSTM, is replaced by a recorder: it
notes the call, then raises the RuntimeError that Keras catches when cuDNN fails, so Keras falls
back to its generic loop. Every decision in between (the layer's `inner_loop`, the backend's
`cudnn_ok` and `lstm`, Bidirectional's fused path) is Keras's unchanged code.
This proves which path Keras *chooses*; it does not run cuDNN.
"""
import contextlib
import importlib
import os

os.environ["KERAS_BACKEND"] = "jax"  # before Keras is imported
import jax.experimental.rnn as jax_rnn
import keras

assert keras.backend.backend() == "jax", "KERAS_BACKEND was set to another backend first"
jax_backend_rnn = importlib.import_module("keras.src.backend.jax.rnn")


@contextlib.contextmanager
def pretend_gpu():
    calls = []
    saved = jax_backend_rnn._is_gpu_available, jax_rnn.lstm

    def recorder(*args, bidirectional=False, **kwargs):
        calls.append("bidirectional lstm" if bidirectional else "lstm")
        raise RuntimeError("pretend_gpu: no cuDNN on this machine")

    jax_backend_rnn._is_gpu_available = lambda: True
    jax_rnn.lstm = recorder  # Keras imports it from jax.experimental.rnn at each call
    try:
        yield calls
    finally:
        jax_backend_rnn._is_gpu_available, jax_rnn.lstm = saved


def takes_cudnn(layer, x, **call_kwargs) -> bool:
    """Would `layer(x)` call cuDNN on a GPU (Keras 3, JAX backend)?"""
    with pretend_gpu() as calls:
        layer(x, **call_kwargs)
    return bool(calls)
