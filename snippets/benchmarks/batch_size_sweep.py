"""Throughput (samples per second) of a Keras LSTM training step as the batch grows.

Common advice is to use a smaller batch to speed up an LSTM that cannot use cuDNN. This measures
it: the non-cuDNN variant (recurrent_dropout=0.2) and the default one, from small to large
batches.
"""
# snippet: timeout=240 exclusive
# --8<-- [start:show]
import numpy as np
import keras

import _bench  # timing and provenance helpers, next to this file

n = _bench.scale()
steps, features, units = 20, 8, 32 * n
batches = [8, 32, 128, 512]
rng = np.random.default_rng(0)
x_all = rng.normal(size=(max(batches) * n, steps, features)).astype("float32")
y_all = rng.normal(size=(max(batches) * n, 1)).astype("float32")

# --8<-- [start:compare]
results = []
for variant, kwargs in (("LSTM recurrent_dropout=0.2 (never cuDNN)", {"recurrent_dropout": 0.2}),
                        ("LSTM default (cuDNN-eligible)", {})):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((steps, features)), keras.layers.LSTM(units, **kwargs),
                              keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    for b in batches:
        batch = b * n
        x, y = x_all[:batch], y_all[:batch]  # every variant sees the same samples
        timing = _bench.measure(lambda: model.train_on_batch(x, y), warmup=3, repeats=9)
        results.append({"variant": variant, "x": batch, **_bench.per_second(timing, batch)})
# --8<-- [end:compare]

print(f"{'variant':42} {'batch':>5} {'samples/s':>10} {'ms/step':>8}")
for r in results:
    print(f"{r['variant']:42} {r['x']:5} {r['median']:10.0f} {r['ms_median']:8.2f}")
for variant in dict.fromkeys(r["variant"] for r in results):
    rows = [r for r in results if r["variant"] == variant]
    best = max(rows, key=lambda r: r["median"])
    print(f"verdict: {variant}: batch {rows[-1]['x']} gave {rows[-1]['median'] / rows[0]['median']:.1f}x "
          f"the samples/s of batch {rows[0]['x']}; the fastest batch was {best['x']}")
    if "never cuDNN" in variant:  # the page's correction of a common claim rests on this
        assert rows[-1]["median"] > rows[0]["median"], "a smaller batch gave more samples/s"

_bench.write_result(
    "batch_size_sweep",
    title=f"Keras LSTM training throughput vs batch size ({steps} steps, {units} units)"
          + (", on a CPU no variant runs cuDNN" if _bench.provenance()["device"] == "CPU" else ""),
    metric="samples per second (higher is better)", lower_is_better=False,
    x_label="batch size", x_log=True, results=results)
print("measured on", _bench.provenance()["machine"])
# --8<-- [end:show]
