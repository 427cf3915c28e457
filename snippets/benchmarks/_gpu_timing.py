"""How the RNN limit benchmarks time a GPU (rnn_limits_*.py, rnn_alternatives.py): the sizes,
the timing, the time budget, the FLOP count, and what cuDNN and the profiler say ran.

- Device time: CUDA events around K back-to-back calls (K chosen so that a sample lasts at
  least SAMPLE_S), SAMPLES samples, median and quartiles of the time per call. A framework
  without events (JAX) is timed on the host clock around the K calls, with one wait at the
  end. Warm-up by time (WARMUP_S, and at least 2 calls), so that first-call work stays out.
- A CUDA-graph replay of the very same call, timed the same way: what is left when the host
  launches nothing. Eager time minus graph time is the host's launch and dispatch cost.
- A spread (quartiles, extremes) only from MIN_SPREAD samples or more; fewer give a median
  alone.
- The time budget (BENCH_DEADLINE, Unix time, set by a GPU run with --budget): every program
  times the sizes of SIZES in the same order, most wanted first, and every condition of a size
  or none of it. A size whose estimated cost would end past the deadline is dropped with every
  size after it: what each program timed is a prefix of SIZES, so two programs cut at
  different points still share their first sizes, whole.
- What ran: cuDNN's own API log names the algorithm, math type and data type of each call
  (cudnnSetRNNDescriptor_v8 before each cudnnRNNForward / cudnnRNNBackwardData_v8). Logging
  slows every cuDNN call, so it runs in a process of its own, never in the timed one. The
  profiler names the kernels of each timed call.
- FLOPs: input projection 2*G*B*T*H*I and recurrence 2*G*B*T*H*H (G = 4 LSTM, 3 GRU), x3
  for a training step; the element-wise gate work is left out.

BENCH_CPU_DRY_RUN=1 runs all of it on the CPU at tiny sizes to check the code (the tests do):
it measures nothing about a GPU, says so, and its files are marked dry_run.
"""
from __future__ import annotations

import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

import _bench

WARMUP_S, SAMPLE_S, SAMPLES = 0.2, 0.01, 11
MIN_SPREAD = 5  # fewer samples than this: a median, no spread
GATE_COUNT = {"LSTM": 4, "GRU": 3}
# (steps, units, batch), most wanted first; every program times a prefix of it (see above).
# Where PyTorch's choice of cuDNN algorithm changes (aten/src/ATen/native/cudnn/RNN.cpp,
# get_algo, read at pytorch/pytorch 00fc08aa; the GPU's torch 2.11 is checked by cuDNN's log):
# units <= 192 forward and <= 128 backward: PERSIST_STATIC_SMALL_H (LSTM, GRU; not double);
# FP16 only, 1 layer, one direction, units <= 1024 and units, input % 128 == 0, compute
# capability >= 8.0 with >= 98 SMs (not x.6), LSTM, batch % 8 == 0 and batch <= 128:
# PERSIST_STATIC; else STANDARD. The sizes straddle 128 | 192 | 256 units and batch 128 | 256.
SIZES = [
    (64, 256, 64),    # the anchor: the H200 speed-up records' centre point
    (128, 256, 64),   # readers' centre; FP16 goes PERSIST_STATIC here
    (128, 128, 64),   # PERSIST_STATIC_SMALL_H forward and backward
    (128, 192, 64),   # PERSIST_STATIC_SMALL_H forward, STANDARD backward
    (128, 512, 64),
    (128, 1024, 64),
    (128, 256, 128),  # FP16's last persistent batch
    (128, 256, 256),  # past it: STANDARD in every type
    (128, 256, 32),
    (512, 256, 64),   # steps: the per-call cost against the per-step one
    (128, 64, 64),    # FlashRNN's one-head (dense) size
    (128, 1024, 128), (128, 512, 128), (128, 128, 128), (128, 192, 128),
    (128, 1024, 256), (128, 512, 256), (128, 128, 256), (128, 192, 256),
    (128, 1024, 32), (128, 512, 32), (128, 128, 32), (128, 192, 32),
]
DRY_SIZES = [(4, 8, 2), (6, 16, 3)]
ALGORITHMS = ("STANDARD", "PERSIST_STATIC", "PERSIST_DYNAMIC", "PERSIST_STATIC_SMALL_H")


