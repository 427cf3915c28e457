"""snippets/c/rnn_limits.c (issue 53, part 3): what cuDNN itself can do for LSTM and GRU.

On the CPU: it builds with -Werror through the Makefile, says "needs a GPU" and exits 77; its
declarations of cuBLAS and NVRTC match their headers; its CPU reference (LSTM and GRU, forward
and every gradient) agrees with PyTorch's autograd, rounds to half and bfloat16 as NumPy and
PyTorch do, and a wrong gate order is far above the check's tolerances; its dry run
(BENCH_CPU_DRY_RUN=1) writes result files pipeline/pages/charts.py reads, records every cell of the
plan once, records the pretended refusals with cuDNN's own status names, measures sizes whole
in the documented order within a deadline, and keeps what finished when cut short. On a GPU: every
cell agrees with the reference or carries the status that refused it."""
from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, this_runs_record

C_DIR = REPO / "snippets" / "c"
CELLS, MODES = ("LSTM", "GRU"), ("inference", "training")
ALGOS = ("STANDARD", "PERSIST_STATIC", "PERSIST_STATIC_SMALL_H", "PERSIST_DYNAMIC")
TYPES = ("FP32", "TF32", "FP16", "BF16")
HIDDEN, BATCH, STEPS = (128, 256, 512, 1024), (32, 64, 128, 256), 64
GATES = {"LSTM": 4, "GRU": 3}
TOLERANCE = {"FP32": 1e-4, "TF32": 1e-2, "FP16": 1e-2, "BF16": 4e-2}  # as the program's header says


def _has_gpu() -> bool:
    from pipeline.running import device
    return device.has_gpu()


def _wheel(name: str) -> Path:
    mod = __import__(f"nvidia.{name}", fromlist=["_"])
    return Path(list(mod.__path__)[0])


@pytest.fixture(scope="module")
def binary(tmp_path_factory) -> Path:
    """The program, built by the Makefile as the runner builds it (-Werror), into a fresh folder."""
    out = tmp_path_factory.mktemp("rnn_limits")
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = f"{Path(sys.executable).parent}:/usr/bin:/bin"
    r = subprocess.run(["make", "-B", "-C", str(C_DIR), f"BUILD_DIR={out}", f"PYTHON={sys.executable}",
                        str(out / "rnn_limits")], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "-Werror" in r.stdout and "rnn_limits.c" in r.stdout, r.stdout
    return out / "rnn_limits"


def _run(binary: Path, *args: str, env: dict | None = None, timeout: float = 120):
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def _dry(binary: Path, folder: Path, *args: str, deadline: float | None = None):
    env = {"BENCH_CPU_DRY_RUN": "1", "SNIPPET_DATA_DIR": str(folder)}
    env.pop("BENCH_DEADLINE", None)
    if deadline is not None:
        env["BENCH_DEADLINE"] = f"{time.time() + deadline:.3f}"
    full = {k: v for k, v in os.environ.items() if k != "BENCH_DEADLINE"}
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=120,
                          env={**full, **env})


@pytest.fixture(scope="module")
def dry_run(binary, tmp_path_factory) -> dict:
    """The whole default plan in a dry run, with time for all of it."""
    folder = tmp_path_factory.mktemp("dry")
    r = _dry(binary, folder)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("DRY RUN on the CPU (BENCH_CPU_DRY_RUN=1)"), r.stdout[:300]
    return {"stdout": r.stdout, "folder": folder,
            "data": json.loads((folder / "rnn_limits.json").read_text(encoding="utf-8"))}


def test_the_snippet_header_and_sections():
    lines = (C_DIR / "rnn_limits.c").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "// snippet: timeout=600 needs=gpu exclusive"
    assert lines[1] == "// --8<-- [start:file]" and lines[-1] == "// --8<-- [end:file]"
    build = (C_DIR / "build_rnn_limits.sh").read_text(encoding="utf-8")
    assert "-Werror" in build and build.rstrip().endswith("./rnn_limits")
    assert not any(line.lstrip().startswith("#") for line in build.splitlines())  # no comments


