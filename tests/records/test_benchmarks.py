"""The benchmark snippets, their charts, the run-it-yourself command and the ratio script.

The results checked are the site build's own: the runner's run of each benchmark snippet at
BENCH_SCALE=1, taken from its cache when the site was built in this session, run now otherwise
(the build then finds them cached). This checks what they write, not how fast anything is.
"""
from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipeline.pages import charts
from pipeline.records import store as records
from pipeline.running import runner

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import ratio_stability  # noqa: E402
import run_benchmarks  # noqa: E402

sys.path.insert(0, str(REPO / "tests"))
import chart_geometry  # noqa: E402

# Measured by every build (the GPU half of cpu_vs_gpu only where there is a GPU).
CPU_BENCHMARKS = ["batch_size_sweep", "cpu_vs_gpu", "keras_rnn_variants",
                  "lstm_recurrent_dropout", "torch_lstm_vs_cell_loop", "unroll_sweep"]
# Need a GPU: "needs a GPU" here; their charts are drawn from GPU records (tests/content/test_cudnn_speedup.py).
GPU_BENCHMARKS = ["cpu_gpu_crossover", "cudnn_speedup_keras_jax", "cudnn_speedup_keras_tensorflow",
                  "cudnn_speedup_keras_torch", "cudnn_speedup_tf_keras", "cudnn_speedup_torch",
                  "packed_sequence", "rnn_alternatives", "rnn_limits_jax",
                  "rnn_limits_keras_torch", "rnn_limits_torch"]
BENCHMARKS = sorted(CPU_BENCHMARKS + GPU_BENCHMARKS)
# Result files written besides the one named after each snippet (charts of their own).
EXTRA_RESULTS = ["keras_rnn_variants_steps", "keras_rnn_variants_units", "unroll_memory"]
RESULTS = CPU_BENCHMARKS + EXTRA_RESULTS
GPU_RESULTS = ["cpu_gpu_crossover", "cudnn_speedup", "cudnn_speedup_steps", "cudnn_speedup_units",
               "cudnn_speedup_batch", "cudnn_tflops", "packed_sequence"]
PAGES = ["trade-offs", "benchmarks"]


@pytest.fixture(scope="module")
def measured():
    """{result: (data, path)} from the build's run of every benchmark snippet."""
    pytest.importorskip("torch")
    outcomes = runner.run_all(runner.Project(REPO),
                              only=[f"benchmarks/{name}.py" for name in BENCHMARKS])
    assert not runner.failures(outcomes), runner.RunFailed(runner.failures(outcomes))
    out = {}
    for o in outcomes:
        for path in sorted(Path(o.data_dir).glob("*.json")) if o.data_dir else []:
            data = charts.load_result(path)
            key = data["benchmark"]  # on a GPU, one benchmark is written by several snippets
            out[key if key not in out else f"{key} ({o.snippet.path.stem})"] = (data, path)
    return out


def gpu_visible() -> bool:
    """nvidia-smi's answer (the runner's own, which keys its cache on it): importing TensorFlow
    to ask it cost this module some 6 CPU seconds."""
    from pipeline.running import device
    return device.has_gpu()


def test_every_benchmark_snippet_is_known_here():
    assert [p.stem for p in run_benchmarks.benchmark_snippets()] == BENCHMARKS


def test_each_snippet_writes_exactly_the_known_result_files(measured):
    expected = set(RESULTS) | (set(GPU_RESULTS) if gpu_visible() else set())
    assert {name.split(" (")[0] for name in measured} == expected


@pytest.mark.parametrize("name", RESULTS)
def test_each_chart_draws_the_medians_it_was_given(measured, name, tmp_path):
    """The chart the pages show for this build's run, read back from its SVG: bar lengths or
    line points placed by the medians of the result file (tests/chart_geometry.py)."""
    data, path = measured[name]
    (svg, _), = charts.figures(name, [path], [], tmp_path)
    if any(r.get("x") is not None for r in data["results"]):
        chart_geometry.assert_lines_show(svg, [data], log_x=bool(data.get("x_log")))
    else:
        chart_geometry.assert_bars_show(svg, [data])


