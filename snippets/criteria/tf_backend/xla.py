"""XLA on TensorFlow: a layer that can use cuDNN turns XLA off for the model; cuDNN has no XLA kernel."""
# snippet: timeout=120
import os
import warnings

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from _pretend_gpu import pretend_gpu  # runs Keras's own choice without a GPU

# --8<-- [start:show]
import keras
from keras.src.trainers.trainer import model_supports_jit  # what jit_compile asks

def lstm_model(**lstm_args):
    with pretend_gpu():  # the layer decides in __init__ whether a GPU + cuDNN is possible
        inputs = keras.Input((5, 3))
        return keras.Model(inputs, keras.layers.LSTM(4, **lstm_args)(inputs))

results = {args: model_supports_jit(lstm_model(**dict(args))) for args in [
    (), (("use_cudnn", False),), (("unroll", True),), (("recurrent_dropout", 0.2),)]}
for args, allowed in results.items():
    label = ", ".join(f"{k}={v}" for k, v in args) or "defaults"
    print(f"LSTM({label}) on a GPU: model supports XLA: {allowed}")

model = lstm_model()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model.compile("sgd", "mse", jit_compile=True)
print("compile(jit_compile=True) warns:", [str(w.message) for w in caught])
print("model.jit_compile is now", model.jit_compile)
# --8<-- [end:show]
assert list(results.values()) == [False, True, True, False], results
assert model.jit_compile is False
assert any("Proceeding with `jit_compile=False`" in str(w.message) for w in caught)
print("On a CPU-only machine jit_compile='auto' is always False (Keras disables XLA there).")
