"""Keras 2 only: tf-keras reads the device scope open where an LSTM runs; a tf.device("/CPU:0")
in your own code keeps it off cuDNN, whatever the GPU."""
# snippet: timeout=120
import contextlib
import importlib
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # Keras 2: must be set before TensorFlow is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import tf_keras

lstm_module = importlib.import_module("tf_keras.src.layers.rnn.lstm")


@contextlib.contextmanager
def gpu_listed():
    """tf-keras believes a GPU is listed (tf.config.list_logical_devices); every other decision
    is its own. Each LSTM call notes the kernel tf-keras picks, gpu_lstm (cuDNN) or
    standard_lstm, and runs the standard one on this CPU."""
    config = lstm_module.tf.config  # the TensorFlow API tf-keras calls
    saved = config.list_logical_devices, lstm_module.gpu_lstm, lstm_module.standard_lstm
    real_list, standard, picked = saved[0], saved[2], []

    def noted(name):
        def run(**kwargs):
            picked.append(name)
            kwargs.setdefault("zero_output_for_mask", True)
            return standard(**kwargs)
        return run
    config.list_logical_devices = lambda kind=None: ["GPU"] if kind == "GPU" else real_list(kind)
    lstm_module.gpu_lstm, lstm_module.standard_lstm = noted("gpu_lstm"), noted("standard_lstm")
    try:
        yield picked
    finally:
        config.list_logical_devices, lstm_module.gpu_lstm, lstm_module.standard_lstm = saved


x = np.ones((2, 5, 3), "float32")
# --8<-- [start:show]
class Encoder(tf_keras.Model):
    def __init__(self, device=None):
        super().__init__()
        self.lstm, self.device_name = tf_keras.layers.LSTM(4), device

    def call(self, x):
        if self.device_name is None:
            return self.lstm(x)
        with tf.device(self.device_name):  # a device scope in your own code
            return self.lstm(x)

picked = {}
for device in (None, "/CPU:0"):
    with gpu_listed() as kernels:  # a GPU listed; the choice is tf-keras's own
        Encoder(device)(x)
    picked[device] = kernels
    print(f"tf.device({device!r}) around the call: tf-keras runs {kernels}")
# --8<-- [end:show]
assert picked == {None: ["gpu_lstm"], "/CPU:0": ["standard_lstm"]}, picked