@pytest.mark.skipif(_has_gpu(), reason="checks the behaviour without a GPU")
def test_without_a_gpu_it_says_so_in_one_line_and_exits_77(binary, tmp_path):
    r = _run(binary, env={"SNIPPET_DATA_DIR": str(tmp_path)})
    assert r.returncode == 77, (r.stdout, r.stderr)
    assert r.stdout.startswith("needs a GPU: no CUDA device") and len(r.stdout.splitlines()) == 1
    assert not any(tmp_path.iterdir())  # nothing written


def test_options_are_checked(binary):
    assert _run(binary, "--help").returncode == 0
    for bad in (["--steps", "0"], ["--type", "FP8"], ["--samples", "3"], ["--bogus"], ["--hidden"]):
        r = _run(binary, *bad, env={"BENCH_CPU_DRY_RUN": "1"})
        assert r.returncode == 2 and r.stderr, bad


# --- the libraries it opens at run time: its declarations against their headers ---------------

_CHECK_UNIT = """#define _POSIX_C_SOURCE 200809L
#define __CUDA_FP16_H__  /* cuBLAS's prototypes name the half types; their headers need C++'s */
#define __CUDA_BF16_H__  /* <nv/target>, which the wheels do not ship */
typedef struct __half __half;
typedef struct __nv_bfloat16 __nv_bfloat16;
#include <cublas_v2.h>
#include <nvrtc.h>
#define RNN_LIMITS_HEADER_CHECK
#include "rnn_limits.c"
"""


def _compile_against_headers(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    (tmp_path / "rnn_limits.c").write_text(source, encoding="utf-8")
    (tmp_path / "cudnn_check.h").write_text((C_DIR / "cudnn_check.h").read_text(), encoding="utf-8")
    (tmp_path / "check.c").write_text(_CHECK_UNIT, encoding="utf-8")
    includes = [_wheel("cudnn") / "include", _wheel("cuda_runtime") / "include",
                _wheel("cuda_nvcc") / "include", _wheel("cublas") / "include",
                _wheel("cuda_nvrtc") / "include"]
    return subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                           str(tmp_path / "check.c"), *(f"-I{p}" for p in includes)],
                          capture_output=True, text=True, timeout=120)


def test_its_cublas_and_nvrtc_declarations_are_the_headers(tmp_path):
    source = (C_DIR / "rnn_limits.c").read_text(encoding="utf-8")
    r = _compile_against_headers(tmp_path, source)
    assert r.returncode == 0, r.stderr[-3000:]
    # A planted mistake (an int where cublasGemmEx takes a cudaDataType, one argument less) fails.
    planted = source.replace("const void *, cudaDataType, int, const void *, void *,",
                             "const void *, int, const void *, void *,", 1)
    assert planted != source
    r = _compile_against_headers(tmp_path, planted)
    assert r.returncode != 0 and 'static assertion failed: "cublasGemmEx"' in r.stderr, r.stderr[-2000:]


# --- the CPU reference ----------------------------------------------------------------------

def _reference(binary: Path, cell: str, H: int, B: int, T: int, type_: str) -> dict:
    r = _run(binary, "--cpu-reference", cell, str(H), str(B), str(T), type_)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _torch(d: dict, gate_order=None) -> dict:
    """The same layer in PyTorch (float64), with autograd's gradients of
    L = sum(y * dy) + sum(hT * dhy) [+ sum(cT * dcy)]."""
    import torch
    T, B, H, lstm = d["T"], d["B"], d["H"], d["cell"] == "LSTM"
    G = 4 if lstm else 3
    order = list(gate_order or range(G))
    t = lambda k, *s: torch.tensor(d[k], dtype=torch.float64).reshape(*s)  # noqa: E731
    layer = (torch.nn.LSTM if lstm else torch.nn.GRU)(H, H).double()
    with torch.no_grad():
        layer.weight_ih_l0.copy_(t("W", G, H, H)[order].reshape(G * H, H))
        layer.weight_hh_l0.copy_(t("R", G, H, H)[order].reshape(G * H, H))
        layer.bias_ih_l0.copy_(t("bW", G, H)[order].reshape(-1))
        layer.bias_hh_l0.copy_(t("bR", G, H)[order].reshape(-1))
    x, h0 = t("x", T, B, H).requires_grad_(), t("h0", 1, B, H).requires_grad_()
    if lstm:
        c0 = t("c0", 1, B, H).requires_grad_()
        y, (h, c) = layer(x, (h0, c0))
        loss = (y * t("dy", T, B, H)).sum() + (h * t("dhy", 1, B, H)).sum() \
            + (c * t("dcy", 1, B, H)).sum()
    else:
        y, h = layer(x, h0)
        loss = (y * t("dy", T, B, H)).sum() + (h * t("dhy", 1, B, H)).sum()
    loss.backward()
    rows = d["rows"]
    out = {"y": y.detach()[:, rows], "hT": h.detach()[0, rows], "dx": x.grad, "dh0": h0.grad[0],
           "dW": layer.weight_ih_l0.grad, "dR": layer.weight_hh_l0.grad,
           "dbW": layer.bias_ih_l0.grad, "dbR": layer.bias_hh_l0.grad}
    if lstm:
        out.update(cT=c.detach()[0, rows], dc0=c0.grad[0])
    return {k: v.numpy().reshape(-1) for k, v in out.items()}


