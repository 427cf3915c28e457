"""Keras LSTM and GRU: default (cuDNN-eligible) vs recurrent_dropout vs RNN(cell) vs unroll=True.

Times one training step and one inference call for each variant, on the same data. On a CPU none
of them uses cuDNN: the chart shows what each implementation costs on the machine that ran it.
"""
# snippet: timeout=240 exclusive
# --8<-- [start:show]
import numpy as np
import keras

import _bench  # timing and provenance helpers, next to this file

n = _bench.scale()
batch, steps, features, units = 64 * n, 30, 8, 64 * n
rng = np.random.default_rng(0)
x = rng.normal(size=(batch, steps, features)).astype("float32")  # same data for every variant
y = rng.normal(size=(batch, 1)).astype("float32")


def variants(kind):
    layer = getattr(keras.layers, kind)           # keras.layers.LSTM or keras.layers.GRU
    cell = getattr(keras.layers, kind + "Cell")  # keras.layers.LSTMCell or GRUCell
    return [(f"{kind} default (cuDNN-eligible)", lambda: layer(units)),
            (f"{kind} recurrent_dropout=0.2", lambda: layer(units, recurrent_dropout=0.2)),
            (f"RNN({kind}Cell)", lambda: keras.layers.RNN(cell(units))),
            (f"{kind} unroll=True", lambda: layer(units, unroll=True))]


results = []
for kind in ("LSTM", "GRU"):
    for name, make in variants(kind):
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((steps, features)), make(), keras.layers.Dense(1)])
        model.compile(optimizer="adam", loss="mse")
        for mode, step in (("train", lambda: model.train_on_batch(x, y)),
                           ("inference", lambda: model.predict_on_batch(x))):
            timing = _bench.measure(step, warmup=3, repeats=15)
            results.append({"variant": f"{name} · {mode}", "layer": kind, "mode": mode, **timing})

print(f"{'variant':44} {'median ms':>9}  {'IQR ms':>13}  vs default")
for r in results:
    default = next(d for d in results if d["layer"] == r["layer"] and d["mode"] == r["mode"])
    print(f"{r['variant']:44} {r['median']:9.2f}  {r['q1']:6.2f}-{r['q3']:<6.2f}"
          f"  {r['median'] / default['median']:5.2f}x")

_bench.write_result(
    "keras_rnn_variants",
    title=f"Keras LSTM/GRU variants (batch {batch}, {steps} steps, {units} units)",
    metric="ms per call", lower_is_better=True, results=results)
print("measured on", _bench.provenance()["machine"])
# --8<-- [end:show]
