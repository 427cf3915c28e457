"""recurrent_dropout takes cuDNN away; dropout does not (Keras >= 3.4)."""
# snippet: timeout=120
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np

from _pretend_gpu import takes_cudnn  # runs Keras's own choice without a GPU

x = np.zeros((2, 5, 3), "float32")
# --8<-- [start:show]
import keras

for kind in (keras.layers.LSTM, keras.layers.GRU):
    slow = takes_cudnn(kind(4, recurrent_dropout=0.2), x, training=True)
    fixed = takes_cudnn(kind(4, dropout=0.2), x, training=True)
    print(f"{kind.__name__}: recurrent_dropout=0.2 -> cuDNN {slow}; dropout=0.2 -> cuDNN {fixed}")
    assert (slow, fixed) == (False, True)
print(f"Keras {keras.__version__}: only recurrent_dropout breaks the criteria.")
# --8<-- [end:show]