def _error(got, want) -> float:
    """As the program measures: max |got - want| / max |want|."""
    got, want = np.asarray(got, dtype=float).reshape(-1), np.asarray(want, dtype=float).reshape(-1)
    return float(np.abs(got - want).max() / np.abs(want).max())


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_the_cpu_reference_is_pytorchs_layer_forward_and_backward(binary, cell):
    d = _reference(binary, cell, 6, 4, 5, "fp32")
    want = _torch(d)
    assert set(want) <= set(d)
    for key, value in want.items():
        assert _error(d[key], value) < 1e-7, key
    # The rows checked on the GPU are 0 and B-1, and only they receive gradients from above.
    assert d["rows"] == [0, 3]
    dy = np.array(d["dy"]).reshape(5, 4, 6)
    assert np.all(dy[:, 1:3] == 0) and np.all(np.abs(dy[:, [0, 3]]).sum(axis=-1) > 0)


@pytest.mark.parametrize("cell, swap", [("lstm", (0, 2, 1, 3)), ("gru", (1, 0, 2))])
def test_a_wrong_gate_order_is_far_above_every_tolerance(binary, cell, swap):
    """At a size the GPU checks (8 steps), two gates exchanged move the outputs an inference
    check compares by more than five times the loosest tolerance (BF16's)."""
    d = _reference(binary, cell, 128, 2, 8, "fp32")
    wrong = _torch(d, gate_order=swap)
    worst = max(_error(wrong[k], d[k]) for k in ("y", "hT"))
    assert worst > 5 * max(TOLERANCE.values()), worst


def test_half_and_bfloat16_round_to_nearest_even_as_numpy_and_pytorch_do(binary):
    import torch
    exact = {k: np.array(v, dtype=np.float32)
             for k, v in _reference(binary, "lstm", 16, 2, 3, "fp32").items() if k in ("W", "x")}
    half = _reference(binary, "lstm", 16, 2, 3, "fp16")
    bf16 = _reference(binary, "lstm", 16, 2, 3, "bf16")
    for key, value in exact.items():
        assert np.array_equal(np.array(half[key], dtype=np.float32),
                              value.astype(np.float16).astype(np.float32)), key
        want = torch.from_numpy(value).to(torch.bfloat16).to(torch.float32).numpy()
        assert np.array_equal(np.array(bf16[key], dtype=np.float32), want), key
        assert not np.array_equal(np.array(half[key], dtype=np.float32), value)  # it did round


# --- the dry run: plan, statuses, files, budget ---------------------------------------------

