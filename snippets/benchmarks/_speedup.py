"""The cuDNN speed-up benchmark's shared half: the sweep, the timing, the statistics, the FLOP
count, the GPU's own matrix-multiply rate and the result files. Each framework's program
(cudnn_speedup_*.py) says how to run one layer on the cuDNN path and on the generic one.

What is measured, for each framework present:
- the same layer, weights and data on both paths, LSTM and GRU, a training step and inference,
  over sequence length, units and batch (one axis at a time around BASE);
- the two paths timed in turns (cuDNN, generic, cuDNN, ...), so that a change in the machine's
  load hits both; speed-up = generic time / cuDNN time, per pair of runs: median and spread;
- achieved TFLOP/s of the cuDNN path, and its fraction of the GPU's FP32 matrix-multiply rate
  measured by the same framework in the same process.

FLOPs (multiply-adds count 2; the gates' element-wise work is left out):
    inference      2 * G * B * T * H * (I + H)     G = 4 gates (LSTM) or 3 (GRU)
    training step  3 * that (forward, then the gradients of inputs and of weights)
with B batch, T steps, H units and I input features (I = H here).

FP32 throughout, TF32 off in every framework: both paths do the same arithmetic, and the
matrix-multiply rate is FP32's. Needs a GPU. BENCH_CPU_DRY_RUN=1 runs the same code on the CPU
at a tiny size to check it (the tests do): that measures nothing about cuDNN, says so, and is
never recorded.
"""
from __future__ import annotations

import os
import sys
import time

import _bench

BASE = {"steps": 64, "units": 256, "batch": 64}
SWEEP = {"steps": [16, 64, 256, 1024], "units": [64, 256, 1024], "batch": [8, 64, 512]}
DRY_BASE = {"steps": 4, "units": 8, "batch": 2}
DRY_SWEEP = {"steps": [4, 8], "units": [8], "batch": [2]}
LAYERS, MODES = ("LSTM", "GRU"), ("train", "inference")
GATES = {"LSTM": 4, "GRU": 3}
MATMUL_N = 8192


def dry_run() -> bool:
    """BENCH_CPU_DRY_RUN=1: the code on the CPU, tiny, for the tests. Never a measurement."""
    return os.environ.get("BENCH_CPU_DRY_RUN") == "1"


def use_gpu(on_gpu: bool, why: str,
            what: str = "the cuDNN speed-up is measured on a GPU only") -> bool:
    """Whether to run on the GPU. Exits 77 with one "needs a GPU:" line when the framework
    sees none (except in a dry run, which runs on the CPU)."""
    if dry_run():
        print("DRY RUN on the CPU (BENCH_CPU_DRY_RUN=1): checks the code, measures nothing "
              "about a GPU; its files are marked dry_run and no chart draws them.")
        return False
    if not on_gpu:
        print(f"needs a GPU: {why}; {what}.")
        sys.exit(77)
    return True


def deadline() -> float | None:
    """BENCH_DEADLINE (Unix time), set by a GPU run with a time budget: the sweep starts no
    size after it and times fewer repetitions (at least 3) to end by then. None otherwise."""
    value = os.environ.get("BENCH_DEADLINE")
    return float(value) if value else None


def sizes() -> list[dict]:
    """BASE, then one axis at a time, every size once, the cheapest first: a sweep cut short
    by its deadline loses the largest sizes."""
    base, sweep = (DRY_BASE, DRY_SWEEP) if dry_run() else (BASE, SWEEP)
    found = [dict(base)]
    for axis, values in sweep.items():
        for v in values:
            size = dict(base, **{axis: v})
            if size not in found:
                found.append(size)
    return found[:1] + sorted(found[1:], key=lambda s: s["steps"] * s["units"] ** 2 * s["batch"])


def flops(layer: str, mode: str, steps: int, units: int, batch: int, features: int) -> float:
    forward = 2.0 * GATES[layer] * batch * steps * units * (features + units)
    return forward * (3 if mode == "train" else 1)


