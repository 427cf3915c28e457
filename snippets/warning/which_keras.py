"""Which Keras does `tf.keras` give you? That decides whether you can see the warning at all."""
# snippet: timeout=120
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# --8<-- [start:show]
import tensorflow as tf

version = tf.keras.__version__  # Keras 3 on TF >= 2.16 unless TF_USE_LEGACY_KERAS=1
major = int(version.split(".")[0])
print(f"TensorFlow {tf.__version__}, tf.keras is Keras {version}")
print(f"TF_USE_LEGACY_KERAS={os.environ.get('TF_USE_LEGACY_KERAS', '(unset)')}")
if major >= 3:
    import keras
    print(f"Keras 3 on the {keras.backend.backend()} backend (KERAS_BACKEND): "
          "no cuDNN warning is ever printed; the fallback is silent.")
else:
    print("Keras 2: the warning is printed when a GPU is visible and a layer falls back.")
# --8<-- [end:show]
assert major == (2 if os.environ.get("TF_USE_LEGACY_KERAS") == "1" else 3), version
