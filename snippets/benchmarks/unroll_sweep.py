"""LSTM with the symbolic loop vs unroll=True, from short to long sequences.

For each sequence length: the time of one forward+backward pass, and what unrolling costs in
memory (TensorFlow's own count of the bytes its tensors hold at the peak of one pass), in graph
size (operations TensorFlow must build and keep) and in tracing time.
"""
# snippet: timeout=240 exclusive
# --8<-- [start:show]
import os
import time

# TensorFlow counts every CPU tensor only with its BFC allocator; without this, tensors under
# 256 KiB go uncounted and the peak below would miss most of them. A GPU always counts them all.
os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")

import numpy as np
import tensorflow as tf
import keras

import _bench  # timing and provenance helpers, next to this file

n = _bench.scale()
batch, features, units = 32 * n, 8, 32 * n
lengths = [4, 16, 64, 256]
device = "GPU:0" if tf.config.list_physical_devices("GPU") else "CPU:0"
rng = np.random.default_rng(0)

results = []
# --8<-- [start:compare]
for steps in lengths:
    x = tf.constant(rng.normal(size=(batch, steps, features)).astype("float32"))  # same data
    for variant, unroll in (("LSTM loop (unroll=False)", False), ("LSTM unroll=True", True)):
        keras.utils.set_random_seed(0)
        layer = keras.layers.LSTM(units, unroll=unroll)
        layer.build((batch, steps, features))

        @tf.function
        def forward_backward():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(layer(x, training=True) ** 2)
            return tape.gradient(loss, layer.trainable_variables)

        start = time.perf_counter()
        graph = forward_backward.get_concrete_function().graph  # traces once
        trace_s = time.perf_counter() - start
        run = lambda: [g.numpy() for g in forward_backward()]  # .numpy() waits for the result
        timing = _bench.measure(run, warmup=3, repeats=11)
# --8<-- [end:compare]
        peaks = []
        for _ in range(3):  # bytes held at the peak of one pass, above what was held before it
            before = tf.config.experimental.get_memory_info(device)["current"]
            tf.config.experimental.reset_memory_stats(device)
            run()
            peaks.append((tf.config.experimental.get_memory_info(device)["peak"] - before) / 2**20)
        results.append({"variant": variant, "x": steps, **timing, "trace_seconds": trace_s,
                        "graph_ops": len(graph.get_operations()),
                        "graph_kib": graph.as_graph_def().ByteSize() / 1024, "peak_mib": peaks})

print(f"{'steps':>5} {'loop ms':>8} {'unroll ms':>9} {'unroll/loop':>11}"
      f" {'peak MiB loop/unroll':>21} {'graph KiB loop/unroll':>22} {'trace s loop/unroll':>20}")
for steps in lengths:
    loop, unr = (r for r in results if r["x"] == steps)
    print(f"{steps:5} {loop['median']:8.2f} {unr['median']:9.2f} {unr['median'] / loop['median']:10.2f}x"
          f" {max(loop['peak_mib']):10.2f}/{max(unr['peak_mib']):<10.2f}"
          f" {loop['graph_kib']:10.0f}/{unr['graph_kib']:<11.0f} {loop['trace_seconds']:9.2f}/"
          f"{unr['trace_seconds']:.2f}")
median = {(r["x"], r["variant"]): r["median"] for r in results}
faster = [s for s in lengths
          if median[(s, "LSTM unroll=True")] < median[(s, "LSTM loop (unroll=False)")]]
print("verdict: unroll=True was faster at sequence lengths", faster or "none",
      "; its graph grows with the length, the loop's does not")

_bench.write_result(
    "unroll_sweep",
    title=f"LSTM forward+backward, loop vs unroll (batch {batch}, {units} units)"
          + (", on a CPU no variant runs cuDNN" if device == "CPU:0" else ""),
    metric="ms per forward+backward", lower_is_better=True,
    x_label="sequence length (steps)", x_log=True, results=results)
_bench.write_result(
    "unroll_memory",
    title="LSTM forward+backward, peak tensor memory, loop vs unroll "
          f"(batch {batch}, {units} units)"
          + (", on a CPU no variant runs cuDNN" if device == "CPU:0" else ""),
    metric="MiB held at the peak of one pass", lower_is_better=True,
    x_label="sequence length (steps)", x_log=True,
    results=[{"variant": r["variant"], "x": r["x"], **_bench.spread(r["peak_mib"])}
             for r in results])
print("measured on", _bench.provenance()["machine"])
# --8<-- [end:show]