def paired(cudnn_step, generic_step, sync, warmup: int = 2, repeats: int = 9) -> tuple:
    """Both paths warmed up, then timed in turns; ms per call for each, and the speed-up of
    each pair (generic / cuDNN)."""
    if _bench.quick() or dry_run():
        warmup, repeats = 1, 2
    for _ in range(warmup):
        start = time.perf_counter()
        cudnn_step(), generic_step()
        sync()
        pair = time.perf_counter() - start
    end = deadline()
    if end is not None:  # as many repetitions as fit before the deadline, at least 3
        repeats = max(3, min(repeats, int((end - time.time()) / pair)))
    fast, slow = [], []
    for _ in range(repeats):
        for step, out in ((cudnn_step, fast), (generic_step, slow)):
            start = time.perf_counter()
            step()
            sync()
            out.append((time.perf_counter() - start) * 1000)
    return (_bench.spread(fast), _bench.spread(slow),
            _bench.spread([g / c for g, c in zip(slow, fast)]))


def matmul_rate(matmul, sync, n: int = MATMUL_N, repeats: int = 5) -> dict:
    """The GPU's dense FP32 matrix-multiply rate in TFLOP/s, as this framework gets it:
    `matmul(n)` makes two n x n matrices and returns a call that multiplies them (2 n^3 FLOPs)."""
    if dry_run():
        n, repeats = 64, 2
    times = []
    multiply = matmul(n)
    multiply()
    sync()
    for _ in range(repeats):
        start = time.perf_counter()
        multiply()
        sync()
        times.append(time.perf_counter() - start)
    return {"n": n, **_bench.spread([2.0 * n ** 3 / t / 1e12 for t in times])}


# --8<-- [start:keras]
def keras3_paths(keras, jit_compile):
    """Keras 3, any backend: the same model, weights and data with use_cudnn="auto" (cuDNN
    where the backend has it) and use_cudnn=False (the backend's generic loop)."""
    import numpy as np

    def paths(layer, mode, size):
        units, steps, batch = size["units"], size["steps"], size["batch"]
        rng = np.random.default_rng(0)
        x = keras.ops.convert_to_tensor(rng.normal(size=(batch, steps, units)).astype("float32"))
        y = keras.ops.zeros((batch, units))
        models = []
        for use_cudnn in ("auto", False):
            keras.utils.set_random_seed(0)
            rnn = getattr(keras.layers, layer)(units, use_cudnn=use_cudnn)
            model = keras.Sequential([keras.Input((steps, units)), rnn])
            model.compile(optimizer=keras.optimizers.SGD(1e-3), loss="mse",
                          jit_compile=jit_compile)
            models.append(model)
        models[1].set_weights(models[0].get_weights())
        # Both return values on the host: each call waits for the GPU.
        if mode == "train":
            return tuple(lambda m=m: m.train_on_batch(x, y) for m in models)
        return tuple(lambda m=m: m.predict_on_batch(x) for m in models)

    return paths
# --8<-- [end:keras]


def keras_matmul(keras):
    """matmul(n) for run(), through keras.ops on the current backend; the sum brings one
    number back to the host, which waits for the product."""
    def matmul(n):
        a = keras.random.normal((n, n), seed=0)
        return lambda: float(keras.ops.convert_to_numpy(keras.ops.sum(keras.ops.matmul(a, a))))
    return matmul


def no_sync():
    """For calls that already wait for the device (they return values to the host)."""