def _expected_refusal(c: dict):
    """The refusals the dry run pretends (its comment says which), found independently here."""
    if c["algo"] == "PERSIST_STATIC" and c["type"] == "BF16":
        return "cudnnSetRNNDescriptor_v8", "CUDNN_STATUS_BAD_PARAM"
    if c["algo"] == "PERSIST_DYNAMIC" and c["batch"] > 128:
        return "cudnnBuildRNNDynamic", "CUDNN_STATUS_NOT_SUPPORTED"
    if c["algo"] == "PERSIST_STATIC_SMALL_H" and c["hidden"] > 128:
        return "cudnnRNNForward", "CUDNN_STATUS_NOT_SUPPORTED"
    if c["cell"] == "GRU" and c["mode"] == "training" and c["algo"] == "PERSIST_STATIC":
        return "cudnnRNNBackwardData_v8", "CUDNN_STATUS_NOT_SUPPORTED"
    return None


def _status_codes() -> dict[str, int]:
    """cuDNN's status names and codes, read from the installed header."""
    text = (_wheel("cudnn") / "include" / "cudnn_graph.h").read_text(errors="replace")
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^\s*(CUDNN_STATUS_\w+)\s*=\s*(\d+)", text, re.M)}


def test_every_cell_of_the_plan_is_recorded_once_with_its_status(dry_run):
    data, codes = dry_run["data"], _status_codes()
    keys = [(c["cell"], c["mode"], c["algo"], c["type"], c["hidden"], c["batch"])
            for c in data["cells"]]
    assert len(keys) == len(set(keys)) == 2 * 2 * 4 * 4 * 4 * 4
    assert set(keys) == {(c, m, a, t, h, b) for c in CELLS for m in MODES for a in ALGOS
                         for t in TYPES for h in HIDDEN for b in BATCH}
    refused = 0
    for c in data["cells"]:
        expected = _expected_refusal(c)
        if expected:
            refused += 1
            assert c["status"] == "refused", c
            assert (c["refused_by"], c["cudnn_status"]) == expected, c
            assert codes[c["cudnn_status"]] == c["cudnn_status_code"], c
            assert "us_per_step" not in c
        else:
            assert c["status"] == "ok", c
            assert c["check"]["tolerance"] == TOLERANCE[c["type"]]
            assert c["check"]["max_error"] <= c["check"]["tolerance"]
            assert c["check"]["rows"] == [0, c["batch"] - 1] and c["check"]["steps"] == 8
    assert 0 < refused < len(keys) and not data["left_out"]
    assert "MISMATCH" not in dry_run["stdout"]


def test_types_are_what_pytorch_passes_to_cudnn(dry_run):
    types = dry_run["data"]["types"]
    assert types["FP32"]["math_type"] == "CUDNN_FMA_MATH"
    assert types["TF32"]["math_type"] == "CUDNN_DEFAULT_MATH"
    assert types["FP16"] == {"data_type": "CUDNN_DATA_HALF", "math_precision": "CUDNN_DATA_FLOAT",
                             "math_type": "CUDNN_TENSOR_OP_MATH", "check_tolerance": 0.01}
    assert types["BF16"]["data_type"] == "CUDNN_DATA_BFLOAT16"
    assert types["BF16"]["math_precision"] == "CUDNN_DATA_FLOAT"
    for name, t in types.items():
        assert t["check_tolerance"] == TOLERANCE[name]


def test_timings_have_quartiles_of_at_least_5_samples_and_the_flop_count(dry_run):
    for c in dry_run["data"]["cells"]:
        if c["status"] != "ok":
            continue
        s = c["us_per_step"]
        assert len(s["samples"]) >= 5
        q1, _, q3 = statistics.quantiles(s["samples"], n=4, method="inclusive")
        assert s["q1"] == pytest.approx(q1, rel=1e-5) and s["q3"] == pytest.approx(q3, rel=1e-5)
        assert s["median"] == pytest.approx(statistics.median(s["samples"]), rel=1e-5)
        H, B = c["hidden"], c["batch"]
        flops = 2 * GATES[c["cell"]] * B * STEPS * H * (H + H) * (3 if c["mode"] == "training" else 1)
        assert c["flops_per_call"] == pytest.approx(flops, rel=1e-5)
        assert c["tflops"] == pytest.approx(flops / (s["median"] * STEPS * 1e-6) / 1e12, rel=1e-4)