@pytest.mark.parametrize("name", RESULTS)
def test_each_benchmark_writes_a_valid_result_with_provenance(measured, name):
    data, path = measured[name]
    assert charts.load_result(path)["benchmark"] == name
    assert "quick" not in data and data["bench_scale"] == 1  # what the pages show
    p = data["provenance"]
    for key in ("device", "device_name", "machine", "cpu_model", "cpu_cores", "python", "date"):
        assert p.get(key), key
    assert p["tensorflow"] and p["keras"]
    assert p["machine"].startswith(f"{p['device']}: ")
    assert len({r["variant"] + str(r.get("x")) for r in data["results"]}) == len(data["results"])
    for r in data["results"]:
        assert r["q1"] <= r["median"] <= r["q3"] and r["min"] <= r["q1"] and r["q3"] <= r["max"]
        assert len(r["samples"]) >= 3 and all(s > 0 for s in r["samples"])


def test_sweeps_cover_short_to_long_and_small_to_large(measured):
    unroll, _ = measured["unroll_sweep"]
    xs = sorted({r["x"] for r in unroll["results"]})
    assert xs[0] <= 8 and xs[-1] >= 128
    by_len = {(r["x"], r["variant"].endswith("True")): r["graph_ops"] for r in unroll["results"]}
    assert by_len[(xs[-1], True)] > 10 * by_len[(xs[0], True)]  # the unrolled graph grows
    assert by_len[(xs[-1], False)] == by_len[(xs[0], False)]    # the loop's does not
    sweep, _ = measured["batch_size_sweep"]
    assert "samples per second" in sweep["metric"] and sweep["lower_is_better"] is False
    for r in sweep["results"]:  # throughput is batch / time, from the same timings
        assert r["median"] == pytest.approx(r["x"] * 1000 / r["ms_median"])


def test_keras_variants_cover_both_layers_modes_lengths_and_units(measured):
    data, _ = measured["keras_rnn_variants"]
    grid = data["grid"]
    sizes = {(r["steps"], r["units"]) for r in grid}
    steps = sorted({s for s, _ in sizes})
    units = sorted({u for _, u in sizes})
    assert len(steps) >= 3 and steps[0] <= 8 and steps[-1] >= 128
    assert len(units) >= 3 and units[-1] >= 8 * units[0]
    cells = {(r["layer"], r["name"], r["mode"], r["steps"], r["units"]) for r in grid}
    names = {r["name"] for r in grid}
    assert len(names) == 8 and {r["layer"] for r in grid} == {"LSTM", "GRU"}
    assert len(cells) == len(grid) == 8 * 2 * len(sizes)  # every variant, mode and size once
    # The sweep charts are the grid's training steps divided by the default layer's median.
    default = {(r["layer"], r["steps"], r["units"]): r["median"] for r in grid
               if r["mode"] == "train" and r["name"].endswith("(cuDNN-eligible)")}
    for axis, values in (("steps", steps), ("units", units)):
        chart, _ = measured[f"keras_rnn_variants_{axis}"]
        (other, value), = chart["fixed"].items()
        assert chart["relative_to"] == "the default layer"
        assert sorted({r["x"] for r in chart["results"]}) == values
        assert len(chart["results"]) == 6 * len(values)  # 3 variants per layer, no default
        for row in chart["results"]:
            cell, = (r for r in grid if r["name"] == row["variant"] and r["mode"] == "train"
                     and r[axis] == row["x"] and r[other] == value)
            assert row["median"] == pytest.approx(
                cell["median"] / default[(cell["layer"], cell["steps"], cell["units"])])


def test_unrolling_memory_is_measured_and_activations_grow_with_length(measured):
    data, _ = measured["unroll_memory"]
    assert "MiB" in data["metric"]
    for variant in {r["variant"] for r in data["results"]}:
        rows = sorted((r for r in data["results"] if r["variant"] == variant),
                      key=lambda r: r["x"])
        assert all(r["median"] > 0 for r in rows), variant
        # Backpropagation keeps every step's activations: the peak grows with the length.
        assert rows[-1]["median"] > 4 * rows[0]["median"], variant


def test_no_cpu_figure_is_labelled_gpu(measured):
    has_gpu = gpu_visible()
    for name, (data, _) in measured.items():
        p = data["provenance"]
        assert (p["device"] == "GPU") == has_gpu
        if not has_gpu:
            assert p["machine"].startswith("CPU: ") and "GPU" not in p["machine"]
            assert not any(r.get("device") == "GPU" for r in data["results"]), name
    rows = measured["cpu_vs_gpu"][0]["results"]
    for r in rows:
        assert r["variant"].endswith(f" on {r['device']}")
    assert {r["device"] for r in rows} == ({"CPU", "GPU"} if has_gpu else {"CPU"})