def dry_run() -> bool:
    """BENCH_CPU_DRY_RUN=1: the code on the CPU, tiny, for the tests. Never a measurement."""
    return os.environ.get("BENCH_CPU_DRY_RUN") == "1"


def gpu_or_exit(on_gpu: bool, why: str, what: str) -> bool:
    """Whether to run on the GPU. Exits 77 with one "needs a GPU:" line when the framework sees
    none, except in a dry run (which runs on the CPU and says so)."""
    if dry_run():
        print("DRY RUN on the CPU (BENCH_CPU_DRY_RUN=1): checks the code, measures nothing "
              "about a GPU; its files are marked dry_run and no chart draws them.")
        return False
    if not on_gpu:
        print(f"needs a GPU: {why}; {what}.")
        sys.exit(77)
    return True


def size_list(limit: int | None = None) -> list[dict]:
    """The sizes a program times, most wanted first (the first `limit`)."""
    sizes = DRY_SIZES if dry_run() else SIZES
    return [{"steps": t, "units": h, "batch": b} for t, h, b in sizes[:limit]]


def deadline() -> float | None:
    """BENCH_DEADLINE (Unix time) from a GPU run with a time budget, else None."""
    value = os.environ.get("BENCH_DEADLINE")
    return float(value) if value else None


class Budget:
    """Whole sizes, in order, while the time lasts. `admit(cells)` before a size of that many
    cells: False when its estimated cost (the slowest seconds per cell seen so far, with a
    margin) would end past the deadline less `reserve` seconds; once False, False for every
    later size. `spent(cells, seconds)` after a size. The first size is always tried."""

    MARGIN = 1.25

    def __init__(self, end: float | None, reserve: float = 0.0, clock=time.time):
        self.end, self.reserve, self.clock = end, reserve, clock
        self.per_cell: list[float] = []
        self.closed = False

    def admit(self, cells: int) -> bool:
        if self.closed:
            return False
        if self.end is None or not self.per_cell:
            return True
        estimate = cells * max(self.per_cell) * self.MARGIN
        if self.clock() + estimate > self.end - self.reserve:
            self.closed = True
        return not self.closed

    def spent(self, cells: int, seconds: float) -> None:
        self.per_cell.append(seconds / max(cells, 1))


def stats(samples_ms: list[float], **extra) -> dict:
    """Median of the samples (ms per call); quartiles and extremes from MIN_SPREAD samples on."""
    out = {"median": statistics.median(samples_ms), "n": len(samples_ms),
           "samples": list(samples_ms), **extra}
    if len(samples_ms) >= MIN_SPREAD:
        q1, _, q3 = statistics.quantiles(samples_ms, n=4, method="inclusive")
        out.update(q1=q1, q3=q3, min=min(samples_ms), max=max(samples_ms))
    return out


def time_calls(run, *, warmup_s: float = WARMUP_S, sample_s: float = SAMPLE_S,
               samples: int = SAMPLES, clock=time.perf_counter) -> dict:
    """`run(k)` makes k back-to-back calls and returns the seconds they took (device time).
    Warm-up for `warmup_s` of host time (at least 2 calls), then K calls per sample so that a
    sample lasts `sample_s`, `samples` samples: stats() of the ms per call, with K."""
    if dry_run():
        warmup_s, sample_s, samples = 0.0, 0.0, MIN_SPREAD
    started, warm = clock(), []
    while len(warm) < 2 or clock() - started < warmup_s:
        warm.append(run(1))
    per_call = statistics.median(warm[-3:])
    k = max(1, min(10_000, math.ceil(sample_s / per_call))) if per_call > 0 else 1
    times = [run(k) / k * 1000 for _ in range(samples)]
    return stats(times, calls_per_sample=k, warmup_calls=len(warm))