def test_the_files_are_benchmark_results_the_charts_read_and_a_dry_run_is_never_drawn(dry_run,
                                                                                        tmp_path):
    from pipeline.pages import charts
    names = sorted(p.name for p in dry_run["folder"].glob("*.json"))
    assert names == ["rnn_limits.json", "rnn_limits_floors.json", "rnn_limits_gru_inference.json",
                     "rnn_limits_gru_training.json", "rnn_limits_lstm_inference.json",
                     "rnn_limits_lstm_training.json"]
    for name in names:
        path = dry_run["folder"] / name
        with pytest.raises(charts.ChartError, match="a dry run"):
            charts.load_result(path)
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data.pop("dry_run") is True and data["expects_gpu"] is True
        copy = tmp_path / name
        copy.write_text(json.dumps(data), encoding="utf-8")
        loaded = charts.load_result(copy)
        assert loaded["benchmark"] == name[:-5] and loaded["results"]
        for row in loaded["results"]:
            assert {"variant", "x", "median", "q1", "q3", "min", "max", "samples"} <= set(row)
            assert len(row["samples"]) >= 5
        p = loaded["provenance"]
        assert p["machine"].startswith("CPU: ") and p["device"] == "CPU"
        for key in ("cudnn", "cudnn_header", "cuda_runtime_header", "date", "cpu_model"):
            assert p.get(key), key
    main = json.loads((dry_run["folder"] / "rnn_limits.json").read_text(encoding="utf-8"))
    # The main chart: at batch 64, the fastest algorithm of each cell, mode and type.
    assert {r["x"] for r in main["results"]} == set(HIDDEN)
    for r in main["results"]:
        cell, mode, type_ = r["variant"].split()
        same = [c for c in main["cells"] if c["status"] == "ok" and c["batch"] == 64
                and (c["cell"], c["mode"], c["type"], c["hidden"]) == (cell, mode, type_, r["x"])]
        fastest = min(same, key=lambda c: c["us_per_step"]["median"])
        assert r["algo"] == fastest["algo"] and r["median"] == fastest["us_per_step"]["median"]
    assert main["floors"]["kernels"] == "sm_90"  # NVRTC compiled the floors' kernels here
    assert all(v.startswith("CUBLAS_COMPUTE_32F") for v in
               {g["compute"] for g in main["floors"]["gemms"]})


def _expected_order() -> list[tuple[int, int]]:
    """The documented order: the centre, the other hidden sizes at its batch, the other
    batches at its hidden size, then the rest by batch * hidden^2."""
    hc, bc = HIDDEN[1], BATCH[1]
    rest = sorted(((h, b) for h in HIDDEN for b in BATCH if h != hc and b != bc),
                  key=lambda s: (s[1] * s[0] ** 2, s[0], s[1]))
    return [(hc, bc)] + [(h, bc) for h in HIDDEN if h != hc] \
        + [(hc, b) for b in BATCH if b != bc] + rest


def test_a_deadline_drops_whole_sizes_in_the_documented_order(binary, tmp_path):
    r = _dry(binary, tmp_path, deadline=60)
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "rnn_limits.json").read_text(encoding="utf-8"))
    sizes = data["budget"]["sizes"]
    assert [(s["hidden"], s["batch"]) for s in sizes] == _expected_order()
    assert sizes[0]["status"] in ("done", "partial")  # the centre is always tried
    by_size: dict = {}
    for c in data["cells"]:
        by_size.setdefault((c["hidden"], c["batch"]), []).append(c["status"])
    for s in sizes:
        statuses = by_size[(s["hidden"], s["batch"])]
        if s["status"] == "done":
            assert set(statuses) <= {"ok", "refused"}
        elif s["status"] == "left_out":
            assert set(statuses) == {"left_out"}
        else:  # partial: what ran, then the rest left out
            assert s["status"] == "partial"
            first = statuses.index("left_out")
            assert set(statuses[first:]) == {"left_out"} and "left_out" not in statuses[:first]
    statuses = [s["status"] for s in sizes]
    assert "left_out" in statuses and "done" in statuses and statuses.count("partial") <= 1
    listed = {(c["cell"], c["mode"], c["algo"], c["type"], c["hidden"], c["batch"])
              for c in data["left_out"]}
    assert listed == {(c["cell"], c["mode"], c["algo"], c["type"], c["hidden"], c["batch"])
                      for c in data["cells"] if c["status"] == "left_out"}
    assert data["budget"]["seconds_used"] <= 60
    assert "left out (time budget): " in r.stdout


