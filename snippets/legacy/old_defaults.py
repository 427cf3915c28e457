"""A model saved with the old defaults keeps them: the checker finds them after loading."""
# snippet: timeout=180
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# --8<-- [start:show]
import keras

import cudnn_check  # the site's checker, snippets/cudnn_check.py

# The layers Keras <= 2.2.5 built by default, written out: Keras 3 saves what you pass.
inputs = keras.Input((10, 3))
seq = keras.layers.LSTM(8, recurrent_activation="hard_sigmoid", return_sequences=True,
                        name="lstm")(inputs)
out = keras.layers.GRU(8, recurrent_activation="hard_sigmoid", reset_after=False,
                       name="gru")(seq)
keras.Model(inputs, out, name="old").save("old.keras")

model = keras.saving.load_model("old.keras")  # what you get back today
for layer in model.layers[1:]:
    config = layer.get_config()
    print(f"{layer.name}: recurrent_activation={config['recurrent_activation']!r}"
          + (f", reset_after={config['reset_after']}" if "reset_after" in config else ""))
print("check_model:", [(f.layer, f.criterion) for f in cudnn_check.check_model(model)])

# The same as the command line `python cudnn_check.py old.keras` (its main()), whose exit code
# 1 means that some layer falls back:
print("$ python cudnn_check.py old.keras")
status = cudnn_check.main(["old.keras"])
print("exit code:", status)
# --8<-- [end:show]
found = [(f.layer, f.criterion) for f in cudnn_check.check_model(model)]
assert ("old/lstm", "recurrent_activation") in found, found
assert ("old/gru", "recurrent_activation") in found and ("old/gru", "reset_after") in found
assert status == 1, status