def summary_line(timing: dict) -> str:
    text = f"{timing['median']:.4g} ms"
    if "q1" in timing:
        text += f" (IQR {timing['q1']:.4g}-{timing['q3']:.4g})"
    return text + f", n={timing['n']}x{timing['calls_per_sample']}"


# --- PyTorch --------------------------------------------------------------------------------

def torch_runner(fn, on_gpu: bool):
    """run(k) for time_calls: k calls of fn between two CUDA events (host clock on the CPU)."""
    import torch
    if not on_gpu:
        def run(k):
            start = time.perf_counter()
            for _ in range(k):
                fn()
            return time.perf_counter() - start
        return run
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def run(k):
        start.record()
        for _ in range(k):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1000
    return run


def torch_graph(fn):
    """fn captured in a CUDA graph (after 3 calls on a side stream, as capture requires): a
    call that replays it. Raises what capture raises."""
    import torch
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def torch_timings(fn, on_gpu: bool, graph: bool = True) -> dict:
    """{"eager": timing, "graph": timing, or {"error": ...}, or None on the CPU}."""
    out = {"eager": time_calls(torch_runner(fn, on_gpu)), "graph": None}
    if on_gpu and graph:
        try:
            out["graph"] = time_calls(torch_runner(torch_graph(fn), on_gpu))
        except Exception as e:  # a capture that fails is a result, with its error
            out["graph"] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}
    return out


def torch_kernels(fn, on_gpu: bool, calls: int = 2) -> dict:
    """What the profiler saw in `calls` calls of fn: the CUDA kernels (name, launches and µs
    per call, most time first), launches per call, and whether aten::_cudnn_rnn ran."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    calls = 1 if dry_run() else calls
    with profile(activities=activities) as prof:
        for _ in range(calls):
            fn()
        if on_gpu:
            torch.cuda.synchronize()
    kernels: dict[str, list] = {}
    ops = set()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            k = kernels.setdefault(e.name, [0, 0.0])
            k[0] += 1
            k[1] += e.time_range.elapsed_us()
        else:
            ops.add(e.name)
    rows = sorted(({"name": n[:200], "per_call": c / calls, "us_per_call": us / calls}
                   for n, (c, us) in kernels.items()), key=lambda r: -r["us_per_call"])
    return {"kernels": rows[:12], "kernel_names": len(rows),
            "launches_per_call": sum(r["per_call"] for r in rows),
            "cudnn_rnn_op": "aten::_cudnn_rnn" in ops,
            "rnn_ops": sorted(o for o in ops if re.search(r"rnn|lstm|gru", o, re.I))[:12]}


def torch_device() -> dict:
    """The GPU as PyTorch's choice of algorithm sees it (compute capability, SM count)."""
    import torch
    p = torch.cuda.get_device_properties(0)
    return {"major": p.major, "minor": p.minor, "sm_count": p.multi_processor_count,
            "name": p.name}


# --- what PyTorch chooses, and what cuDNN says ran ------------------------------------------

def expected_algorithm(layer: str, dtype: str, units: int, features: int, batch: int,
                       forward: bool, gpu: dict | None, layers: int = 1,
                       bidirectional: bool = False, packed: bool = False,
                       proj: int = 0) -> str | None:
    """The algorithm PyTorch's get_algo() picks (RNN.cpp at pytorch/pytorch 00fc08aa:
    get_algo, use_rnn_persist_small_h, use_persist_common_heuristics,
    use_persist_device_heuristics), for compute capability 8.0 and later; None without a GPU.
    `dtype` is the input's: "float32", "float16", "bfloat16" or "float64"."""
    if gpu is None:
        return None
    if proj != 0 or packed:
        return "STANDARD"
    if dtype != "float64" and gpu["major"] >= 6 and layer in GATE_COUNT \
            and units <= (192 if forward else 128):
        return "PERSIST_STATIC_SMALL_H"
    if dtype == "float16" and layers == 1 and not bidirectional and units <= 1024 \
            and units % 128 == 0 and features % 128 == 0 and gpu["major"] >= 8 \
            and gpu["sm_count"] >= 98 and gpu["minor"] != 6 and layer == "LSTM" \
            and batch % 8 == 0 and batch <= 128:
        return "PERSIST_STATIC"
    return "STANDARD"


