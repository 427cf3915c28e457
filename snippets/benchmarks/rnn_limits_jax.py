"""JAX on one GPU: the cuDNN LSTM of jax.experimental.rnn against an LSTM written as a jitted
lax.scan (the input projection done once for all steps, before the scan), on the same weights
and data; strict FP32 (precision HIGHEST: cuDNN's FMA math, FP32 matrix products in XLA) and
JAX's default (TF32 allowed in both); inference and a training step (the gradient of a loss
with respect to the weights). For each: time per time step (host clock around many calls,
one wait at the end: JAX has no events), the error against the FP32 reference, whether the
compiled program calls cuDNN's RNN, and the algorithm, math type and data type cuDNN logged
(in a process apart). Timing, sizes and budget: _gpu_timing.py, next to this file.
"""
# snippet: timeout=900 needs=gpu exclusive
import os

# cuDNN's log runs in a second process on the same GPU: neither takes 75 % of its memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import re
import sys
import time
from importlib.metadata import version

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import rnn

import _gpu_timing  # the shared method of the RNN limit benchmarks, next to this file

LOG_CHILD = "--cudnn-log" in sys.argv  # this program again, logging cuDNN's calls
on_gpu = jax.default_backend() == "gpu" if LOG_CHILD else _gpu_timing.gpu_or_exit(
    jax.default_backend() == "gpu", "JAX sees no GPU",
    "what JAX's cuDNN LSTM reaches is measured on a GPU only")
PRECISIONS = {"FP32 strict": lax.Precision.HIGHEST, "FP32 default": None}
if _gpu_timing.dry_run():  # each cell compiles: on a CPU, one precision shows the code works
    del PRECISIONS["FP32 default"]
PATHS = {"cuDNN": "jax.experimental.rnn.lstm (cuDNN)" if on_gpu else
         "jax.experimental.rnn.lstm_ref (the dry run's stand-in: no cuDNN on the CPU)",
         "scan": "lax.scan, jitted, projection hoisted"}