def run(framework: str, paths, sync, matmul, layers=LAYERS, notes: dict | None = None,
        check=None) -> list:
    """Time every layer, mode and size. `paths(layer, mode, size)` returns (cudnn_step,
    generic_step); `sync()` waits for the device; `matmul(n)` returns a call multiplying two
    n x n matrices; `check(layer, mode, size, cudnn_step, generic_step)`, if given, checks the
    kernel each of the two calls about to be timed runs. Prints a table and writes the result
    files; returns the grid."""
    rate = matmul_rate(matmul, sync)
    print(f"{framework}: FP32 matrix multiply ({rate['n']}x{rate['n']}): "
          f"{rate['median']:.1f} TFLOP/s (median of {len(rate['samples'])})")
    print(f"{'layer':5} {'mode':9} {'steps':>5} {'units':>5} {'batch':>5} {'cuDNN ms':>9} "
          f"{'generic ms':>10} {'speed-up (IQR)':>17} {'TFLOP/s':>8} {'of matmul':>9}")
    grid, not_timed, end = [], [], deadline()
    for size in sizes():
        for layer in layers:
            for mode in MODES:
                if end is not None and time.time() >= end:
                    not_timed.append({"layer": layer, "mode": mode, **size})
                    continue
                cudnn_step, generic_step = paths(layer, mode, size)
                if check is not None:  # on the very calls that are timed next
                    check(layer, mode, size, cudnn_step, generic_step)
                fast, slow, ratio = paired(cudnn_step, generic_step, sync)
                work = flops(layer, mode, size["steps"], size["units"], size["batch"],
                             size["units"])
                tflops = work / (fast["median"] / 1000) / 1e12
                cell = {"framework": framework, "layer": layer, "mode": mode, **size,
                        "flops": work, "cudnn_ms": fast, "generic_ms": slow, "speedup": ratio,
                        "cudnn_tflops": tflops, "of_matmul": tflops / rate["median"]}
                grid.append(cell)
                print(f"{layer:5} {mode:9} {size['steps']:5} {size['units']:5} {size['batch']:5} "
                      f"{fast['median']:9.3f} {slow['median']:10.3f} "
                      f"{ratio['median']:6.2f}x ({ratio['q1']:.2f}-{ratio['q3']:.2f}) "
                      f"{tflops:8.3f} {100 * cell['of_matmul']:8.1f}%")
    if not_timed:
        print(f"not timed, past the run's deadline: {len(not_timed)} of "
              f"{len(not_timed) + len(grid)} cells (" + "; ".join(
                  f"{c['layer']} {c['mode']} {c['steps']}/{c['units']}/{c['batch']}"
                  for c in not_timed) + ")")
        notes = {**(notes or {}), "not_timed": not_timed}
    summary = summarize(framework, grid)
    for row in summary:
        print(f"summary: {row['variant']}: median speed-up {row['median']:.2f}x over "
              f"{len(row['samples'])} sizes (IQR {row['q1']:.2f}-{row['q3']:.2f}, "
              f"range {row['min']:.2f}-{row['max']:.2f})")
    write(framework, grid, summary, rate, notes or {})
    return grid


def summarize(framework: str, grid: list) -> list:
    """Per layer and mode: the spread of the speed-up over the sizes (each size's median)."""
    rows = []
    for layer in dict.fromkeys(c["layer"] for c in grid):
        for mode in MODES:
            medians = [c["speedup"]["median"] for c in grid
                       if c["layer"] == layer and c["mode"] == mode]
            if medians:
                rows.append({"variant": f"{framework} {layer} {mode}",
                             **_bench.spread(medians)})
    return rows


def write(framework: str, grid: list, summary: list, rate: dict, notes: dict) -> None:
    """The result files the benchmarks page draws; every framework's program writes the same
    names, so one chart shows them all side by side."""
    common = dict(framework=framework, matmul=rate, grid=grid, expects_gpu=True,
                  flops_formula="2*G*B*T*H*(I+H), x3 for a training step; G=4 LSTM, 3 GRU; I=H",
                  precision="FP32, TF32 off", **notes, **({"dry_run": True} if dry_run() else {}))
    base = DRY_BASE if dry_run() else BASE
    _bench.write_result("cudnn_speedup", title="cuDNN speed-up over the generic kernel "
                        "(median over the sizes; bars: IQR)", metric="speed-up (generic time / "
                        "cuDNN time)", lower_is_better=False, results=summary, **common)
    for axis, label in (("steps", "sequence length"), ("units", "units"), ("batch", "batch")):
        rows = [{"variant": f"{framework} {c['layer']} train", "x": c[axis], **c["speedup"]}
                for c in grid if c["mode"] == "train"
                and all(c[k] == v for k, v in base.items() if k != axis)]
        fixed = ", ".join(f"{k} {v}" for k, v in base.items() if k != axis)
        _bench.write_result(f"cudnn_speedup_{axis}", title=f"cuDNN speed-up by {label}, "
                            f"training step ({fixed})", metric="speed-up (generic / cuDNN)",
                            lower_is_better=False, x_label=label, x_log=True, results=rows,
                            **common)
    rows = []
    for c in grid:
        if c["steps"] == base["steps"] and c["batch"] == base["batch"]:
            share = [100 * c["flops"] / (ms / 1000) / 1e12 / rate["median"]
                     for ms in c["cudnn_ms"]["samples"]]
            rows.append({"variant": f"{framework} {c['layer']} {c['mode']}", "x": c["units"],
                         **_bench.spread(share)})
    _bench.write_result("cudnn_tflops", title="cuDNN path: share of the GPU's FP32 matrix-multiply "
                        f"rate, by units (steps {base['steps']}, batch {base['batch']})",
                        metric="% of the FP32 matmul rate measured in the same run",
                        lower_is_better=False, x_label="units", x_log=True, results=rows,
                        **common)
