"""One Keras LSTM training step: default arguments vs recurrent_dropout=0.2.

Default arguments keep the layer eligible for the cuDNN kernel on a GPU; recurrent_dropout > 0
makes it ineligible everywhere. On a CPU neither uses cuDNN: this measures what the two
implementations cost on the machine that runs it, and says which machine that is.
"""
# snippet: timeout=240 exclusive
# --8<-- [start:show]
import numpy as np
import keras

import _bench  # timing and provenance helpers, next to this file

n = _bench.scale()
batch, steps, features, units = 64 * n, 50, 16, 64 * n
rng = np.random.default_rng(0)
x = rng.normal(size=(batch, steps, features)).astype("float32")  # same data for every variant
y = rng.normal(size=(batch, 1)).astype("float32")

# --8<-- [start:compare]
results = []
for variant, kwargs in [("LSTM default (cuDNN-eligible)", {}),
                        ("LSTM recurrent_dropout=0.2", {"recurrent_dropout": 0.2})]:
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((steps, features)),
                              keras.layers.LSTM(units, **kwargs),
                              keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    timing = _bench.measure(lambda: model.train_on_batch(x, y), warmup=3, repeats=9)
    results.append({"variant": variant, **timing})
# --8<-- [end:compare]
    print(f"{variant:32} median {timing['median']:7.1f} ms per train step "
          f"(IQR {timing['q1']:.1f}-{timing['q3']:.1f})")

path = _bench.write_result(
    "lstm_recurrent_dropout",
    title=f"Keras LSTM train step (batch {batch}, {steps} steps, {units} units)"
          + (", on a CPU no variant runs cuDNN" if _bench.provenance()["device"] == "CPU" else ""),
    metric="ms per train step", results=results)
print(f"slowdown from recurrent_dropout: {results[1]['median'] / results[0]['median']:.2f}x")
print("measured on", _bench.provenance()["machine"])
# --8<-- [end:show]
