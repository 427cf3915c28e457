"""JAX backend: any mask, even a right-padded one, means the generic loop."""
# snippet: timeout=120
import os
import sys

os.environ["KERAS_BACKEND"] = "jax"  # Keras 3 on JAX; set before Keras is imported
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from _pretend_gpu import pretend_gpu  # runs Keras's own choice without a GPU
from cudnn_check import check_mask

# --8<-- [start:show]
import keras

post = keras.utils.pad_sequences([[3, 7, 2], [5, 1]], padding="post")  # [[3 7 2] [5 1 0]]

def cudnn_called(mask_zero: bool) -> bool:
    model = keras.Sequential([keras.layers.Embedding(10, 4, mask_zero=mask_zero),
                              keras.layers.LSTM(4)])
    with pretend_gpu() as calls:
        model(post)
    return bool(calls)

print("no mask:                        cuDNN", cudnn_called(mask_zero=False))
print("right-padded mask (mask_zero):  cuDNN", cudnn_called(mask_zero=True))
print("check_mask:", [f.criterion for f in check_mask(post, padding_value=0, backend="jax")])
# --8<-- [end:show]
assert cudnn_called(False) and not cudnn_called(True)
assert [f.criterion for f in check_mask(post, padding_value=0, backend="jax")] == ["mask"]
