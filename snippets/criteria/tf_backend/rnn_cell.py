"""RNN(LSTMCell(...)) never uses cuDNN, whatever its arguments."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np

from _pretend_gpu import takes_cudnn  # runs Keras's own choice without a GPU

x = np.zeros((2, 5, 3), "float32")
# --8<-- [start:show]
import keras

L = keras.layers
wrapped = takes_cudnn(L.RNN(L.LSTMCell(4)), x)
stacked = takes_cudnn(L.RNN([L.LSTMCell(4), L.LSTMCell(4)]), x)  # StackedRNNCells
layers = takes_cudnn(keras.Sequential([L.LSTM(4, return_sequences=True), L.LSTM(4)]), x)
print(f"RNN(LSTMCell(4)) cuDNN: {wrapped}")
print(f"RNN([LSTMCell(4), LSTMCell(4)]) cuDNN: {stacked}")
print(f"two stacked LSTM(4) layers cuDNN: {layers}")
# --8<-- [end:show]
assert (wrapped, stacked, layers) == (False, False, True)
