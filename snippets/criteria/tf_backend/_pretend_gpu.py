"""Keras 3's own kernel choice on the TensorFlow backend, on any machine.

Inside `pretend_gpu()`, Keras's cuDNN functions (`_cudnn_lstm`, `_cudnn_gru`) note each call
that reaches them, and the inputs Keras passes. Every decision before that (the layer's
`inner_loop`, the backend's `cudnn_ok`) is Keras's unchanged code.
- Without a GPU, Keras is told that a GPU is present (`_is_gpu_available`), and a noted call
  then runs Keras's own mask check and fails as a missing cuDNN op fails, so Keras falls back to
  its generic loop. This shows which path Keras *chooses*; it does not run cuDNN.
- With a GPU (Keras's own `_is_gpu_available()` says so), nothing is pretended: the noted call
  goes on into Keras's cuDNN function, and cuDNN runs.
"""
import contextlib
import importlib
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # before Keras is imported
import keras
import tensorflow as tf

assert keras.backend.backend() == "tensorflow", "KERAS_BACKEND was set to another backend first"
tf_rnn = importlib.import_module("keras.src.backend.tensorflow.rnn")
ON_GPU = tf_rnn._is_gpu_available()


class Calls(list):
    """The cuDNN functions Keras called ("lstm", "gru"), and the inputs it passed them."""
    def __init__(self):
        super().__init__()
        self.inputs = []


@contextlib.contextmanager
def pretend_gpu():
    calls = Calls()
    saved = tf_rnn._is_gpu_available, tf_rnn._cudnn_lstm, tf_rnn._cudnn_gru

    def noted(kind, cudnn):
        def call(inputs, *args, **kwargs):
            if ON_GPU:
                out = cudnn(inputs, *args, **kwargs)  # raises before cuDNN on a bad eager mask
            else:
                mask = args[5] if kind == "lstm" else args[4]  # positional, as Keras passes it
                if mask is not None:  # in eager mode an invalid mask raises here, and Keras
                    tf_rnn._assert_valid_mask(mask)  # falls back; in a graph it fails at run time
            calls.append(kind)
            calls.inputs.append(inputs)
            if ON_GPU:
                return out
            raise tf.errors.NotFoundError(None, None, "pretend_gpu: no GPU on this machine")
        return call

    tf_rnn._is_gpu_available = lambda: True
    tf_rnn._cudnn_lstm, tf_rnn._cudnn_gru = noted("lstm", saved[1]), noted("gru", saved[2])
    try:
        yield calls
    finally:
        tf_rnn._is_gpu_available, tf_rnn._cudnn_lstm, tf_rnn._cudnn_gru = saved


def takes_cudnn(layer, x, **call_kwargs) -> bool:
    """Does `layer(x)` call the cuDNN kernel on a GPU (Keras 3, TensorFlow backend)?"""
    with pretend_gpu() as calls:
        layer(x, **call_kwargs)
    return bool(calls)
