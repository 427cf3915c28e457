"""XLA: a layer that can use cuDNN turns jit_compile="auto" off; cuDNN has no XLA kernel."""
# snippet: timeout=120
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from _pretend_gpu import pretend_gpu  # runs Keras's own choice without a GPU

# --8<-- [start:show]
import keras
from keras.src.trainers.trainer import model_supports_jit  # what jit_compile="auto" asks

def xla_allowed(**lstm_args):
    with pretend_gpu():  # the layer decides in __init__ whether a GPU + cuDNN is possible
        inputs = keras.Input((5, 3))
        model = keras.Model(inputs, keras.layers.LSTM(4, **lstm_args)(inputs))
    return model_supports_jit(model)

results = {args: xla_allowed(**dict(args)) for args in [
    (), (("use_cudnn", False),), (("unroll", True),), (("recurrent_dropout", 0.2),)]}
for args, allowed in results.items():
    label = ", ".join(f"{k}={v}" for k, v in args) or "defaults"
    print(f"LSTM({label}) on a GPU: XLA allowed by jit_compile='auto': {allowed}")
# --8<-- [end:show]
assert list(results.values()) == [False, True, True, False], results
print("On a CPU-only machine jit_compile='auto' is always False (Keras disables XLA there).")