# --8<-- [start:show]
# --8<-- [start:compare]
def scan_lstm(x, w, units, precision):
    """An LSTM as a scan over time, the input projection done for all steps first."""
    w_ih, w_hh, b_ih, b_hh = (d[0] for d in rnn.unpack_lstm_weights(w, units, units, 1, False))
    gx = jnp.einsum("bti,gi->tbg", x, w_ih, precision=precision) + b_ih + b_hh

    def step(carry, g_t):
        h, c = carry
        i, f, g, o = jnp.split(g_t + jnp.dot(h, w_hh.T, precision=precision), 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h

    zeros = jnp.zeros((x.shape[0], units), x.dtype)
    return lax.scan(step, (zeros, zeros), gx)[1].swapaxes(0, 1)


def cudnn_lstm(x, w, units, precision):
    """jax.experimental.rnn's LSTM: cuDNN's on a GPU (its reference code on the CPU)."""
    batch, steps, _ = x.shape
    h0 = c0 = jnp.zeros((1, batch, units), x.dtype)
    lengths = jnp.full((batch,), steps, jnp.int32)
    if on_gpu:
        return rnn.lstm(x, h0, c0, w, lengths, units, units, 1, 0.0, False,
                        precision=precision)[0]
    weights = rnn.unpack_lstm_weights(w, units, units, 1, False)
    return rnn.lstm_ref(x, h0, c0, *weights, lengths, units, units, 1, 0.0, False)[0]
# --8<-- [end:compare]


def make(cell):
    """(the jitted function, its arguments) for the cell's path, precision and mode."""
    units, steps, batch = cell["units"], cell["steps"], cell["batch"]
    kx, kw = jax.random.split(jax.random.PRNGKey(0))
    w = rnn.init_lstm_weight(kw, units, units, 1, False)
    x = jax.random.normal(kx, (batch, steps, units))
    lstm = cudnn_lstm if cell["path"] == "cuDNN" else scan_lstm
    forward = lambda w, x: lstm(x, w, units, PRECISIONS[cell["precision"]])
    if cell["mode"] == "inference":
        return jax.jit(forward), (w, x)
    return jax.jit(jax.grad(lambda w, x: jnp.mean(jnp.square(forward(w, x))))), (w, x)
# --8<-- [end:show]


def call_for(cell):
    fn, args = make(cell)
    return lambda: jax.block_until_ready(fn(*args))


def runner(call):
    """run(k) for time_calls: k calls dispatched back to back, one wait, host clock."""
    def run(k):
        start = time.perf_counter()
        for _ in range(k):
            out = call()
        jax.block_until_ready(out)
        return time.perf_counter() - start
    return run


def conditions(size):
    return [{"framework": "JAX", "path": path, "label": PATHS[path], "layer": "LSTM",
             "mode": mode, "precision": name, **size, "features": size["units"]}
            for name in PRECISIONS for path in PATHS for mode in ("inference", "train")]


_REFERENCE = {}


def time_cell(cell):
    fn, args = make(cell)
    compiled = fn.lower(*args).compile()  # compiled once: timed, checked and read
    calls = sorted(set(re.findall(r'custom_call_target="([^"]+)"', compiled.as_text())))
    key = tuple(cell[k] for k in ("mode", "steps", "units", "batch"))
    if key not in _REFERENCE:  # the FP32 result (HIGHEST scan) on the same weights and data
        _REFERENCE[key] = make(dict(cell, path="scan", precision="FP32 strict"))[0](*args)
    got, want = compiled(*args), _REFERENCE[key]
    cell.update(eager=_gpu_timing.time_calls(runner(lambda: compiled(*args))), graph=None,
                error_vs_fp32_reference=float(jnp.linalg.norm(got - want)
                                              / jnp.linalg.norm(want)),
                custom_calls=calls, cudnn_in_program=any("cudnn_rnn" in c for c in calls),
                dtype="float32", tf32={"cudnn": cell["precision"] != "FP32 strict",
                                        "matmul": cell["precision"] != "FP32 strict"},
                flops=_gpu_timing.flop_count("LSTM", cell["mode"], cell["steps"],
                                             cell["units"], cell["batch"], cell["features"]))
    # jaxlib's cuDNN call: STANDARD always (jaxlib/gpu/rnn_kernels.cc), TF32 as asked.
    if cell["path"] == "cuDNN" and on_gpu:
        cell["expected"] = {"forward": "STANDARD", "math_type": "FMA_MATH" if cell["precision"]
                            == "FP32 strict" else "DEFAULT_MATH"}
    return _gpu_timing.finish_cell(cell)


if LOG_CHILD:
    _gpu_timing.cudnn_log_child(call_for, lambda: None)
    sys.exit(0)

TITLE = "JAX: cuDNN LSTM against a jitted scan, per-step time"


def notes(problem=None, partial=False):
    return {"framework": "JAX", "jax": jax.__version__, "jaxlib": version("jaxlib"),
            "device": str(jax.devices()[0]), "cudnn_log_problem": problem,
            **({"partial": True} if partial else {})}


sizes = _gpu_timing.size_list(limit=1 if _gpu_timing.dry_run() else 4)
cells, dropped = _gpu_timing.run_sizes(  # written after each size: a stopped run keeps them
    conditions, time_cell, sizes, reserve=20, on_size=lambda done, left: _gpu_timing.write_cells(
        "rnn_limits_jax", TITLE, done, left, notes(partial=True)))
cudnn = [c for c in _gpu_timing.timed(cells) if c["path"] == "cuDNN"]
algorithms, problem = _gpu_timing.logged_algorithms(
    [{k: c[k] for k in ("path", "mode", "precision", "steps", "units", "batch")}
     for c in cudnn], timeout=60)
for cell, algo in zip(cudnn, algorithms):
    cell["algorithm"] = algo
print(f"{'path':40} {'mode':9} {'precision':12} {'T/H/B':>12} {'µs/step':>9} {'rel. error':>10}"
      " cuDNN in the program (algorithm)")
for c in _gpu_timing.timed(cells):
    algo = (c.get("algorithm") or {}).get("forward")
    print(f"{c['label'][:40]:40} {c['mode']:9} {c['precision']:12} "
          f"{c['steps']:>4}/{c['units']}/{c['batch']:<4} {c['eager_us_per_step']:9.2f} "
          f"{c['error_vs_fp32_reference']:10.1e} {c['cudnn_in_program']}"
          + (f" ({algo['algo']} {algo['math_type']} {algo.get('fwd_mode')})" if algo else ""))
if problem:
    print(f"cuDNN log: {problem}")
_gpu_timing.write_cells("rnn_limits_jax", TITLE, cells, dropped, notes(problem))