def test_a_run_cut_short_keeps_the_sizes_that_finished(binary, tmp_path):
    r = _dry(binary, tmp_path, "--stop-after-blocks", "2")
    assert r.returncode == 3 and "a run cut short" in r.stdout, r.stdout[-500:]
    data = json.loads((tmp_path / "rnn_limits.json").read_text(encoding="utf-8"))
    statuses = [s["status"] for s in data["budget"]["sizes"]]
    assert statuses[:2] == ["done", "done"] and set(statuses[2:]) == {"pending"}
    done = {(s["hidden"], s["batch"]) for s in data["budget"]["sizes"][:2]}
    for c in data["cells"]:
        ran = (c["hidden"], c["batch"]) in done
        assert (c["status"] in ("ok", "refused")) if ran else c["status"] == "pending", c
    assert not list(tmp_path.glob(".*.tmp"))  # no half-written file left


def test_the_options_choose_the_cells(binary, tmp_path):
    r = _dry(binary, tmp_path, "--hidden", "128", "--batch", "32,64", "--cell", "gru",
             "--algo", "standard", "--type", "fp16", "--mode", "training", "--no-floors",
             "--steps", "16")
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "rnn_limits.json").read_text(encoding="utf-8"))
    assert [(c["cell"], c["mode"], c["algo"], c["type"], c["hidden"], c["batch"], c["steps"])
            for c in data["cells"]] == [("GRU", "training", "STANDARD", "FP16", 128, 32, 16),
                                        ("GRU", "training", "STANDARD", "FP16", 128, 64, 16)]
    assert data["floors"]["gemms"] == [] and data["timing"]["check_steps"] == 8


# --- on a GPU ------------------------------------------------------------------------------

@pytest.mark.gpu
def test_on_a_gpu_every_cell_matches_the_reference_or_carries_its_refusal(binary, tmp_path):
    """Read from this GPU run's record of the program when it has one (conftest.this_runs_record),
    else from a short run of its own."""
    if not _has_gpu():
        pytest.skip("needs a GPU")
    recorded = this_runs_record("c/rnn_limits.c", "rnn_limits.json")
    if recorded:
        data, said = recorded
    else:
        r = _run(binary, "--hidden", "128,256", "--batch", "64", "--seconds", "150",
                 env={"SNIPPET_DATA_DIR": str(tmp_path)}, timeout=300)
        assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
        data, said = json.loads((tmp_path / "rnn_limits.json").read_text(encoding="utf-8")), \
            r.stdout + r.stderr
    assert "MISMATCH" not in said
    p = data["provenance"]
    assert p["machine"].startswith("GPU: ") and p["device"] == "GPU"
    for key in ("cudnn", "cuda_runtime", "cuda_driver", "gpu_compute_capability"):
        assert p.get(key), key
    codes = _status_codes()
    ok = 0
    for c in data["cells"]:
        assert c["status"] in ("ok", "refused", "left_out"), c
        if c["status"] == "refused":
            assert c["refused_by"].startswith("cudnn") and c["cudnn_status"] in codes, c
            assert codes[c["cudnn_status"]] == c["cudnn_status_code"]
        elif c["status"] == "ok":
            ok += 1
            assert c["check"]["max_error"] <= TOLERANCE[c["type"]], c
            assert c["us_per_step"]["median"] > 0 and len(c["us_per_step"]["samples"]) >= 5
    standard_fp32 = [c for c in data["cells"] if (c["algo"], c["type"]) == ("STANDARD", "FP32")]
    assert standard_fp32 and all(c["status"] == "ok" for c in standard_fp32)
    floors = data["floors"]
    assert all(v.startswith("ok:") for v in floors["gemm_check"].values()), floors["gemm_check"]
    for key in ("launch_back_to_back_us", "launch_and_synchronise_us", "grid_barrier_us"):
        assert floors[key]["status"] == "ok", floors[key]
    assert ok > 0
