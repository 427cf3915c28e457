"""Keras 2 only: with eager execution disabled, no LSTM uses cuDNN."""
# snippet: timeout=120
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # Keras 2: must be set before TensorFlow is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# --8<-- [start:show]
import tensorflow as tf
import tf_keras

eager = tf.keras.layers.LSTM(4)._could_use_gpu_kernel
tf.compat.v1.disable_eager_execution()  # TF1-style graph mode
graph = tf.keras.layers.LSTM(4)._could_use_gpu_kernel
print(f"Keras {tf_keras.__version__}: eager -> cuDNN {eager}; "
      f"disable_eager_execution() -> cuDNN {graph}")
# --8<-- [end:show]
assert (eager, graph) == (True, False)
