"""Keras 3's own kernel choice on the JAX backend, on any machine.

Inside `pretend_gpu()`, `jax.experimental.rnn.lstm`, the function that runs cuDNN's LSTM, notes
each call that reaches it. Every decision before that (the layer's `inner_loop`, the backend's
`cudnn_ok` and `lstm`, Bidirectional's fused path) is Keras's unchanged code.
- Without a GPU, Keras's JAX backend is told that a GPU is present (`_is_gpu_available`), and a
  noted call then raises the RuntimeError that Keras catches when cuDNN fails, so Keras falls
  back to its generic loop. This shows which path Keras *chooses*; it does not run cuDNN.
- With a GPU (Keras's own `_is_gpu_available()` says so), nothing is pretended: the noted call
  goes on into `jax.experimental.rnn.lstm`, and cuDNN runs.
"""
import contextlib
import importlib
import os

os.environ["KERAS_BACKEND"] = "jax"  # before Keras is imported
import jax.experimental.rnn as jax_rnn
import keras

assert keras.backend.backend() == "jax", "KERAS_BACKEND was set to another backend first"
jax_backend_rnn = importlib.import_module("keras.src.backend.jax.rnn")
ON_GPU = jax_backend_rnn._is_gpu_available()


@contextlib.contextmanager
def pretend_gpu():
    calls = []
    saved = jax_backend_rnn._is_gpu_available, jax_rnn.lstm

    def noted(*args, bidirectional=False, **kwargs):
        out = saved[1](*args, bidirectional=bidirectional, **kwargs) if ON_GPU else None
        calls.append("bidirectional lstm" if bidirectional else "lstm")
        if ON_GPU:
            return out
        raise RuntimeError("pretend_gpu: no GPU on this machine")

    jax_backend_rnn._is_gpu_available = lambda: True
    jax_rnn.lstm = noted  # Keras imports it from jax.experimental.rnn at each call
    try:
        yield calls
    finally:
        jax_backend_rnn._is_gpu_available, jax_rnn.lstm = saved


def takes_cudnn(layer, x, **call_kwargs) -> bool:
    """Does `layer(x)` call cuDNN on a GPU (Keras 3, JAX backend)?"""
    with pretend_gpu() as calls:
        layer(x, **call_kwargs)
    return bool(calls)
