"""LSTM with the symbolic loop vs unroll=True, from short to long sequences.

For each sequence length: the time of one forward+backward pass, and what unrolling costs in
graph size (operations TensorFlow must build and keep) and in tracing time.
"""
# snippet: timeout=240 exclusive
# --8<-- [start:show]
import time

import numpy as np
import tensorflow as tf
import keras

import _bench  # timing and provenance helpers, next to this file

n = _bench.scale()
batch, features, units = 32 * n, 8, 32 * n
lengths = [4, 16, 64, 256]
rng = np.random.default_rng(0)

results = []
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
        timing = _bench.measure(lambda: [g.numpy() for g in forward_backward()],
                                warmup=3, repeats=11)  # .numpy() waits for the result
        results.append({"variant": variant, "x": steps, **timing, "trace_seconds": trace_s,
                        "graph_ops": len(graph.get_operations())})

print(f"{'steps':>5} {'loop ms':>8} {'unroll ms':>9} {'unroll/loop':>11}"
      f" {'graph ops loop/unroll':>22} {'trace s loop/unroll':>20}")
for steps in lengths:
    loop, unr = (r for r in results if r["x"] == steps)
    print(f"{steps:5} {loop['median']:8.2f} {unr['median']:9.2f} {unr['median'] / loop['median']:10.2f}x"
          f" {loop['graph_ops']:>10}/{unr['graph_ops']:<11} {loop['trace_seconds']:9.2f}/"
          f"{unr['trace_seconds']:.2f}")
median = {(r["x"], r["variant"]): r["median"] for r in results}
faster = [s for s in lengths
          if median[(s, "LSTM unroll=True")] < median[(s, "LSTM loop (unroll=False)")]]
print("verdict: unroll=True was faster at sequence lengths", faster or "none",
      "; its graph grows with the length, the loop's does not")

_bench.write_result(
    "unroll_sweep",
    title=f"LSTM forward+backward, loop vs unroll (batch {batch}, {units} units)",
    metric="ms per forward+backward", lower_is_better=True,
    x_label="sequence length (steps)", x_log=True, results=results)
print("measured on", _bench.provenance()["machine"])
# --8<-- [end:show]
