"""A small and a large Keras LSTM training step, on the CPU and, when there is one, on the GPU.

On a machine without a GPU only the CPU half runs: the result file then holds CPU rows only, and
the script says that the GPU half needs a GPU. No GPU figure is ever estimated.
"""
# snippet: timeout=240 exclusive
# --8<-- [start:show]
import numpy as np
import tensorflow as tf
import keras

import _bench  # timing and provenance helpers, next to this file

n = _bench.scale()
sizes = {"small LSTM (batch 16, 32 units)": (16, 32),
         "large LSTM (batch 128, 256 units)": (128 * n, 256 * n)}
steps, features = 30, 8
devices = ["CPU"] + (["GPU"] if tf.config.list_physical_devices("GPU") else [])
rng = np.random.default_rng(0)

results = []
# --8<-- [start:compare]
for size, (batch, units) in sizes.items():
    x = rng.normal(size=(batch, steps, features)).astype("float32")  # same data on each device
    y = rng.normal(size=(batch, 1)).astype("float32")
    for device in devices:
        with tf.device(f"/{device}:0"):
            keras.utils.set_random_seed(0)
            model = keras.Sequential([keras.Input((steps, features)), keras.layers.LSTM(units),
                                      keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
            # train_on_batch returns the loss as a Python number: it waits for the device.
            timing = _bench.measure(lambda: model.train_on_batch(x, y), warmup=3, repeats=9)
        results.append({"variant": f"{size} on {device}", "device": device, "size": size,
                        **timing})
# --8<-- [end:compare]
        print(f"{size:34} on {device}: median {timing['median']:8.2f} ms per train step "
              f"(IQR {timing['q1']:.2f}-{timing['q3']:.2f})")

if "GPU" in devices:
    for size in sizes:
        cpu, gpu = (r["median"] for r in results if r["size"] == size)
        print(f"verdict: {size}: the GPU step took {gpu / cpu:.2f}x the CPU step's time")
else:
    print("GPU half: needs a GPU. No GPU is visible here, so no GPU measurement was taken.")

_bench.write_result(
    "cpu_vs_gpu", title=f"Keras LSTM train step, CPU vs GPU ({steps} steps), on a CPU no variant "
                        "runs cuDNN",
    metric="ms per train step", lower_is_better=True, expects_gpu=True, results=results)
print("measured on", _bench.provenance()["machine"])
# --8<-- [end:show]
