"""The cuDNN speed-up benchmark without a GPU: each snippet says "needs a GPU" and exits 77; a dry
run (BENCH_CPU_DRY_RUN=1, tiny sizes on the CPU) goes through every line of each snippet, its
kernel check and its result files, which charts refuse to draw as measurements; the FLOP count,
the paired timing and the sweep are checked against a fake clock. Nothing here is a GPU figure."""
from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import REPO
from pipeline.pages import charts
from pipeline.running import device

SNIPPETS = REPO / "snippets" / "benchmarks"
sys.path.insert(0, str(SNIPPETS))
import _speedup  # noqa: E402

SPEEDUP = ["cudnn_speedup_torch", "cudnn_speedup_keras_tensorflow", "cudnn_speedup_keras_jax",
           "cudnn_speedup_keras_torch", "cudnn_speedup_tf_keras"]
FILES = ["cudnn_speedup", "cudnn_speedup_steps", "cudnn_speedup_units", "cudnn_speedup_batch",
         "cudnn_tflops"]
FRAMEWORKS = {"cudnn_speedup_torch": "PyTorch", "cudnn_speedup_keras_tensorflow":
              "Keras 3 (TensorFlow)", "cudnn_speedup_keras_jax": "Keras 3 (JAX)",
              "cudnn_speedup_keras_torch": "Keras 3 (PyTorch)", "cudnn_speedup_tf_keras": "tf-keras"}
no_gpu = pytest.mark.skipif(device.has_gpu(), reason="checks the behaviour without a GPU")
# XLA's code generation unoptimized (its HLO, which the kernel check reads, is the same): the
# JAX dry run's some 75 compiles of tiny programs took 29 CPU seconds, 24 with this.
DRY_RUN_ENV = {"cudnn_speedup_keras_jax": {"XLA_FLAGS": "--xla_backend_optimization_level=0"}}


def _run(name: str, tmp_path: Path, **env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    return subprocess.run([sys.executable, str(SNIPPETS / f"{name}.py")], cwd=tmp_path,
                          env={**clean, "SNIPPET_DATA_DIR": str(tmp_path / "data"), **env},
                          capture_output=True, text=True, timeout=600)


@no_gpu
@pytest.mark.parametrize("name", SPEEDUP + ["cpu_gpu_crossover"])
def test_without_a_gpu_each_says_so_in_one_line_and_exits_77(name):
    """The site's own run of each snippet on this machine (the runner's result, from its cache;
    run now if not cached)."""
    from pipeline.running import runner
    (outcome,) = runner.run_all(runner.Project(REPO), only=[f"benchmarks/{name}.py"])
    assert outcome.returncode == 77 and outcome.status == runner.NEEDS_GPU, \
        (outcome.status, outcome.stdout, outcome.stderr[-2000:])
    lines = outcome.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("needs a GPU: "), outcome.stdout
    data = Path(outcome.data_dir) if outcome.data_dir else None
    assert data is None or not data.exists() or not any(data.iterdir())


@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory) -> dict:
    """{snippet: (stdout, data folder)} from one dry run of each speed-up snippet."""
    if device.has_gpu():
        pytest.skip("a dry run is for a machine without a GPU")
    # The five at once: each is mostly a framework's import, and a dry run measures nothing.
    folders = {name: tmp_path_factory.mktemp(name) for name in SPEEDUP}
    with ThreadPoolExecutor(len(SPEEDUP)) as pool:
        procs = dict(zip(SPEEDUP, pool.map(
            lambda name: _run(name, folders[name], BENCH_CPU_DRY_RUN="1",
                              **DRY_RUN_ENV.get(name, {})), SPEEDUP)))
    out = {}
    for name, proc in procs.items():
        assert proc.returncode == 0, f"{name}:\n{proc.stdout}\n{proc.stderr[-4000:]}"
        out[name] = (proc.stdout, folders[name] / "data")
    return out


