"""RNN(LSTMCell(...)) never uses cuDNN, whatever its arguments."""
# snippet: timeout=120
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np

from _pretend_gpu import takes_cudnn  # runs Keras's own choice without a GPU

x = np.zeros((2, 5, 3), "float32")
# --8<-- [start:show]
import keras

wrapped = takes_cudnn(keras.layers.RNN(keras.layers.LSTMCell(4)), x)
layer = takes_cudnn(keras.layers.LSTM(4), x)
print(f"RNN(LSTMCell(4)) cuDNN: {wrapped}   LSTM(4) cuDNN: {layer}")
# --8<-- [end:show]
assert (wrapped, layer) == (False, True)
