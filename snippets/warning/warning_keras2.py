"""The warning comes from Keras 2 (tf-keras) only, and only when a GPU is visible."""
# snippet: timeout=120
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # Keras 2: must be set before TensorFlow is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# --8<-- [start:show]
import logging

import tensorflow as tf
import tf_keras
from tf_keras.src.layers.rnn import gru_lstm_utils

print("tf.keras is Keras", tf_keras.__version__)
print("The text, from tf-keras's source:")
print("  " + gru_lstm_utils.CUDNN_NOT_AVAILABLE_MSG % "lstm")

# Build a layer that breaks a criterion and catch everything Keras logs.
records = []
handler = logging.Handler()
handler.emit = records.append
tf.get_logger().addHandler(handler)
layer = tf.keras.layers.LSTM(4, recurrent_dropout=0.2)
tf.get_logger().removeHandler(handler)

gpus = tf.config.list_logical_devices("GPU")
warned = any("will not use cuDNN" in r.getMessage() for r in records)
print(f"GPUs visible: {len(gpus)}; warning printed: {warned}")
print(f"layer._could_use_gpu_kernel = {layer._could_use_gpu_kernel}")
# --8<-- [end:show]
assert layer._could_use_gpu_kernel is False
assert warned == bool(gpus), "the warning is printed exactly when a GPU is visible"
