"""What old code that uses CuDNNLSTM/CuDNNGRU gets today: Keras 3, then tf-keras."""
# snippet: timeout=180
import os
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# --8<-- [start:show]
# The lines old tutorials contain, run once with Keras 3 (the default on TF >= 2.16) and once
# with Keras 2 (tf-keras). A new process each time: TensorFlow reads TF_USE_LEGACY_KERAS when
# it is imported.
PROBE = r"""
import re
import keras, tensorflow as tf
print("  tf.keras comes from the package", tf.keras.layers.LSTM.__module__.split(".")[0])
for line in ["keras.layers.CuDNNLSTM",
             "tf.keras.layers.CuDNNLSTM",
             "tf.keras.layers.CuDNNGRU",
             "tf.compat.v1.keras.layers.CuDNNLSTM",
             "tf.compat.v1.keras.layers.CuDNNGRU",
             "from keras.layers import CuDNNLSTM",
             "from tensorflow.keras.layers import CuDNNLSTM"]:
    try:
        exec(line if line.startswith("from") else "found = " + line)
        print(f"  {line}: exists")
    except (AttributeError, ImportError) as err:
        message = re.sub(r" \(/.*\)$", "", str(err))  # drop the install path
        print(f"  {line}: {type(err).__name__}: {message}")
"""
for legacy in (False, True):
    env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    if legacy:
        env["TF_USE_LEGACY_KERAS"] = "1"
    print("TF_USE_LEGACY_KERAS=1 (Keras 2):" if legacy else "Keras 3 (TF_USE_LEGACY_KERAS unset):")
    run = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    print(run.stdout, end="")
# --8<-- [end:show]
