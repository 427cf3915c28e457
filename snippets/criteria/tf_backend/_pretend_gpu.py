"""Run Keras 3's own kernel choice on a CPU-only machine.

Inside `pretend_gpu()`, Keras's TensorFlow backend believes a GPU is present, and its cuDNN
functions (`_cudnn_lstm`, `_cudnn_gru`) are replaced by a recorder: it runs Keras's own mask
check, notes the call, then raises the same error a missing cuDNN op raises, so Keras falls
back to the generic loop exactly as it does when cuDNN is unavailable. Every decision in
between (the layer's `inner_loop`, the backend's `cudnn_ok`) is Keras's unchanged code.
This proves which path Keras *chooses*; it does not run cuDNN.
"""
import contextlib
import importlib
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # before Keras is imported
import keras
import tensorflow as tf

assert keras.backend.backend() == "tensorflow", "KERAS_BACKEND was set to another backend first"
tf_rnn = importlib.import_module("keras.src.backend.tensorflow.rnn")


class Calls(list):
    """The cuDNN functions Keras called ("lstm", "gru"), and the inputs it passed them."""
    def __init__(self):
        super().__init__()
        self.inputs = []


@contextlib.contextmanager
def pretend_gpu():
    calls = Calls()
    saved = tf_rnn._is_gpu_available, tf_rnn._cudnn_lstm, tf_rnn._cudnn_gru

    def recorder(kind):
        def fake(inputs, *args, **kwargs):
            mask = args[5] if kind == "lstm" else args[4]  # positional, as Keras passes it
            if mask is not None:  # in eager mode an invalid mask raises here, and Keras
                tf_rnn._assert_valid_mask(mask)  # falls back; in a graph it fails at run time
            calls.append(kind)
            calls.inputs.append(inputs)
            raise tf.errors.NotFoundError(None, None, "pretend_gpu: no cuDNN on this machine")
        return fake

    tf_rnn._is_gpu_available = lambda: True
    tf_rnn._cudnn_lstm, tf_rnn._cudnn_gru = recorder("lstm"), recorder("gru")
    try:
        yield calls
    finally:
        tf_rnn._is_gpu_available, tf_rnn._cudnn_lstm, tf_rnn._cudnn_gru = saved


def takes_cudnn(layer, x, **call_kwargs) -> bool:
    """Would `layer(x)` call the cuDNN kernel on a GPU (Keras 3, TF backend)?"""
    with pretend_gpu() as calls:
        layer(x, **call_kwargs)
    return bool(calls)
