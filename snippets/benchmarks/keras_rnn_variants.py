"""Keras LSTM and GRU: default (cuDNN-eligible) vs recurrent_dropout vs RNN(cell) vs unroll=True.

Times one training step and one inference call for each variant, on the same data, across
sequence lengths and numbers of units. On a CPU none of them uses cuDNN: the figures show what
each implementation costs on the machine that ran it.
"""
# snippet: timeout=300 exclusive
# --8<-- [start:show]
import numpy as np
import keras

import _bench  # timing and provenance helpers, next to this file

n = _bench.scale()
batch, features = 32 * n, 8
steps_sweep = [8, 32, 128]                # at the middle number of units
units_sweep = [16 * n, 64 * n, 128 * n]   # at the middle sequence length
middle = (steps_sweep[1], units_sweep[1])
by_steps = [(s, middle[1]) for s in steps_sweep]
by_units = [(middle[0], u) for u in units_sweep]
sizes = list(dict.fromkeys(by_steps + by_units))  # the middle size once
rng = np.random.default_rng(0)
data = {s: (rng.normal(size=(batch, s, features)).astype("float32"),  # same data for every variant
            rng.normal(size=(batch, 1)).astype("float32")) for s in steps_sweep}


# --8<-- [start:compare]
def variants(kind, units):
    layer = getattr(keras.layers, kind)           # keras.layers.LSTM or keras.layers.GRU
    cell = getattr(keras.layers, kind + "Cell")  # keras.layers.LSTMCell or GRUCell
    return [(f"{kind} default (cuDNN-eligible)", lambda: layer(units)),
            (f"{kind} recurrent_dropout=0.2", lambda: layer(units, recurrent_dropout=0.2)),
            (f"RNN({kind}Cell)", lambda: keras.layers.RNN(cell(units))),
            (f"{kind} unroll=True", lambda: layer(units, unroll=True))]


rows = []
for steps, units in sizes:
    x, y = data[steps]
    for kind in ("LSTM", "GRU"):
        for name, make in variants(kind, units):
            keras.utils.set_random_seed(0)
            model = keras.Sequential([keras.Input((steps, features)), make(), keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
            for mode, step in (("train", lambda: model.train_on_batch(x, y)),
                               ("inference", lambda: model.predict_on_batch(x))):
                timing = _bench.measure(step, warmup=2, repeats=11)
                rows.append({"name": name, "layer": kind, "mode": mode, "steps": steps,
                             "units": units, **timing})
# --8<-- [end:compare]


def default_of(r):
    return next(d for d in rows if d["name"].endswith("(cuDNN-eligible)") and
                all(d[k] == r[k] for k in ("layer", "mode", "steps", "units")))


# One block per layer and mode: the default layer's time in ms, then each variant's time
# divided by the default's at the same size (2.00x = twice as slow).
for kind in ("LSTM", "GRU"):
    for mode in ("train", "inference"):
        print(f"{kind} {mode:<22}" + "".join(f"{f'{s}x{u}':>9}" for s, u in sizes)
              + "   (steps x units)")
        for name, _ in variants(kind, units=0):
            cells = [r for r in rows if r["name"] == name and r["mode"] == mode]  # sizes order
            if name.endswith("(cuDNN-eligible)"):
                print(f"  {'default, ms':25}" + "".join(f"{r['median']:9.2f}" for r in cells))
            else:
                print(f"  {name.removeprefix(kind + ' '):25}"
                      + "".join(f"{r['median'] / default_of(r)['median']:8.2f}x" for r in cells))

# Chart 1: every variant at the middle size, in ms. Charts 2 and 3: the training step across
# each sweep, relative to the default layer of the same size.
_bench.write_result(
    "keras_rnn_variants",
    title=f"Keras LSTM/GRU variants (batch {batch}, {middle[0]} steps, {middle[1]} units)"
          + (", on a CPU no variant runs cuDNN" if _bench.provenance()["device"] == "CPU" else ""),
    metric="ms per call", lower_is_better=True,
    results=[{"variant": f"{r['name']} · {r['mode']}", **r} for r in rows
             if (r["steps"], r["units"]) == middle],
    grid=rows)  # every size, both modes: the table above
for axis, sweep, label, fixed in (("steps", by_steps, "sequence length (steps)",
                                   {"units": middle[1]}),
                                  ("units", by_units, "units", {"steps": middle[0]})):
    (other, value), = fixed.items()
    _bench.write_result(
        f"keras_rnn_variants_{axis}",
        title=f"Training step relative to the default layer, by {label} "
              f"(batch {batch}, {value} {other})"
              + (", on a CPU no variant runs cuDNN" if _bench.provenance()["device"] == "CPU" else ""),
        metric="time relative to the default layer (x)", lower_is_better=True,
        relative_to="the default layer", fixed=fixed, x_label=label, x_log=True,
        results=[_bench.relative(r, default_of(r), variant=r["name"], x=r[axis]) for r in rows
                 if r["mode"] == "train" and (r["steps"], r["units"]) in sweep
                 and r is not default_of(r)])
print("measured on", _bench.provenance()["machine"])
# --8<-- [end:show]
