"""Keras 3 does not check eager mode: its cuDNN test has no such condition."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# --8<-- [start:show]
import importlib
import inspect

import keras

tf_rnn = importlib.import_module("keras.src.backend.tensorflow.rnn")
code = "".join(inspect.getsource(f) for f in (
    tf_rnn.cudnn_ok, tf_rnn._do_lstm_arguments_support_cudnn,
    tf_rnn._do_gru_arguments_support_cudnn, keras.layers.LSTM.inner_loop))
print(f"Keras {keras.__version__} cudnn_ok{inspect.signature(tf_rnn.cudnn_ok)}")
print("mentions eager execution:", "eager" in code.lower())
# --8<-- [end:show]
assert "eager" not in code.lower()