def expected_math(dtype: str, allow_tf32: bool) -> str:
    """The math type PyTorch passes to cudnnSetRNNDescriptor_v8 (ATen/cudnn/Descriptors.h,
    RNNDescriptor::set, as installed with torch 2.14.1): FP16 input -> TENSOR_OP; else TF32
    not allowed -> FMA (BF16 too); else DEFAULT."""
    if dtype == "float16":
        return "TENSOR_OP_MATH"
    return "DEFAULT_MATH" if allow_tf32 else "FMA_MATH"


def cudnn_log_env(path) -> dict:
    """What makes cuDNN 9 log every API call with its arguments to `path`. cuDNN 9 reads
    CUDNN_LOGLEVEL_DBG (0-3: 3 = info, warnings and errors) and CUDNN_LOGDEST_DBG (stdout,
    stderr or a file); CUDNN_LOGINFO_DBG=1 is cuDNN 8's, deprecated and honoured during 9."""
    return {"CUDNN_LOGLEVEL_DBG": "3", "CUDNN_LOGDEST_DBG": str(path)}


_CALL = re.compile(r"^([IWE])! CuDNN \(v(\d+)[^)]*\) function (\w+)\(\) called:")
_ARG = re.compile(r"^[iwe]!\s+(\w+): type=([^;]*); val=(.*?);?\s*$")
_ERROR = re.compile(r"^e!\s+Error: (\w+); Reason: (.*)$")


def parse_cudnn_log(text: str) -> list[dict]:
    """cuDNN's API log as [{"function", "level" (I, W or E), "version", "args": {name: value},
    "errors": [...]}], in call order. An enum's value is its name (CUDNN_LSTM), a number stays
    as written; the first of a name wins (a descriptor's fields come nested under its name)."""
    calls = []
    for line in text.splitlines():
        m = _CALL.match(line)
        if m:
            calls.append({"function": m.group(3), "level": m.group(1),
                          "version": int(m.group(2)), "args": {}, "errors": []})
            continue
        if not calls:
            continue
        a, e = _ARG.match(line), _ERROR.match(line)
        if a:
            value = re.sub(r" \((\d+|0x[0-9a-fA-F]+)\)$", "", a.group(3).strip())
            calls[-1]["args"].setdefault(a.group(1), value)
        elif e:
            calls[-1]["errors"].append(f"{e.group(1)}: {e.group(2).strip()}")
    return calls


def _short(value, prefix: str):
    return value[len(prefix):] if isinstance(value, str) and value.startswith(prefix) else value


def rnn_algorithms(calls: list[dict]) -> dict:
    """For the forward call (cudnnRNNForward) and the backward one (cudnnRNNBackwardData_v8)
    of an RNN: the algorithm, math type, data type and math precision of the descriptor it
    was given (logged with the call, nested under rnnDesc), the forward mode, and cuDNN's
    error if the call failed."""
    out = {"forward": None, "backward": None}
    for i, call in enumerate(calls):
        key = {"cudnnRNNForward": "forward", "cudnnRNNBackwardData_v8": "backward"}.get(
            call["function"])
        if key is None or call["level"] != "I" or out[key] is not None:
            continue
        args = call["args"]
        found = {"algo": _short(args.get("algo"), "CUDNN_RNN_ALGO_"),
                 "math_type": _short(args.get("mathMode") or args.get("mathType"), "CUDNN_"),
                 "data_type": _short(args.get("dataType"), "CUDNN_DATA_"),
                 "math_prec": _short(args.get("mathPrec"), "CUDNN_DATA_"),
                 "cell": _short(args.get("cellMode"), "CUDNN_"),
                 "hidden": args.get("hiddenSize"), "input": args.get("inputSize"),
                 "cudnn": call["version"]}
        if key == "forward":
            found["fwd_mode"] = _short(args.get("fwdMode"), "CUDNN_FWD_MODE_")
        after = calls[i + 1] if i + 1 < len(calls) else None
        if after and after["function"] == call["function"] and after["level"] == "E":
            found["error"] = "; ".join(after["errors"]) or "failed"
        out[key] = found
    return out


