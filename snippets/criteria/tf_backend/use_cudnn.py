"""Keras 3: use_cudnn=True turns the silent fallback into an error; False opts out."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np

from _pretend_gpu import pretend_gpu, takes_cudnn  # runs Keras's own choice without a GPU

x = np.zeros((2, 5, 3), "float32")
# --8<-- [start:show]
import re

import keras

strict = keras.layers.LSTM(4, recurrent_dropout=0.2, use_cudnn=True)
try:
    with pretend_gpu():
        strict(x)
    raise AssertionError("no error")
except ValueError as err:
    message = str(err)
print("use_cudnn=True, recurrent_dropout=0.2 raises ValueError:")
line = [s for s in message.splitlines() if "use_cudnn=True" in s][0]
print(" ", re.sub(r"\x1b\[[0-9;]*m", "", line).strip())  # without terminal colour codes

print('use_cudnn="auto", eligible layer: cuDNN =', takes_cudnn(keras.layers.LSTM(4), x))
print("use_cudnn=False,  eligible layer: cuDNN =", takes_cudnn(keras.layers.LSTM(4, use_cudnn=False), x))
# --8<-- [end:show]
assert "use_cudnn=True was specified" in message
assert takes_cudnn(keras.layers.LSTM(4), x)
assert not takes_cudnn(keras.layers.LSTM(4, use_cudnn=False), x)
