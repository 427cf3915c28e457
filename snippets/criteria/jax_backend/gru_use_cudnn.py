"""JAX backend: when a GRU with use_cudnn=True raises, and what it runs when it does not."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "jax"  # Keras 3 on JAX; set before Keras is imported
import numpy as np

from _pretend_gpu import pretend_gpu  # runs Keras's own choice without a GPU

x = np.ones((2, 5, 3), "float32")
mask = np.array([[True] * 5, [True, True, True, False, False]])
# --8<-- [start:show]
import keras

def outcome(layer, **call_kwargs):
    """Raise, or run? (The JAX backend has no cuDNN GRU: jax.experimental.rnn offers only an
    LSTM, so a GRU that runs, runs Keras's lax.scan loop.)"""
    with pretend_gpu() as calls:
        try:
            layer(x, **call_kwargs)
        except ValueError as err:
            assert "use_cudnn=True was specified" in str(err), err
            return "ValueError (use_cudnn=True was specified...)"
    assert not calls, calls  # no cuDNN LSTM call either
    return "runs Keras's loop, no error"

GRU = keras.layers.GRU
results = {
    "GRU(4, use_cudnn=True)": outcome(GRU(4, use_cudnn=True)),
    "  activation='relu'": outcome(GRU(4, activation="relu", use_cudnn=True)),
    "  use_bias=False": outcome(GRU(4, use_bias=False, use_cudnn=True)),
    "  reset_after=False": outcome(GRU(4, reset_after=False, use_cudnn=True)),
    "  unroll=True": outcome(GRU(4, unroll=True, use_cudnn=True)),
    "  recurrent_dropout=0.2": outcome(GRU(4, recurrent_dropout=0.2, use_cudnn=True)),
    "  called with a mask": outcome(GRU(4, use_cudnn=True), mask=mask),
}
for label, result in results.items():
    print(f"{label:27} {result}")
# --8<-- [end:show]
raises = [label for label, r in results.items() if r.startswith("ValueError")]
assert raises == ["  reset_after=False", "  unroll=True", "  recurrent_dropout=0.2",
                  "  called with a mask"], results
