"""The RNN limit benchmarks (issue 53) without a GPU, and what only a GPU decides.

Without a GPU each program says "needs a GPU" in one line and exits 77; a dry run
(BENCH_CPU_DRY_RUN=1, tiny sizes on the CPU) goes through its code and writes cells carrying
every condition, marked dry_run, which charts refuse. Checked against expectations computed
here: the FLOP count, each path's output against nn.LSTM (or JAX's reference LSTM) in FP32, the
budget's drop order and the <5-samples rule on a fake clock, PyTorch's algorithm choice as
RNN.cpp writes it, and cuDNN's own API log, made by the real cuDNN library on this CPU (its
descriptor calls need no GPU). On a GPU (-m gpu): the algorithm PyTorch picked is the one
cuDNN's log names, and the kernels are cuDNN's."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import REPO, this_runs_record
from pipeline.pages import charts
from pipeline.running import device

SNIPPETS = REPO / "snippets" / "benchmarks"
sys.path.insert(0, str(SNIPPETS))
import _gpu_timing  # noqa: E402

PROGRAMS = ["rnn_limits_torch", "rnn_alternatives", "rnn_limits_jax", "rnn_limits_keras_torch"]
CONDITIONS = ("framework", "path", "layer", "mode", "precision", "dtype", "tf32", "steps",
              "units", "batch", "features", "flops")
no_gpu = pytest.mark.skipif(device.has_gpu(), reason="checks the behaviour without a GPU")
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}


def _env(**extra) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    return {**clean, **ONE_THREAD, **extra}


@no_gpu
def test_without_a_gpu_each_says_so_in_one_line_and_exits_77():
    from pipeline.running import runner
    outcomes = runner.run_all(runner.Project(REPO),
                              only=[f"benchmarks/{name}.py" for name in PROGRAMS])
    for o in outcomes:
        assert o.status == runner.NEEDS_GPU and o.returncode == 77, (o.snippet.rel, o.stderr)
        lines = o.stdout.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("needs a GPU: "), o.stdout


@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory) -> dict:
    """{program: (stdout, its data file's content)} from one dry run of each, all at once."""
    if device.has_gpu():
        pytest.skip("a dry run is for a machine without a GPU")
    folders = {name: tmp_path_factory.mktemp(name) for name in PROGRAMS}

    def run(name):
        return subprocess.run([sys.executable, str(SNIPPETS / f"{name}.py")], cwd=folders[name],
                              env=_env(BENCH_CPU_DRY_RUN="1",
                                       SNIPPET_DATA_DIR=str(folders[name] / "data")),
                              capture_output=True, text=True, timeout=600)

    with ThreadPoolExecutor(len(PROGRAMS)) as pool:
        procs = dict(zip(PROGRAMS, pool.map(run, PROGRAMS)))
    out = {}
    for name, proc in procs.items():
        assert proc.returncode == 0, f"{name}:\n{proc.stdout}\n{proc.stderr[-4000:]}"
        path = folders[name] / "data" / f"{name}.json"
        with pytest.raises(charts.ChartError, match="dry run"):
            charts.load_result(path)
        out[name] = (proc.stdout, json.loads(path.read_text()))
    return out


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_dry_run_writes_every_cell_with_its_conditions(dry_runs, name):
    stdout, data = dry_runs[name]
    assert stdout.startswith("DRY RUN on the CPU (BENCH_CPU_DRY_RUN=1)")
    assert data["dry_run"] is True and data["expects_gpu"] is True
    assert data["provenance"]["device"] == "CPU" and data["not_timed"] == []
    cells = data["cells"]
    sizes = [{"steps": t, "units": h, "batch": b} for t, h, b in _gpu_timing.DRY_SIZES]
    order = [sizes.index({k: c[k] for k in ("steps", "units", "batch")}) for c in cells]
    assert order == sorted(order), "cells come size by size, in the order of the sizes"
    timed = [c for c in cells if "eager" in c]
    limit = 1 if name in ("rnn_limits_jax", "rnn_limits_keras_torch") else len(sizes)
    assert timed and {tuple(s.values()) for s in sizes[:limit]} == {
        (c["steps"], c["units"], c["batch"]) for c in cells}
    for c in cells:
        assert all(k in c for k in CONDITIONS), sorted(set(CONDITIONS) - set(c))
        g, b, t, h, i = ({"LSTM": 4, "GRU": 3}[c["layer"]], c["batch"], c["steps"], c["units"],
                         c["features"])
        times = 3 if c["mode"] == "train" else 1
        assert c["flops"]["total"] == 2 * g * b * t * h * (i + h) * times
        assert c["flops"]["recurrence"] == 2 * g * b * t * h * h * times
    for c in timed:  # per-step time and TFLOP/s from the median, as the page states them
        e = c["eager"]
        assert e["n"] == _gpu_timing.MIN_SPREAD and len(e["samples"]) == e["n"]
        assert e["q1"] <= e["median"] <= e["q3"] and e["calls_per_sample"] >= 1
        assert c["eager_us_per_step"] == pytest.approx(e["median"] / c["steps"] * 1000)
        assert c["eager_tflops"] == pytest.approx(c["flops"]["total"] / (e["median"] / 1000)
                                                  / 1e12)
        assert c.get("graph") is None  # no CUDA graph on the CPU
        assert c.get("cudnn_rnn_op", False) is False and c.get("algorithm") is None
    assert data["cudnn_log_problem"].startswith("no cuDNN on the CPU (dry run)")
    rows = data["results"]  # what a chart would draw: one row per timed cell
    assert len(rows) == len(timed) and all(r["q1"] <= r["median"] <= r["q3"] for r in rows)


def test_pytorch_dry_run_runs_every_precision_and_gru_at_the_first_sizes(dry_runs):
    cells = dry_runs["rnn_limits_torch"][1]["cells"]
    assert {c["precision"] for c in cells} == {"FP32 strict", "FP32 default", "FP16 autocast",
                                                "BF16 autocast"}
    assert {(c["layer"], c["mode"]) for c in cells} == {
        (layer, mode) for layer in ("LSTM", "GRU") for mode in ("inference", "train")}
    for c in cells:  # the math type PyTorch passes cuDNN for each (ATen/cudnn/Descriptors.h)
        assert c["expected"]["math_type"] == {"FP32 strict": "FMA_MATH",
                                              "FP16 autocast": "TENSOR_OP_MATH"}.get(
            c["precision"], "DEFAULT_MATH")
        assert c["tf32"] == {"cudnn": c["precision"] != "FP32 strict", "matmul": False}


def test_the_alternatives_compute_nn_lstm_on_the_same_weights(dry_runs):
    """Each path against nn.LSTM in FP32 on the CPU: the compiled loop's projection and gates,
    and FlashRNN's weight mapping (its PyTorch code standing in for the Triton kernel)."""
    data = dry_runs["rnn_alternatives"][1]
    cells = data["cells"]
    limit = {"FP32 strict": 1e-5, "BF16": 3e-2}  # FP16 only on a GPU
    assert {c["precision"] for c in cells} == set(limit)
    seen = set()
    for c in cells:
        if c["path"] == "FlashRNN" and c["precision"] == "FP32 strict":
            assert "no strict FP32" in c["not_run"]
            continue
        assert "error" not in c, c.get("error")
        assert c["error_vs_fp32_reference"] < limit[c["precision"]], c
        assert c["kernel_check"] is True
        seen.add((c["path"], c["label"]))
    assert ("FlashRNN", "FlashRNN vanilla (the dry run's stand-in), dense") in seen
    assert ("FlashRNN", "FlashRNN vanilla (the dry run's stand-in), 2 heads of 8 "
            "(block-diagonal: a different model)") in seen
    assert [b["not_run"] for b in data["flashrnn_cuda"]] == ["no GPU (dry run)"] * 2


def test_the_jax_scan_matches_jax_reference_lstm(dry_runs):
    for c in dry_runs["rnn_limits_jax"][1]["cells"]:
        assert c["error_vs_fp32_reference"] < 1e-5, c  # lstm_ref vs the scan, FP32 on a CPU
        assert c["cudnn_in_program"] is False


# --- the method, on a fake clock ---------------------------------------------------------------

class Clock:
    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now


def test_fewer_than_five_samples_give_a_median_and_no_spread():
    four = _gpu_timing.stats([4.0, 1.0, 3.0, 2.0])
    assert four["median"] == 2.5 and four["n"] == 4
    assert not {"q1", "q3", "min", "max"} & set(four)
    five = _gpu_timing.stats([5.0, 1.0, 4.0, 2.0, 3.0])
    assert (five["q1"], five["median"], five["q3"], five["min"], five["max"]) == (2, 3, 4, 1, 5)
    assert "IQR" not in _gpu_timing.summary_line({**four, "calls_per_sample": 1})


def test_time_calls_warms_up_by_time_and_sizes_each_sample(monkeypatch):
    monkeypatch.delenv("BENCH_CPU_DRY_RUN", raising=False)
    clock, calls = Clock(0.0), []

    def run(k):  # each call takes 2 ms of device time and 2 ms of host time
        calls.append(k)
        clock.now += 0.002 * k
        return 0.002 * k

    t = _gpu_timing.time_calls(run, warmup_s=0.05, sample_s=0.01, samples=7, clock=clock)
    assert t["warmup_calls"] == 25 and calls[:25] == [1] * 25  # 50 ms of single calls
    assert t["calls_per_sample"] == 5 and calls[25:] == [5] * 7  # 5 x 2 ms >= 10 ms
    assert t["median"] == pytest.approx(2.0) and t["n"] == 7 and "q1" in t


def test_the_budget_drops_whole_sizes_after_the_first_that_does_not_fit(monkeypatch):
    """Every condition of a size or none; once a size does not fit, no later size runs, even a
    cheaper one: what each program timed is a prefix of one order, so frameworks cut at
    different points still share their first sizes."""
    clock = Clock()
    monkeypatch.setenv("BENCH_DEADLINE", str(clock.now + 10))
    cost = {1: 1.0, 2: 1.0, 3: 3.0, 4: 0.1, 5: 0.1}  # seconds per cell of each size

    def conditions(size):
        return [dict(size, precision=p) for p in ("a", "b")]

    def time_cell(cell):
        clock.now += cost[cell["steps"]]
        return cell

    sizes = [{"steps": n, "units": 8, "batch": 2} for n in cost]
    cells, dropped = _gpu_timing.run_sizes(conditions, time_cell, sizes, clock=clock)
    # sizes 1, 2: 4 s; size 3 estimated 2 cells x 1 s x 1.25 = 2.5 s: fits (ends at 7 s);
    # size 4, estimated from the slowest so far (3 s a cell): 7.5 s, past 10 s: dropped, and 5.
    assert [c["steps"] for c in cells] == [1, 1, 2, 2, 3, 3]
    assert [s["steps"] for s in dropped] == [4, 5]
    monkeypatch.setenv("BENCH_DEADLINE", str(clock.now - 1))  # already past: the first still
    cells, dropped = _gpu_timing.run_sizes(conditions, time_cell, sizes, clock=clock)
    assert [c["steps"] for c in cells] == [1, 1] and len(dropped) == 4
    monkeypatch.delenv("BENCH_DEADLINE")
    assert len(_gpu_timing.run_sizes(conditions, time_cell, sizes, clock=clock)[0]) == 10


def test_every_program_times_the_sizes_in_one_order_most_wanted_first():
    sizes = _gpu_timing.SIZES
    assert len(set(sizes)) == len(sizes) and sizes[0] == (64, 256, 64)  # the H200 anchor
    # The algorithm boundaries come before the rest: 128 | 192 | 256 units, batch 128 | 256.
    first = sizes[:9]
    assert {(128, 128, 64), (128, 192, 64), (128, 256, 64), (128, 256, 128),
            (128, 256, 256)} <= set(first)
    assert {(128, h, b) for h in (128, 192, 256, 512, 1024) for b in (32, 64, 128, 256)} \
        <= set(sizes)


H100 = {"major": 9, "minor": 0, "sm_count": 132, "name": "H100"}


@pytest.mark.parametrize("args, forward, backward", [
    # (layer, dtype, units, features, batch): RNN.cpp's get_algo, read at pytorch 00fc08aa
    (("LSTM", "float32", 128, 128, 64), "PERSIST_STATIC_SMALL_H", "PERSIST_STATIC_SMALL_H"),
    (("LSTM", "float32", 192, 192, 64), "PERSIST_STATIC_SMALL_H", "STANDARD"),
    (("LSTM", "bfloat16", 192, 192, 64), "PERSIST_STATIC_SMALL_H", "STANDARD"),
    (("LSTM", "float32", 256, 256, 64), "STANDARD", "STANDARD"),
    (("LSTM", "bfloat16", 256, 256, 64), "STANDARD", "STANDARD"),
    (("LSTM", "float16", 256, 256, 64), "PERSIST_STATIC", "PERSIST_STATIC"),
    (("LSTM", "float16", 256, 256, 128), "PERSIST_STATIC", "PERSIST_STATIC"),
    (("LSTM", "float16", 256, 256, 256), "STANDARD", "STANDARD"),
    (("LSTM", "float16", 256, 256, 60), "STANDARD", "STANDARD"),
    (("LSTM", "float16", 320, 320, 64), "STANDARD", "STANDARD"),
    (("LSTM", "float16", 1024, 1024, 64), "PERSIST_STATIC", "PERSIST_STATIC"),
    (("LSTM", "float16", 1152, 1152, 64), "STANDARD", "STANDARD"),
    (("LSTM", "float16", 256, 200, 64), "STANDARD", "STANDARD"),
    (("GRU", "float16", 256, 256, 64), "STANDARD", "STANDARD"),
    (("GRU", "float32", 128, 128, 64), "PERSIST_STATIC_SMALL_H", "PERSIST_STATIC_SMALL_H"),
    (("LSTM", "float64", 128, 128, 64), "STANDARD", "STANDARD"),
])
def test_pytorch_algorithm_choice_as_rnn_cpp_writes_it(args, forward, backward):
    assert _gpu_timing.expected_algorithm(*args, True, H100) == forward
    assert _gpu_timing.expected_algorithm(*args, False, H100) == backward
    a40 = {"major": 8, "minor": 6, "sm_count": 84, "name": "A40"}  # x.6 and < 98 SMs: never
    assert _gpu_timing.expected_algorithm(*args, True, a40) == (
        "STANDARD" if forward == "PERSIST_STATIC" else forward)
    assert _gpu_timing.expected_algorithm(*args, True, H100, layers=2) == (
        "STANDARD" if forward == "PERSIST_STATIC" else forward)
    assert _gpu_timing.expected_algorithm(*args, True, H100, packed=True) == "STANDARD"
    assert _gpu_timing.expected_algorithm(*args, True, None) is None


# --- cuDNN's API log, written by the real library on this CPU ---------------------------------

FAKE_PROGRAM = """\
import ctypes, json, os, sys
sys.path.insert(0, {snippets!r})
import _gpu_timing

lib = ctypes.CDLL({lib!r})
ALGO = {{name: i for i, name in enumerate(_gpu_timing.ALGORITHMS)}}
TYPES = {{"float32": 0, "float16": 2, "bfloat16": 9}}
MATH = {{"DEFAULT_MATH": 0, "TENSOR_OP_MATH": 1, "FMA_MATH": 3}}


def call_for(cell):
    # What PyTorch does per call: set the descriptor, run forward (and backward). Without a
    # GPU handle the run fails, logged by cuDNN with the descriptor it was given.
    desc = ctypes.c_void_p()
    lib.cudnnCreateRNNDescriptor(ctypes.byref(desc))
    setter = lib.cudnnSetRNNDescriptor_v8
    setter.argtypes = ([ctypes.c_void_p] + [ctypes.c_int] * 8 + [ctypes.c_int32] * 4
                       + [ctypes.c_void_p, ctypes.c_uint32])
    def call():
        setter(desc, ALGO[cell["algo"]], 2, 2, 0, 0, TYPES[cell["dtype"]], 0,
               MATH[cell["math"]], cell["units"], cell["units"], cell["units"], 1, None, 0)
        lib.cudnnRNNForward(None, desc, 1 if cell["mode"] == "train" else 0, *[None] * 11,
                            *[ctypes.c_size_t(0), None] * 3)
        if cell["mode"] == "train":
            lib.cudnnRNNBackwardData_v8(None, desc, *[None] * 14,
                                        *[ctypes.c_size_t(0), None] * 3)
    return call


if "--cudnn-log" in sys.argv:
    _gpu_timing.cudnn_log_child(call_for, lambda: None)
else:
    cells = json.loads(sys.argv[1])
    print(json.dumps(_gpu_timing.logged_algorithms(cells, timeout=60)))
"""


def _libcudnn() -> Path | None:
    try:
        import nvidia.cudnn
    except ImportError:
        return None
    found = [Path(p) / "lib" / "libcudnn.so.9" for p in nvidia.cudnn.__path__]
    return next((p for p in found if p.is_file()), None)


def test_cudnn_logs_each_calls_algorithm_in_a_process_apart(tmp_path):
    """cuDNN 9 reads CUDNN_LOGLEVEL_DBG and CUDNN_LOGDEST_DBG (cudnn_log_env): a program's
    --cudnn-log process logs each cell's calls, and the parent reads back, per cell, the
    algorithm, math type and data type of its forward and backward calls."""
    lib = _libcudnn()
    if lib is None:
        pytest.skip("needs cuDNN's library (nvidia-cudnn-cu12, in requirements.txt)")
    program = tmp_path / "fake_rnn_program.py"
    program.write_text(FAKE_PROGRAM.format(snippets=str(SNIPPETS), lib=str(lib)))
    cells = [{"algo": "PERSIST_STATIC_SMALL_H", "dtype": "float32", "math": "FMA_MATH",
              "units": 128, "mode": "inference"},
             {"algo": "PERSIST_STATIC", "dtype": "float16", "math": "TENSOR_OP_MATH",
              "units": 256, "mode": "train"},
             {"algo": "STANDARD", "dtype": "bfloat16", "math": "DEFAULT_MATH", "units": 512,
              "mode": "train"}]
    proc = subprocess.run([sys.executable, str(program), json.dumps(cells)], cwd=tmp_path,
                          env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found, problem = json.loads(proc.stdout)
    assert problem is None
    names = {"float32": "FLOAT", "float16": "HALF", "bfloat16": "BFLOAT16"}
    for cell, algo in zip(cells, found):
        fwd = algo["forward"]
        assert (fwd["algo"], fwd["math_type"], fwd["data_type"], fwd["math_prec"]) == (
            cell["algo"], cell["math"], names[cell["dtype"]], "FLOAT")
        assert fwd["hidden"] == str(cell["units"]) and fwd["cell"] == "LSTM"
        assert fwd["fwd_mode"] == ("TRAINING" if cell["mode"] == "train" else "INFERENCE")
        assert fwd["error"].startswith("CUDNN_STATUS_BAD_PARAM")  # no GPU handle here
        assert fwd["cudnn"] >= 90000
        if cell["mode"] == "train":
            assert algo["backward"]["algo"] == cell["algo"]
        else:
            assert algo["backward"] is None
    log = (tmp_path / ".cudnn-log" / "cudnn.log").read_text()
    assert "function cudnnSetRNNDescriptor_v8() called" in log  # the log stayed in its folder


def test_the_log_parser_reads_nested_descriptors_and_errors():
    text = textwrap.dedent("""\
        I! CuDNN (v91900 17) function cudnnRNNForward() called:
        i!     handle: type=cudnnHandle_t; val=0x55d0;
        i!     rnnDesc: type=cudnnRNNDescriptor_t:
        i!         algo: type=cudnnRNNAlgo_t; val=CUDNN_RNN_ALGO_STANDARD (0);
        i!         dataType: type=cudnnDataType_t; val=CUDNN_DATA_FLOAT (0);
        i!         mathMode: type=cudnnMathType_t; val=CUDNN_DEFAULT_MATH (0);
        i!     fwdMode: type=cudnnForwardMode_t; val=CUDNN_FWD_MODE_TRAINING (1);
        i!     xDesc: type=cudnnRNNDataDescriptor_t:
        i!         dataType: type=cudnnDataType_t; val=CUDNN_DATA_HALF (2);
        i! Time: 2026-11-27T16:24:18.419844 (0d+0h+0m+0s since start)
        """)
    (call,) = _gpu_timing.parse_cudnn_log(text)
    assert call["function"] == "cudnnRNNForward" and call["version"] == 91900
    assert call["args"]["dataType"] == "CUDNN_DATA_FLOAT"  # the descriptor's, logged first
    algo = _gpu_timing.rnn_algorithms([call])["forward"]
    assert (algo["algo"], algo["math_type"], algo["fwd_mode"]) == ("STANDARD", "DEFAULT_MATH",
                                                                  "TRAINING")
    assert "error" not in algo


# --- on a GPU ------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_on_a_gpu_pytorch_picks_the_algorithm_cudnn_logs_and_runs_cudnn_kernels(tmp_path):
    """rnn_limits_torch at its first size (a deadline one second away stops it there): for
    every cell, the algorithm cuDNN's log names for the forward and the backward call is the
    one RNN.cpp's choice gives, with PyTorch's math type; the profiler saw aten::_cudnn_rnn and
    its kernels; a persistent algorithm launches fewer kernels per call than there are steps."""
    pytest.importorskip("torch", reason="needs PyTorch")
    if not device.has_gpu():
        pytest.skip("needs a GPU")
    import time
    recorded = this_runs_record("benchmarks/rnn_limits_torch.py", "rnn_limits_torch.json")
    if recorded:  # this GPU run's own measurement of the program: not run a second time
        data = recorded[0]
    else:
        proc = subprocess.run([sys.executable, str(SNIPPETS / "rnn_limits_torch.py")],
                              cwd=tmp_path, env={**_env(), "SNIPPET_DATA_DIR": str(tmp_path),
                                                 "BENCH_DEADLINE": str(time.time() + 1)},
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
        data = json.loads((tmp_path / "rnn_limits_torch.json").read_text())
    assert data["cudnn_log_problem"] is None
    assert data["cells"], "no cell measured"
    for c in data["cells"]:
        if c.get("status", "ok") != "ok":  # a refusal with the library's words, or past the
            assert c.get("error") or c["status"] == "left_out", c  # deadline inside its size
            continue
        algo = c["algorithm"]
        assert algo and algo["forward"]["algo"] == c["expected"]["forward"], c
        assert algo["forward"]["math_type"] == c["expected"]["math_type"], c
        assert algo["forward"]["fwd_mode"] == ("TRAINING" if c["mode"] == "train"
                                               else "INFERENCE")
        if c["mode"] == "train":
            assert algo["backward"]["algo"] == c["expected"]["backward"], c
        assert c["cudnn_rnn_op"] and c["kernels"], c
        if algo["forward"]["algo"].startswith("PERSIST") and c["mode"] == "inference":
            assert c["launches_per_call"] < c["steps"], c
        assert "median" in c["graph"], c["graph"]  # the call replays from a CUDA graph


def test_at_budget_480_the_most_wanted_parts_and_the_gpu_tests_get_their_time():
    """The runner's share rule (runner.run_all: the time left less the tests' slot x weight /
    the weights of the measuring snippets still to run) over BUDGET_PLAN at --budget 480 (the
    command CONTRIBUTING gives), on the H200 again: the snippets whose record there is current
    are left out (gpu_run.current_here), the first five use their whole shares, and the GPU
    tests have their slot alone (about 170 s: they needed 100 s less than the 200-280 s of a
    run that ran the harness's programs again)."""
    from pipeline.records import gpu_run, store
    budget = 480
    slot = gpu_run.TESTS_SHARE * budget
    (h200,) = [m for m in store.load_all(REPO / "results", REPO / "snippets")
               if m.slug == "nvidia-h200"]
    packages = h200.records[0].data["provenance"]["packages"]
    current = gpu_run.current_here(REPO / "results", "nvidia-h200", REPO / "snippets",
                                   list(gpu_run.BUDGET_PLAN), packages,
                                   h200.data["run"]["bench_scale"])
    plan = [rel for rel in gpu_run.BUDGET_PLAN if rel not in current]
    lead = plan[:5]
    assert lead == list(gpu_run.BUDGET_PLAN[:5]), "a lead program has a current record"
    measuring = [rel for rel in plan if rel.startswith(("c/rnn_limits", "benchmarks/"))]
    left, shares = budget - slot, {}
    for rel in lead:
        share = left * gpu_run.BUDGET_WEIGHTS[rel] / sum(
            gpu_run.BUDGET_WEIGHTS.get(r, 1.0) for r in measuring if r not in shares)
        shares[rel] = share
        left -= share
    print({rel: round(s) for rel, s in shares.items()}, f"slot {slot:.0f} s, after: {left:.0f} s")
    assert 150 <= slot <= 200
    assert all(s >= 30 for s in shares.values()), shares
    # the lead takes the budget less the slot, but for what the rest of the plan still needs
    assert sum(shares.values()) + left == pytest.approx(budget - slot)
    assert sum(shares.values()) >= 0.9 * (budget - slot)
