"""The programs that ask a GPU what only a GPU answers: TF32 in cuDNN's RNNs, repeatable
training steps, the longest sequence of one cuDNN call, CUDA graphs, stateful Keras 3 layers on
PyTorch, and what packing costs. Without a GPU each says "needs a GPU" in one line and exits 77
(the site's own run of it); BENCH_CPU_DRY_RUN=1 takes each through its code on the CPU, where
what it prints is the CPU's answer, checked here against what a CPU must give. The GPU's
answers are records (results/), shown on the pages with their machine."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import REPO
from pipeline.running import device, runner

QUESTIONS = ["troubleshooting/tf32_precision.py", "troubleshooting/determinism.py",
             "troubleshooting/longest_sequence.py", "troubleshooting/cuda_graph.py",
             "troubleshooting/keras_stateful_torch.py", "benchmarks/packed_sequence.py"]
# Dry runs: all but determinism.py, whose twelve processes of PyTorch cost CI most of a minute
# on two cores; its code ran on the GPU of its record, and a change to it makes that record read
# as an older version until a GPU runs it again.
DRY_RUNS = [q for q in QUESTIONS if q != "troubleshooting/determinism.py"]
no_gpu = pytest.mark.skipif(device.has_gpu(), reason="checks the behaviour without a GPU")


@no_gpu
def test_without_a_gpu_each_says_so_in_one_line_and_exits_77():
    outcomes = runner.run_all(runner.Project(REPO), only=QUESTIONS)
    for o in outcomes:
        assert o.status == runner.NEEDS_GPU and o.returncode == 77, (o.snippet.rel, o.stderr)
        lines = o.stdout.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("needs a GPU: "), o.stdout


@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory) -> dict[str, str]:
    """{snippet: stdout} of one dry run of each, all at once, one thread each (they start 20
    processes between them, each mostly an import of PyTorch)."""
    if device.has_gpu():
        pytest.skip("a dry run is for a machine without a GPU")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}

    folders = {rel: tmp_path_factory.mktemp(rel.split("/")[-1].removesuffix(".py"))
               for rel in DRY_RUNS}  # here: mktemp is not safe from several threads

    def run(rel):
        folder = folders[rel]
        return subprocess.run([sys.executable, str(REPO / "snippets" / rel)], cwd=folder,
                              env={**env, "BENCH_CPU_DRY_RUN": "1", "OMP_NUM_THREADS": "1",
                                   "SNIPPET_DATA_DIR": str(folder / "data")},
                              capture_output=True, text=True, timeout=600)

    with ThreadPoolExecutor(len(DRY_RUNS)) as pool:
        procs = dict(zip(DRY_RUNS, pool.map(run, DRY_RUNS)))
    for rel, proc in procs.items():
        assert proc.returncode == 0, f"{rel}:\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return {rel: proc.stdout for rel, proc in procs.items()}


def test_tf32_on_the_cpu_every_setting_gives_fp32_sized_errors(dry_runs):
    out = dry_runs["troubleshooting/tf32_precision.py"]
    errors = [float(e) for e in re.findall(r"(?:LSTM|GRU) (\d\.\de[-+]\d\d)", out)]
    assert len(errors) == 10 and max(errors) < 1e-5, out  # five settings, two layers
    assert "the default error is TF32-sized (over 10 times the FP32 one): False" in out


def test_longest_sequence_on_the_cpu_no_limit_and_a_bidirectional_layer_needs_each_direction(
        dry_runs):
    out = dry_runs["troubleshooting/longest_sequence.py"]
    assert out.count("longest sequence in one call: None (no limit up to 4000 steps)") == 2
    naive, right = (float(x) for x in re.findall(r"max \|difference\| (\S+)", out))
    assert naive > 1e-3 and right < 1e-5, out


def test_cuda_graph_dry_run_runs_the_eager_half(dry_runs):
    out = dry_runs["troubleshooting/cuda_graph.py"]
    assert out.count("eager ran on the CPU (no CUDA graph there)") == 4, out


def test_stateful_keras_on_pytorch_fails_in_backward_without_use_cudnn_false(dry_runs):
    """Keras 3.15.1 on PyTorch, on the CPU: the stateful GRU and LSTM with the default
    use_cudnn="auto" fail in backward() and in fit(), as keras-team/keras#23462 reports for the
    GPU; use_cudnn=False works. Fails when a Keras release fixes it: then the pages change."""
    out = dry_runs["troubleshooting/keras_stateful_torch.py"]
    inplace = "RuntimeError: one of the variables needed for gradient computation has been " \
              "modified by an inplace operation"
    for name in ("GRU", "LSTM"):
        auto = re.search(rf"{name} stateful, use_cudnn='auto' cuDNN: False backward\(\): (.*)\n"
                         r"\s+fit\(\): (.*)", out)
        off = re.search(rf"{name} stateful, use_cudnn=False  cuDNN: False backward\(\): (.*)\n"
                        r"\s+fit\(\): (.*)", out)
        assert auto and off, out
        assert auto.group(1).startswith(inplace) and auto.group(2).startswith(inplace)
        assert off.groups() == ("ok", "ok")


def test_packed_sequence_dry_run_times_three_variants(dry_runs):
    out = dry_runs["benchmarks/packed_sequence.py"]
    assert out.startswith("DRY RUN on the CPU")
    for variant in ("padded", "packed, enforce_sorted=True", "packed, enforce_sorted=False"):
        assert re.search(rf"^{re.escape(variant)} +median", out, re.M), out