@pytest.mark.parametrize("name", SPEEDUP)
def test_a_dry_run_goes_through_the_kernel_check_the_sweep_and_the_files(dry_runs, name):
    stdout, data = dry_runs[name]
    assert stdout.startswith("DRY RUN on the CPU (BENCH_CPU_DRY_RUN=1)")
    checks = [line for line in stdout.splitlines() if line.startswith("kernel check:")]
    assert checks, stdout
    # On the CPU no path may claim cuDNN (tf-keras puts its cuDNN function in every eligible
    # layer's graph: there the implementation that ran is checked instead).
    for line in checks:
        assert "True" not in line and "CudnnRNN" not in line.split("neutral")[-1], line
    framework = FRAMEWORKS[name]
    assert sorted(p.stem for p in data.glob("*.json")) == sorted(FILES)
    for stem in FILES:
        d = json.loads((data / f"{stem}.json").read_text())
        assert d["dry_run"] is True and d["framework"] == framework
        assert d["provenance"]["device"] == "CPU" and d["expects_gpu"] is True
        with pytest.raises(charts.ChartError, match="dry run"):
            charts.load_result(data / f"{stem}.json")
    grid = json.loads((data / "cudnn_speedup.json").read_text())["grid"]
    assert {(c["layer"], c["mode"]) for c in grid} == {
        (layer, mode) for layer in ("LSTM", "GRU") for mode in ("train", "inference")}
    for c in grid:
        # The page's count, written out: 2 · G · B · T · H · (I + H) for an inference pass
        # (G = 4 for an LSTM, 3 for a GRU; here I = H), three times that for a training step.
        g, b, t, h = {"LSTM": 4, "GRU": 3}[c["layer"]], c["batch"], c["steps"], c["units"]
        assert c["flops"] == 2 * g * b * t * h * (h + h) * (3 if c["mode"] == "train" else 1)
        assert c["speedup"]["q1"] <= c["speedup"]["median"] <= c["speedup"]["q3"]
        assert c["cudnn_tflops"] > 0 and 0 < c["of_matmul"]


def test_the_frameworks_files_draw_one_chart_each_side_by_side(dry_runs, tmp_path):
    """What a GPU build or a record set would draw: every framework in one chart per file."""
    for stem in FILES:
        local = []
        for name in SPEEDUP:
            d = json.loads((dry_runs[name][1] / f"{stem}.json").read_text())
            del d["dry_run"]  # only to see the charts drawn; such a file is never published
            path = tmp_path / name / f"{stem}.json"
            path.parent.mkdir(exist_ok=True)
            path.write_text(json.dumps(d))
            local.append(path)
        (svg, _), = charts.figures(stem, local, [], tmp_path / "cache")
        text = svg.replace("&amp;", "&")
        for framework in FRAMEWORKS.values():
            assert framework in text, (stem, framework)
        assert text.count("Measured on CPU:") == 1  # one machine, one series set


