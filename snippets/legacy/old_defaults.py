"""A model saved with the old defaults keeps them: the checker finds them after loading."""
# snippet: timeout=180
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
SNIPPETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, SNIPPETS)
from cudnn_check import check_model  # snippets/cudnn_check.py, the site's checker

# --8<-- [start:show]
import subprocess

import keras

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
print("check_model:", [(f.layer, f.criterion) for f in check_model(model)])

# The same from the command line: exit code 1 means some layer falls back.
run = subprocess.run([sys.executable, os.path.join(SNIPPETS, "cudnn_check.py"), "old.keras"],
                     capture_output=True, text=True)
print(f"$ python cudnn_check.py old.keras   # exit code {run.returncode}")
print(run.stdout, end="")
# --8<-- [end:show]
found = [(f.layer, f.criterion) for f in check_model(model)]
assert ("old/lstm", "recurrent_activation") in found, found
assert ("old/gru", "recurrent_activation") in found and ("old/gru", "reset_after") in found
assert run.returncode == 1, (run.returncode, run.stderr)
