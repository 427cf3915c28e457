"""Keras 3 on PyTorch as readers run it, on one GPU: an LSTM (and a GRU at two sizes) under the
float32, mixed_float16 and mixed_bfloat16 policies, use_cudnn="auto"; predict_on_batch and
train_on_batch, which return to the host at every call (so no CUDA graph: each call is timed
as it comes). For each: device time per time step, the cuDNN algorithm, math type and data
type that ran (cuDNN's own log, in a process apart), the kernels the profiler saw, and whether
PyTorch warned that the weights are compacted at every call. Timing, sizes and budget:
_gpu_timing.py, next to this file.
"""
# snippet: timeout=900 needs=gpu exclusive
import os

os.environ["KERAS_BACKEND"] = "torch"  # this program measures one backend
import sys
import warnings

import numpy as np
import torch

import _gpu_timing  # the shared method of the RNN limit benchmarks, next to this file

LOG_CHILD = "--cudnn-log" in sys.argv  # this program again, logging cuDNN's calls
on_gpu = torch.cuda.is_available() if LOG_CHILD else _gpu_timing.gpu_or_exit(
    torch.cuda.is_available(), "PyTorch sees no CUDA device",
    "what Keras reaches on cuDNN is measured on a GPU only")
import keras  # noqa: E402  after the check: without a GPU the program stops before Keras loads
sync = torch.cuda.synchronize if on_gpu else (lambda: None)
gpu = _gpu_timing.torch_device() if on_gpu else None
POLICIES = {"float32": "float32", "mixed_float16": "float16", "mixed_bfloat16": "bfloat16"}


# --8<-- [start:show]
# --8<-- [start:compare]
def make_call(cell):
    """One predict_on_batch or train_on_batch of a model holding the layer, in the policy."""
    keras.mixed_precision.set_global_policy(cell["precision"])
    keras.utils.set_random_seed(0)
    units, steps, batch = cell["units"], cell["steps"], cell["batch"]
    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch, steps, units)).astype("float32")
    y = rng.normal(size=(batch, units)).astype("float32")
    model = keras.Sequential([keras.Input((steps, units)),
                              getattr(keras.layers, cell["layer"])(units, use_cudnn="auto")])
    model.compile(optimizer=keras.optimizers.SGD(1e-3), loss="mse")
    if cell["mode"] == "inference":
        return lambda: model.predict_on_batch(x)
    return lambda: model.train_on_batch(x, y)
# --8<-- [end:compare]


def conditions(size, index):
    layers = ("LSTM", "GRU") if index < 2 else ("LSTM",)
    return [{"framework": "Keras 3 (PyTorch)", "path": "keras.layers." + layer,
             "layer": layer, "mode": mode, "precision": policy, **size,
             "features": size["units"]}
            for layer in layers for policy in POLICIES for mode in ("inference", "train")]


def time_cell(cell):
    call = make_call(cell)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        call()
    cell["weights_compacted_every_call"] = any(
        "not part of single contiguous chunk" in str(w.message) for w in seen)
    cell.update(_gpu_timing.torch_timings(call, on_gpu, graph=False))
    cell.update(_gpu_timing.torch_kernels(call, on_gpu))
    dtype = POLICIES[cell["precision"]]
    tf32 = torch.backends.cudnn.allow_tf32  # as Keras leaves it: PyTorch's default
    cell.update(dtype=dtype, tf32={"cudnn": tf32, "matmul": torch.backends.cuda.matmul.allow_tf32},
                flops=_gpu_timing.flop_count(cell["layer"], cell["mode"], cell["steps"],
                                             cell["units"], cell["batch"], cell["features"]),
                expected={"forward": _gpu_timing.expected_algorithm(
                              cell["layer"], dtype, cell["units"], cell["features"],
                              cell["batch"], True, gpu),
                          "math_type": _gpu_timing.expected_math(dtype, tf32)})
    return _gpu_timing.finish_cell(cell)
# --8<-- [end:show]


if LOG_CHILD:
    _gpu_timing.cudnn_log_child(make_call, sync)
    sys.exit(0)

sizes = _gpu_timing.size_list(limit=1 if _gpu_timing.dry_run() else 4)
index = {tuple(s.values()): i for i, s in enumerate(sizes)}
TITLE = "Keras 3 on PyTorch: per-step time by precision policy"


def notes(problem=None, partial=False):
    return {"framework": "Keras 3 (PyTorch)", "keras": keras.__version__,
            "torch": torch.__version__, "torch_cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version() if on_gpu else None, "gpu": gpu,
            "cudnn_log_problem": problem, **({"partial": True} if partial else {})}


cells, dropped = _gpu_timing.run_sizes(  # written after each size: a stopped run keeps them
    lambda s: conditions(s, index[tuple(s.values())]), time_cell, sizes, reserve=25,
    on_size=lambda done, left: _gpu_timing.write_cells("rnn_limits_keras_torch", TITLE, done,
                                                       left, notes(partial=True)))
ran = _gpu_timing.timed(cells)
algorithms, problem = _gpu_timing.logged_algorithms(
    [{k: c[k] for k in ("layer", "mode", "precision", "steps", "units", "batch")}
     for c in ran], timeout=90)
for cell, algo in zip(ran, algorithms):
    cell["algorithm"] = algo
print(f"{'layer':4} {'mode':9} {'policy':14} {'T/H/B':>12} {'µs/step':>9} {'cuDNN':>5} "
      f"{'compacted':>9}  algorithm (forward; backward) [expected forward]")
for c in ran:
    algo = c["algorithm"] or {}
    seen = "; ".join(f"{a['algo']} {a['math_type']} {a['data_type']}" if a else "-"
                     for a in (algo.get("forward"), algo.get("backward")))
    print(f"{c['layer']:4} {c['mode']:9} {c['precision']:14} "
          f"{c['steps']:>4}/{c['units']}/{c['batch']:<4} {c['eager_us_per_step']:9.2f} "
          f"{str(c['cudnn_rnn_op']):>5} {str(c['weights_compacted_every_call']):>9}  {seen} "
          f"[{c['expected']['forward']}]")
if problem:
    print(f"cuDNN log: {problem}")
_gpu_timing.write_cells("rnn_limits_keras_torch", TITLE, cells, dropped, notes(problem))