@no_gpu
def test_the_crossover_dry_run_writes_its_ratio_and_crossover(tmp_path):
    proc = _run("cpu_gpu_crossover", tmp_path, BENCH_CPU_DRY_RUN="1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    d = json.loads((tmp_path / "data" / "cpu_gpu_crossover.json").read_text())
    assert d["dry_run"] is True and set(d["crossover"]) == {"train, batch 1", "inference, batch 1"}
    for r in d["results"]:  # the ratio is CPU time / GPU time, pair by pair
        pairs = [c / g for c, g in zip(r["cpu_ms"]["samples"], r["gpu_ms"]["samples"])]
        assert r["samples"] == pytest.approx(pairs)
        assert r["median"] == pytest.approx(statistics.median(pairs))
    assert re.search(r"crossover, train, batch 1: (the GPU is faster from \d+ units|"
                     r"the CPU is faster at every size measured)", proc.stdout)


def test_flop_count_is_the_one_the_page_states():
    assert _speedup.flops("LSTM", "inference", 10, 20, 3, 5) == 2 * 4 * 3 * 10 * 20 * (5 + 20)
    assert _speedup.flops("GRU", "inference", 10, 20, 3, 5) == 2 * 3 * 3 * 10 * 20 * (5 + 20)
    assert _speedup.flops("LSTM", "train", 10, 20, 3, 5) == 3 * _speedup.flops(
        "LSTM", "inference", 10, 20, 3, 5)
    for lang in ("", ".es"):
        text = (REPO / "docs" / f"benchmarks{lang}.md").read_text()
        assert "2 · G · B · T · H · (I + H)" in text and "G = 4" in text and "G = 3" in text


class Clock:
    """time.perf_counter for paired(): each step advances it by its own duration."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def step(self, ms):
        def run():
            self.now += ms / 1000
        return run


def test_paired_timing_takes_turns_and_divides_each_pair(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(_speedup.time, "perf_counter", clock)
    monkeypatch.delenv("BENCH_QUICK", raising=False)
    monkeypatch.delenv("BENCH_CPU_DRY_RUN", raising=False)
    durations = iter([2, 6] * 2 + [2, 6, 1, 5, 4, 8, 2, 6, 2, 6, 2, 6, 2, 6, 2, 6, 2, 6])
    order = []

    def step(name):
        def run():
            order.append(name)
            clock.step(next(durations))()
        return run

    fast, slow, ratio = _speedup.paired(step("cudnn"), step("generic"), lambda: None)
    assert order == ["cudnn", "generic"] * 11  # 2 warm-up pairs, 9 timed pairs, in turns
    assert slow["samples"][:3] == pytest.approx([6, 5, 8]) and fast["samples"][:3] == \
        pytest.approx([2, 1, 4])
    assert ratio["samples"][:3] == pytest.approx([3, 5, 2])  # each pair, not medians divided
    assert ratio["median"] == pytest.approx(3)


def test_the_sweep_changes_one_axis_at_a_time_around_the_base(monkeypatch):
    monkeypatch.delenv("BENCH_CPU_DRY_RUN", raising=False)
    found = _speedup.sizes()
    assert found[0] == _speedup.BASE and len(found) == len({tuple(s.values()) for s in found})
    for size in found:
        assert sum(size[k] != v for k, v in _speedup.BASE.items()) <= 1
    for axis, values in _speedup.SWEEP.items():
        assert sorted({s[axis] for s in found}) == sorted(values)
        assert values[0] <= _speedup.BASE[axis] <= values[-1]


def test_the_matmul_rate_counts_two_n_cubed_flops(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(_speedup.time, "perf_counter", clock)
    monkeypatch.delenv("BENCH_CPU_DRY_RUN", raising=False)
    rate = _speedup.matmul_rate(lambda n: clock.step(1000), lambda: None, n=1000, repeats=3)
    assert rate["median"] == pytest.approx(2 * 1000 ** 3 / 1.0 / 1e12)


def test_a_deadline_cuts_the_sweep_at_its_largest_sizes_and_says_which(monkeypatch, tmp_path,
                                                                        capsys):
    """BENCH_DEADLINE (a GPU run with a time budget): the sweep, cheapest sizes first, starts no
    cell after it; the cells left out are printed and written with the results."""
    import time
    monkeypatch.setenv("SNIPPET_DATA_DIR", str(tmp_path))
    for name in ("BENCH_CPU_DRY_RUN", "BENCH_QUICK"):
        monkeypatch.delenv(name, raising=False)
    sizes = _speedup.sizes()
    assert sizes[0] == _speedup.BASE
    cost = [s["steps"] * s["units"] ** 2 * s["batch"] for s in sizes[1:]]
    assert cost == sorted(cost) and len(sizes) == 8

    def paths(layer, mode, size):
        return (lambda: time.sleep(0.001)), (lambda: time.sleep(0.002))

    monkeypatch.setenv("BENCH_DEADLINE", str(time.time() + 0.4))
    grid = _speedup.run("Fake", paths, _speedup.no_sync, lambda n: (lambda: None))
    out = capsys.readouterr().out
    total = len(sizes) * len(_speedup.LAYERS) * len(_speedup.MODES)
    assert 0 < len(grid) < total, len(grid)
    data = json.loads((tmp_path / "cudnn_speedup.json").read_text())
    left_out = data["not_timed"]
    assert len(grid) + len(left_out) == total
    # Whole sizes in order: what was timed comes before what was not.
    order = [(s["steps"], s["units"], s["batch"]) for s in sizes]
    timed_last = max(order.index((c["steps"], c["units"], c["batch"])) for c in grid)
    cut_first = min(order.index((c["steps"], c["units"], c["batch"])) for c in left_out)
    assert timed_last <= cut_first
    assert f"not timed, past the run's deadline: {len(left_out)} of {total} cells" in out
