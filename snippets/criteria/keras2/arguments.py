"""Keras 2 (tf-keras): the layer's own verdict, `_could_use_gpu_kernel`, for each argument."""
# snippet: timeout=120
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # Keras 2: must be set before TensorFlow is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# --8<-- [start:show]
import tensorflow as tf
import tf_keras

L = tf.keras.layers  # tf-keras here, because of TF_USE_LEGACY_KERAS=1
cases = [
    ("LSTM(4)", L.LSTM(4), True),
    ("LSTM(4, activation=tf.tanh)", L.LSTM(4, activation=tf.tanh), True),
    ("LSTM(4, activation=lambda v: tf.tanh(v))", L.LSTM(4, activation=lambda v: tf.tanh(v)), False),
    ('LSTM(4, recurrent_activation="hard_sigmoid")',
     L.LSTM(4, recurrent_activation="hard_sigmoid"), False),
    ("LSTM(4, dropout=0.2)", L.LSTM(4, dropout=0.2), True),
    ("LSTM(4, recurrent_dropout=0.2)", L.LSTM(4, recurrent_dropout=0.2), False),
    ("LSTM(4, unroll=True)", L.LSTM(4, unroll=True), False),
    ("LSTM(4, use_bias=False)", L.LSTM(4, use_bias=False), False),
    ("GRU(4)", L.GRU(4), True),
    ("GRU(4, reset_after=False)", L.GRU(4, reset_after=False), False),
]
for label, layer, expected in cases:
    print(f"{label:46} _could_use_gpu_kernel: {layer._could_use_gpu_kernel}")
    assert layer._could_use_gpu_kernel == expected, label
print("tf.keras is Keras", tf_keras.__version__)
# --8<-- [end:show]