def logged_algorithms(cells: list[dict], timeout: float) -> tuple[list, str | None]:
    """Runs this program again (its --cudnn-log mode, cudnn_log_child) in a process of its own
    with cuDNN's API log on; each cell's call runs twice there and the second is read. Returns
    ([rnn_algorithms() of each cell, or None], the problem if there is no log). Not in a
    dry run: PyTorch, Keras and JAX call no cuDNN on the CPU."""
    if dry_run():
        return [None] * len(cells), "no cuDNN on the CPU (dry run): no log process"
    work = os.path.abspath(".cudnn-log")
    os.makedirs(work, exist_ok=True)
    asked, answer = os.path.join(work, "cells.json"), os.path.join(work, "algorithms.json")
    with open(asked, "w") as f:
        json.dump(cells, f)
    env = {**os.environ, **cudnn_log_env(os.path.join(work, "cudnn.log"))}
    env.pop("BENCH_DEADLINE", None)
    try:
        proc = subprocess.run([sys.executable, os.path.abspath(sys.argv[0]), "--cudnn-log",
                               asked, answer], env=env, capture_output=True, text=True,
                              timeout=max(timeout, 5))
    except subprocess.TimeoutExpired:
        return [None] * len(cells), f"the cuDNN log process ran past {timeout:.0f} s"
    if proc.returncode != 0 or not os.path.exists(answer):
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return [None] * len(cells), f"the cuDNN log process exited {proc.returncode}: {tail[:300]}"
    with open(answer) as f:
        return json.load(f), None


def cudnn_log_child(call_for, sync) -> None:
    """The --cudnn-log mode: argv = [..., "--cudnn-log", cells.json, answer.json]. For each
    cell, `call_for(cell)` gives its call; it runs twice, and the log written during the
    second call is parsed. Writes [rnn_algorithms() or None] to answer.json."""
    asked, answer = sys.argv[sys.argv.index("--cudnn-log") + 1:][:2]
    log = os.environ["CUDNN_LOGDEST_DBG"]
    with open(asked) as f:
        cells = json.load(f)
    found = []
    for cell in cells:
        call = call_for(cell)
        call()
        sync()
        start = os.path.getsize(log) if os.path.exists(log) else 0
        call()
        sync()
        if not os.path.exists(log):
            found.append(None)
            continue
        with open(log, errors="replace") as f:
            f.seek(start)
            found.append(rnn_algorithms(parse_cudnn_log(f.read())))
    with open(answer, "w") as f:
        json.dump(found, f)


# --- FLOPs, cells, files --------------------------------------------------------------------

def flop_count(layer: str, mode: str, steps: int, units: int, batch: int,
               features: int) -> dict:
    g = GATE_COUNT[layer]
    times = 3 if mode == "train" else 1
    projection = 2.0 * g * batch * steps * units * features * times
    recurrence = 2.0 * g * batch * steps * units * units * times
    return {"input_projection": projection, "recurrence": recurrence,
            "total": projection + recurrence}


def finish_cell(cell: dict) -> dict:
    """Adds per-step µs and TFLOP/s (eager and graph) from the cell's timings and sizes."""
    steps = cell["steps"]
    for key in ("eager", "graph"):
        t = cell.get(key)
        if t and "median" in t:
            cell[f"{key}_us_per_step"] = t["median"] / steps * 1000
            cell[f"{key}_tflops"] = cell["flops"]["total"] / (t["median"] / 1000) / 1e12
    if cell.get("graph") and "median" in cell["graph"] and "median" in cell.get("eager", {}):
        cell["launch_share"] = 1 - cell["graph"]["median"] / cell["eager"]["median"]
    return cell


