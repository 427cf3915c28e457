"""PyTorch's nn.LSTM and nn.GRU on cuDNN as readers run them, on one GPU: strict FP32 (TF32 off),
PyTorch's default (cuDNN may use TF32), and autocast to FP16 and to BF16; inference and a
training step (forward and backward; no optimizer step). For each: device time per time step,
the same call replayed from a CUDA graph (what is left without host launches), the cuDNN
algorithm, math type and data type that ran (cuDNN's own log, in a process apart), and the
kernels the profiler saw. Timing, sizes and budget: _gpu_timing.py, next to this file.
"""
# snippet: timeout=900 needs=gpu exclusive
import contextlib
import sys

import torch
from torch import nn

import _gpu_timing  # the shared method of the RNN limit benchmarks, next to this file

LOG_CHILD = "--cudnn-log" in sys.argv  # this program again, logging cuDNN's calls
on_gpu = torch.cuda.is_available() if LOG_CHILD else _gpu_timing.gpu_or_exit(
    torch.cuda.is_available(), "PyTorch sees no CUDA device",
    "what cuDNN's RNNs reach is measured on a GPU only")
device = "cuda" if on_gpu else "cpu"
sync = torch.cuda.synchronize if on_gpu else (lambda: None)
gpu = _gpu_timing.torch_device() if on_gpu else None
# name: (the input's type in cuDNN, cuDNN allowed TF32, autocast to that type)
PRECISIONS = {"FP32 strict": ("float32", False, False),
              "FP32 default": ("float32", True, False),
              "FP16 autocast": ("float16", True, True),
              "BF16 autocast": ("bfloat16", True, True)}


# --8<-- [start:show]
# --8<-- [start:compare]
def make_call(cell):
    """One call of the layer as a reader writes it, in the cell's precision and mode."""
    dtype, tf32, autocast = PRECISIONS[cell["precision"]]
    torch.backends.cudnn.allow_tf32 = tf32  # PyTorch's default is True
    torch.backends.cuda.matmul.allow_tf32 = False  # PyTorch's default
    torch.manual_seed(0)
    units, steps, batch = cell["units"], cell["steps"], cell["batch"]
    rnn = getattr(nn, cell["layer"])(units, units, batch_first=True).to(device)
    x = torch.randn(batch, steps, units, device=device)
    if dtype == "float16" and not on_gpu:  # a dry run: oneDNN has no FP16 LSTM on the CPU
        dtype = "bfloat16"
    cast = (torch.autocast(device, dtype=getattr(torch, dtype), cache_enabled=False)
            if autocast else contextlib.nullcontext())

    def inference():
        with torch.no_grad(), cast:
            rnn(x)

    def train():  # gradients accumulate from call to call: the same work each time
        with cast:
            out = rnn(x)[0]
        out.float().square().mean().backward()

    return inference if cell["mode"] == "inference" else train
# --8<-- [end:compare]


def conditions(size, index):
    """Every cell of a size: LSTM in each precision and mode; GRU at the first two sizes."""
    layers = ("LSTM", "GRU") if index < 2 else ("LSTM",)
    return [{"framework": "PyTorch", "path": "nn." + layer, "layer": layer, "mode": mode,
             "precision": name, **size, "features": size["units"]}
            for layer in layers for name in PRECISIONS for mode in ("inference", "train")]


def time_cell(cell):
    call = make_call(cell)
    cell.update(_gpu_timing.torch_timings(call, on_gpu))
    cell.update(_gpu_timing.torch_kernels(call, on_gpu))
    dtype, tf32, _ = PRECISIONS[cell["precision"]]
    cell.update(dtype=dtype, tf32={"cudnn": tf32, "matmul": False},
                flops=_gpu_timing.flop_count(cell["layer"], cell["mode"], cell["steps"],
                                             cell["units"], cell["batch"], cell["features"]),
                expected={"forward": _gpu_timing.expected_algorithm(
                              cell["layer"], dtype, cell["units"], cell["features"],
                              cell["batch"], True, gpu),
                          "backward": _gpu_timing.expected_algorithm(
                              cell["layer"], dtype, cell["units"], cell["features"],
                              cell["batch"], False, gpu) if cell["mode"] == "train" else None,
                          "math_type": _gpu_timing.expected_math(dtype, tf32)})
    return _gpu_timing.finish_cell(cell)
# --8<-- [end:show]


if LOG_CHILD:
    _gpu_timing.cudnn_log_child(make_call, sync)
    sys.exit(0)

sizes = _gpu_timing.size_list()
index = {tuple(s.values()): i for i, s in enumerate(sizes)}
clocks_before = _gpu_timing.gpu_clocks()
TITLE = "PyTorch nn.LSTM/nn.GRU on cuDNN: per-step time by precision"


def notes(problem=None, drift=None, clocks_after=None, partial=False):
    return {"framework": "PyTorch", "torch": torch.__version__, "torch_cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version() if on_gpu else None,
            "gpu": gpu, "drift_ms": drift, "cudnn_log_problem": problem,
            "clocks": {"before": clocks_before, "after": clocks_after},
            **({"partial": True} if partial else {})}


cells, dropped = _gpu_timing.run_sizes(  # written after each size: a stopped run keeps them
    lambda s: conditions(s, index[tuple(s.values())]), time_cell, sizes, reserve=20,
    on_size=lambda done, left: _gpu_timing.write_cells("rnn_limits_torch", TITLE, done, left,
                                                       notes(partial=True)))
ran = _gpu_timing.timed(cells)
# The first cell again, at the end: how far the card drifted while this program ran.
again = time_cell(dict(conditions(sizes[0], 0)[0]))
drift = {"first": cells[0]["eager"]["median"] if ran and ran[0] is cells[0] else None,
         "last": again["eager"]["median"]}
algorithms, problem = _gpu_timing.logged_algorithms(
    [{k: c[k] for k in ("layer", "mode", "precision", "steps", "units", "batch")}
     for c in ran], timeout=120)
for cell, algo in zip(ran, algorithms):
    cell["algorithm"] = algo
print(f"{'layer':4} {'mode':9} {'precision':13} {'T/H/B':>12} {'µs/step':>8} {'graph':>8} "
      f"{'kernels/call':>12}  algorithm (forward; backward), math type [expected]")
for c in ran:
    algo = c["algorithm"] or {}
    seen = "; ".join(f"{a['algo']} {a['math_type']} {a['data_type']}" if a else "-"
                     for a in (algo.get("forward"), algo.get("backward")))
    graph = f"{c['graph_us_per_step']:8.2f}" if "graph_us_per_step" in c else f"{'-':>8}"
    print(f"{c['layer']:4} {c['mode']:9} {c['precision']:13} "
          f"{c['steps']:>4}/{c['units']}/{c['batch']:<4} {c['eager_us_per_step']:8.2f} {graph} "
          f"{c['launches_per_call']:12.0f}  {seen or '-'} [{c['expected']['forward']}; "
          f"{c['expected']['backward']}; {c['expected']['math_type']}]")
print(f"drift: the first cell took {drift['first'] or float('nan'):.4g} ms per call, again at "
      f"the end {drift['last']:.4g} ms" + (f"; cuDNN log: {problem}" if problem else ""))
_gpu_timing.write_cells("rnn_limits_torch", TITLE, cells, dropped,
                        notes(problem, drift, _gpu_timing.gpu_clocks()))