@pytest.mark.skipif("gpu_visible()")
def test_without_a_gpu_the_gpu_half_says_so(measured, tmp_path):
    data, path = measured["cpu_vs_gpu"]
    assert data["expects_gpu"] is True
    (svg, _), = charts.figures("cpu_vs_gpu", [path], [], tmp_path / "cache")
    assert charts.NO_GPU_NOTE in svg and "on GPU" not in svg
    # Once a GPU machine's record is committed, the note goes and its bars are labelled GPU.
    # (A made-up test machine: its numbers are this CPU's, relabelled, and never published.)
    gpu = copy.deepcopy(data)
    gpu["provenance"].update(device="GPU", device_name="Test GPU", machine="GPU: Test GPU")
    gpu["results"] += [dict(r, variant=r["variant"].replace("on CPU", "on GPU"), device="GPU")
                       for r in gpu["results"]]
    (tmp_path / "gpu.json").write_text(json.dumps(gpu))
    cpu, gpu = (svg for svg, _ in charts.figures(
        "cpu_vs_gpu", [path], [(tmp_path / "gpu.json", "results/test-gpu, 2026-01-02")],
        tmp_path / "cache"))
    assert charts.NO_GPU_NOTE not in cpu + gpu  # a GPU has measured it: no chart says otherwise
    assert "GPU: Test GPU (results/test-gpu, 2026-01-02)" in gpu and "Test GPU" not in cpu


@pytest.mark.parametrize("name", RESULTS)
def test_each_chart_is_drawn_and_names_the_device(measured, name, tmp_path):
    data, path = measured[name]
    (svg, _), = charts.figures(name, [path], [], tmp_path / "cache")
    assert svg.startswith("<svg") and data["title"] in svg.replace("&gt;", ">")
    assert f"Measured on {data['provenance']['machine']} (this page's run)" in svg
    if data["provenance"]["device"] == "CPU":
        assert "GPU:" not in svg


def page(name: str, lang: str = "") -> str:
    return (REPO / "docs" / f"{name}{'.' + lang if lang else ''}.md").read_text(encoding="utf-8")


MARKERS = re.compile(r'--8<-- "[^"]+"|<!-- (?:output|chart|gpu-chart|gpu-result): \S+ -->|'
                     r'<!-- execution-times -->|<!-- machines-on-record -->')


@pytest.mark.parametrize("name", PAGES)
def test_both_languages_show_the_same_snippets_outputs_and_charts(name):
    assert MARKERS.findall(page(name)) == MARKERS.findall(page(name, "es"))


def test_every_benchmark_has_its_output_and_chart_on_the_benchmarks_page():
    text = page("benchmarks")
    for name in BENCHMARKS:
        assert f"<!-- output: benchmarks/{name}.py -->" in text
    for name in RESULTS:
        assert f"<!-- chart: {name} -->" in text
    for name in GPU_RESULTS:  # no data without a GPU run: these say so instead of failing
        assert f"<!-- gpu-chart: {name} -->" in text
    assert "<!-- machines-on-record -->" in text


def test_published_numbers_cite_only_sources_the_fact_sheet_vouches_for():
    """Every source in data/published_speedups.yml is one the team's fact sheet lists under
    "Published numbers": data/published_sources.yml, copied from it into the repository."""
    from pipeline.pages import published
    vouched = "\n".join(s["name"] for s in
                        yaml.safe_load((REPO / "data" / "published_sources.yml").read_text()))
    rows = published.load()
    assert rows
    for row in rows:
        names = re.findall(r"[\w.-]+/[\w.-]+(?:#\d+)?|arXiv:\d+\.\d+|cuDNN 5",
                           row["source"]["name"])
        assert names and all(n in vouched for n in names), row["source"]["name"]


@pytest.mark.parametrize("lang", ["", "es"])
def test_published_numbers_sit_apart_on_the_trade_offs_page(lang):
    """The trade-offs page's published section draws the data file (no hand-written table, no
    chart or output of this site's runs)."""
    text = page("trade-offs", lang)
    head, published_part = re.split(r"\n## (?:Published numbers|Cifras publicadas)", text)
    assert "<!-- published-speedups -->" in published_part
    assert not [line for line in published_part.splitlines() if line.startswith("|")]
    assert "<!-- chart" not in published_part and "<!-- output" not in published_part


