"""An H5 file from Keras 2 with the old defaults: read it with tf-keras and run the checker."""
# snippet: timeout=180
import os
import sys

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # Keras 2: must be set before TensorFlow is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cudnn_check import check_model  # snippets/cudnn_check.py, the site's checker

# --8<-- [start:show]
import json

import h5py
import tensorflow as tf

# tf-keras's TF 1 API still has TF 1's defaults: hard_sigmoid, and reset_after=False for GRU.
L1 = tf.compat.v1.keras.layers
old = tf.keras.Sequential([tf.keras.Input((10, 3)), L1.LSTM(8, return_sequences=True, name="lstm"),
                           L1.GRU(8, name="gru")], name="old")
old.save("old.h5")

with h5py.File("old.h5", "r") as f:  # what the file says, without loading it
    for layer in json.loads(f.attrs["model_config"])["config"]["layers"][1:]:
        c = layer["config"]
        print(f"old.h5 {c['name']}: recurrent_activation={c['recurrent_activation']!r}"
              + (f", reset_after={c['reset_after']}" if "reset_after" in c else ""))

model = tf.keras.models.load_model("old.h5")  # tf-keras reads it; the checker follows Keras 2
print("check_model:", [(f.layer, f.criterion) for f in check_model(model)])

import keras  # Keras 3 cannot load this file at all

try:
    keras.saving.load_model("old.h5")
except ValueError as err:
    k3_error = str(err)
    print(f"Keras {keras.__version__}: ValueError: {k3_error}")
# --8<-- [end:show]
assert "Unrecognized keyword arguments passed to LSTM: {'time_major': False}" in k3_error
found = [(f.layer, f.criterion) for f in check_model(model)]
assert ("old/lstm", "recurrent_activation") in found, found
assert ("old/gru", "recurrent_activation") in found and ("old/gru", "reset_after") in found
