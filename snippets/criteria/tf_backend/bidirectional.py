"""Bidirectional keeps the wrapped layer's use_cudnn (Keras >= 3.12)."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np

from _pretend_gpu import pretend_gpu  # runs Keras's own choice without a GPU

x = np.zeros((2, 5, 3), "float32")
# --8<-- [start:show]
import keras

for use_cudnn in ("auto", False):
    bi = keras.layers.Bidirectional(keras.layers.LSTM(4, use_cudnn=use_cudnn))
    with pretend_gpu() as calls:
        bi(x)
    print(f"Bidirectional(LSTM(4, use_cudnn={use_cudnn!r})): forward.use_cudnn="
          f"{bi.forward_layer.use_cudnn!r}, backward.use_cudnn={bi.backward_layer.use_cudnn!r}, "
          f"cuDNN calls: {len(calls)}")
    assert bi.backward_layer.use_cudnn == use_cudnn
    assert len(calls) == (2 if use_cudnn == "auto" else 0)
print(f"Keras {keras.__version__}")
# --8<-- [end:show]
