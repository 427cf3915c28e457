"""The checker's probe on Keras 3's JAX backend: a mask from Embedding(mask_zero=True)."""
# snippet: timeout=120
import os
import sys

os.environ["KERAS_BACKEND"] = "jax"  # Keras 3 on JAX; set before Keras is imported
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# --8<-- [start:show]
import keras
from cudnn_check import check_model

tokens = keras.Input((None,), dtype="int32")
x = keras.layers.Embedding(1000, 16, mask_zero=True)(tokens)  # a mask for the LSTM
model = keras.Model(tokens, keras.layers.LSTM(32, name="encoder")(x), name="tagger")

batch = keras.utils.pad_sequences([[4, 8, 15], [16, 23]], padding="post")
report = check_model(model, sample=batch)  # one call on your batch, a GPU pretended
print(report.probe)
for path, cls, verdict in report.layers:
    print(f"{path} ({cls}): {verdict}")
for finding in report:
    print(" ", finding)

static = check_model(model, probe=False)  # the layer's arguments alone
print("arguments alone:", static.layers[0][2])
# --8<-- [end:show]
assert [f.criterion for f in report] == ["mask"], report
assert static == [] and report.layers[0][2] == "falls back to the generic kernel"