def gpu_clocks() -> dict | None:
    """The GPU's clocks, temperature, power and throttle reasons (NVML), or None."""
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        return {"sm_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                "mem_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
                "temperature_c": pynvml.nvmlDeviceGetTemperature(h, 0),
                "power_w": pynvml.nvmlDeviceGetPowerUsage(h) / 1000,
                "throttle_reasons": pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(h)}
    except Exception:
        return None


def write_cells(benchmark: str, title: str, cells: list, dropped: list, notes: dict) -> None:
    """BENCHMARK.json: every cell with all its conditions ("cells"), the sizes the budget left
    out ("not_timed"), and for charts one row per cell with a spread: per-step µs (eager)."""
    rows = [{"variant": f"{c['path']} {c['layer']} {c['mode']} {c['precision']}",
             "x": c["units"], **{k: c["eager"][k] / c["steps"] * 1000
                                 for k in ("median", "q1", "q3", "min", "max")},
             "samples": [s / c["steps"] * 1000 for s in c["eager"]["samples"]]}
            for c in cells if "q1" in (c.get("eager") or {})]
    _bench.write_result(
        benchmark, title=title, metric="µs per time step (device time, eager calls)",
        lower_is_better=True, x_label="units", x_log=True, results=rows, cells=cells,
        not_timed=dropped, expects_gpu=True, sizes_order=[list(s) for s in SIZES],
        timing={"warmup_s": WARMUP_S, "sample_s": SAMPLE_S, "samples": SAMPLES,
                "min_spread": MIN_SPREAD},
        flops_formula="input projection 2*G*B*T*H*I + recurrence 2*G*B*T*H*H, x3 for a "
                      "training step; G=4 LSTM, 3 GRU", **notes,
        **({"dry_run": True} if dry_run() else {}))


def run_sizes(conditions, time_cell, sizes: list[dict], reserve: float = 0.0,
              clock=time.time, on_size=None) -> tuple[list, list]:
    """Times every condition of each size, sizes in order, within the deadline (Budget).
    `conditions(size)` lists the cells of a size (dicts); `time_cell(cell)` times one and
    returns it. A cell that raises is kept, with status "error" and the library's words (a
    configuration the library refuses is a result, and the cells before it are not lost). Past
    the deadline less `reserve`, the rest of a size is kept as "left_out": only the first cell
    always runs. `on_size(cells, not_timed)` after each size (a program writes what it has, so
    that a run stopped later keeps it). Returns (cells, sizes not timed)."""
    budget = Budget(deadline(), reserve, clock)
    cells, dropped = [], []
    for i, size in enumerate(sizes):
        todo = conditions(size)
        if not budget.admit(len(todo)):
            dropped.append(size)
            continue
        started = clock()
        for cell in todo:
            if cells and budget.end is not None and clock() > budget.end - budget.reserve:
                cells.append({**cell, "status": "left_out",
                              "why": "past the run's deadline, inside its size"})
                continue
            try:
                done = time_cell(cell)  # a program may keep a path's error itself
                done.setdefault("status", "error" if "error" in done else
                                "not_run" if "not_run" in done else "ok")
                cells.append(done)
            except Exception as e:  # noqa: BLE001: the library's refusal is the result
                words = " ".join(f"{type(e).__name__}: {e}".split())[:400]
                print(f"error in {cell.get('layer', '')} {cell.get('mode', '')} "
                      f"{cell.get('precision', '')}: {words}")
                cells.append({**cell, "status": "error", "error": words})
        budget.spent(len(todo), clock() - started)
        if on_size:
            on_size(cells, dropped + sizes[i + 1:])
    if dropped:
        print(f"not timed, past the run's deadline: {len(dropped)} of {len(sizes)} sizes ("
              + "; ".join(f"{s['steps']}/{s['units']}/{s['batch']}" for s in dropped) + ")")
    return cells, dropped


def timed(cells: list) -> list:
    """The cells that were timed (not refused, not left out)."""
    return [c for c in cells if c.get("status", "ok") == "ok"]