def test_run_command_records_each_benchmark_under_the_machines_folder(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "run_benchmarks.py"),
                           "--only", "torch_lstm_vs_cell_loop", "--machine", "My Laptop (M2)",
                           "--results", str(tmp_path)], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (machine,) = records.load_all(tmp_path, REPO / "snippets")  # the same records as a GPU run's
    assert machine.slug == "my-laptop-m2"
    (record,) = machine.records
    assert record.snippet == "benchmarks/torch_lstm_vs_cell_loop.py" and not record.stale
    data = charts.load_result(record.data_dir / "torch_lstm_vs_cell_loop.json")
    assert data["bench_scale"] == 1 and "quick" not in data
    assert machine.data["provenance"]["machine"] == record.machine
    assert record.machine.startswith("GPU: " if gpu_visible() else "CPU: ")
    assert f"records: {tmp_path}/my-laptop-m2/" in proc.stdout
    leftovers = [p for p in tmp_path.rglob("*") if p.name.startswith(".")]
    assert not leftovers


@pytest.mark.parametrize("args, env, says", [
    (["--scale", "0"], {}, "--scale"), (["--only", "no_such_bench"], {}, "unknown benchmark"),
    (["--machine", "!!!"], {}, "machine name"),
    ([], {"BENCH_QUICK": "1"}, "BENCH_QUICK is set"),
    ([], {"BENCH_CPU_DRY_RUN": "1"}, "BENCH_CPU_DRY_RUN is set")])
def test_run_command_rejects_bad_input_with_one_line(args, env, says, tmp_path, monkeypatch,
                                                     capsys):
    """Its main() in this process (the test above runs the script itself): a process each
    would import the pipeline five times over."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    try:
        code = run_benchmarks.main([*args, "--results", str(tmp_path)])
    except SystemExit as e:  # argparse's own exit
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and says in err
    assert len(err.strip().splitlines()) == 1 and not list(tmp_path.iterdir())


def _result(ratio: float) -> dict:
    rows = [{"variant": v, "median": m, "q1": m, "q3": m, "min": m, "max": m, "samples": [m]}
            for v, m in (("default", 10.0), ("slow", 10.0 * ratio))]
    return {"benchmark": "demo", "title": "t", "metric": "ms",
            "provenance": {"machine": "CPU: x (2 cores)", "device": "CPU"}, "results": rows}


def test_ratio_stability_reports_how_far_each_ratio_moved(tmp_path, capsys):
    for folder, ratio in (("a", 2.0), ("b", 2.3)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "demo.json").write_text(json.dumps(_result(ratio)))
    rows = ratio_stability.compare({"demo": _result(2.0)}, {"demo": _result(2.3)})
    assert [(r[1], round(r[4], 1)) for r in rows] == [("slow / default", 15.0)]
    argv = ["--compare", str(tmp_path / "a"), str(tmp_path / "b")]
    assert ratio_stability.main(argv) == 0
    assert ratio_stability.main(argv + ["--check"]) == 1
    assert ratio_stability.main(argv + ["--check", "--target", "20"]) == 0
    assert "15.0%" in capsys.readouterr().out
    assert ratio_stability.main(["--compare", str(tmp_path / "a"), str(tmp_path / "nope")]) == 2


def test_ratio_stability_takes_ready_made_ratios_as_they_are():
    data = _result(2.0)
    data["relative_to"] = "the default layer"
    for r, x in zip(data["results"], (8, 128)):
        r["x"] = x
    assert ratio_stability.ratios(data) == {"default @ 8 / the default layer": 10.0,
                                            "slow @ 128 / the default layer": 20.0}


def test_ratio_stability_compares_each_layer_with_its_own_default():
    data = _result(2.0)
    data["results"] += [dict(r, variant="GRU " + r["variant"], median=r["median"] * 3)
                        for r in data["results"]]
    for r in data["results"]:
        r["layer"] = "GRU" if r["variant"].startswith("GRU") else "LSTM"
    assert ratio_stability.ratios(data) == {"slow / default": 2.0,
                                            "GRU slow / GRU default": 2.0}
