"""Charts are drawn from result data and say where each series was measured: their bars and
lines, read back from the SVG, are placed by the data (tests/chart_geometry.py)."""
from __future__ import annotations

import copy
import json
import re
import statistics

import pytest

import chart_geometry
from pipeline.pages import charts


def result(machine="CPU: Test CPU (2 cores)", device="CPU", x=None):
    rows = [{"variant": v, "median": m, "q1": m - 1, "q3": m + 1, "min": m - 2, "max": m + 2,
             "samples": [m - 2, m - 1, m, m + 1, m + 2], **({"x": x} if x is not None else {})}
            for v, m in (("default", 10.0), ("recurrent_dropout=0.2", 15.0))]
    return {"benchmark": "demo", "title": "Demo step time", "metric": "ms per step",
            "provenance": {"machine": machine, "device": device, "tensorflow": "2.21.0",
                           "tf_built_with_cuda": "12.5.1", "date": "2026-11-20T00:00:00+00:00"},
            "results": rows}


def svgs(benchmark, local, recorded, cache, lang="en") -> list[str]:
    """The SVG of each chart a benchmark's data make: one per machine and run."""
    return [svg for svg, _ in charts.figures(benchmark, local, recorded, cache, lang)]


def one(benchmark, local, recorded, cache, lang="en") -> str:
    drawn = svgs(benchmark, local, recorded, cache, lang)
    assert len(drawn) == 1, f"{len(drawn)} charts"
    return drawn[0]


def title(svg: str) -> str:
    return re.search(r"<title>(.*?)</title>", svg, re.S).group(1)


def test_bar_chart_names_axes_variants_and_machine(tmp_path):
    local = tmp_path / "demo.json"
    local.write_text(json.dumps(result()))
    svg = one("demo", [local], [], tmp_path / "cache")
    assert svg.startswith("<svg")
    for text in ("Demo step time", "ms per step", "recurrent_dropout=0.2",
                 "Measured on CPU: Test CPU (2 cores) (this page's run)"):
        assert text in svg, text
    assert "12.5.1" not in svg  # CUDA build version is not shown for a CPU measurement


def test_each_machine_gets_a_chart_of_its_own_titled_with_it(tmp_path):
    """A recorded run is drawn next to this build's, never in the same chart: two machines (or
    two sets of sizes) never share a title, a legend or an axis."""
    local = tmp_path / "demo.json"
    local.write_text(json.dumps(result()))
    recorded = tmp_path / "recorded.json"
    recorded.write_text(json.dumps(result("GPU: Test GPU", "GPU")))
    cpu, gpu = svgs("demo", [local], [(recorded, "results/test-gpu, 2026-01-02")],
                    tmp_path / "cache")
    assert "CPU: Test CPU (2 cores) (this page's run)" in cpu and "Test GPU" not in cpu
    assert "GPU: Test GPU (results/test-gpu, 2026-01-02)" in gpu and "12.5.1" in gpu
    assert "Test CPU" not in gpu
    assert title(cpu) != title(gpu) and "Test GPU" in title(gpu) and "Test CPU" in title(cpu)


def sweep(medians: dict[str, list[float]], xs: list[int], machine="CPU: Test CPU (2 cores)"):
    data = result(machine)
    data["results"] = [{"variant": v, "x": x, "median": m, "q1": m * 0.9, "q3": m * 1.1,
                        "min": m * 0.8, "max": m * 1.2,
                        "samples": [m * 0.8, m * 0.9, m, m * 1.1, m * 1.2]}
                       for v, ms in medians.items() for x, m in zip(xs, ms)]
    data["x_label"] = "sequence length"
    return data


def test_bar_chart_bars_are_proportional_to_the_medians(tmp_path):
    """Read back from the SVG: each bar's length against its median, for one machine and for
    two side by side (each variant's label beside its own bars)."""
    local = tmp_path / "demo.json"
    data = result()
    data["results"].append(dict(data["results"][0], variant="unroll=True", median=4.0,
                                q1=3.5, q3=4.5))
    local.write_text(json.dumps(data))
    recorded = tmp_path / "recorded.json"
    other = result("GPU: Test GPU", "GPU")
    other["results"] = [dict(r, median=r["median"] / 7, q1=r["median"] / 7 - 0.1,
                             q3=r["median"] / 7 + 0.1) for r in other["results"]]
    recorded.write_text(json.dumps(other))
    svg = one("demo", [local], [], tmp_path / "cache")
    chart_geometry.assert_bars_show(svg, [data])
    assert not chart_geometry.lines(svg)
    mine, theirs = svgs("demo", [local], [(recorded, "results/test-gpu, 2026-01-02")],
                        tmp_path / "cache")
    chart_geometry.assert_bars_show(mine, [data])
    chart_geometry.assert_bars_show(theirs, [other])


def test_the_geometry_check_fails_on_a_wrong_chart(tmp_path):
    """The comparison can fail: a chart drawn from other medians does not pass for the data."""
    local = tmp_path / "demo.json"
    data = result()
    local.write_text(json.dumps(data))
    svg = one("demo", [local], [], tmp_path / "cache")
    wrong = copy.deepcopy(data)
    wrong["results"][1]["median"] = 12.0
    with pytest.raises(AssertionError):
        chart_geometry.assert_bars_show(svg, [wrong])
    swapped = copy.deepcopy(data)
    swapped["results"].reverse()
    with pytest.raises(AssertionError):
        chart_geometry.assert_bars_show(svg, [swapped])
    line = sweep({"default": [10, 20, 25], "recurrent_dropout=0.2": [15, 40, 90]}, [10, 50, 100])
    local.write_text(json.dumps(line))
    drawn = one("demo", [local], [], tmp_path / "cache")
    off = sweep({"default": [10, 20, 25], "recurrent_dropout=0.2": [15, 40, 60]}, [10, 50, 100])
    with pytest.raises(AssertionError):
        chart_geometry.assert_lines_show(drawn, [off])


def test_line_chart_when_results_have_x(tmp_path):
    """One line per variant, a point per x, placed by the medians; no bars."""
    local = tmp_path / "demo.json"
    data = sweep({"default": [10, 20, 25], "recurrent_dropout=0.2": [15, 40, 90]}, [10, 50, 100])
    local.write_text(json.dumps(data))
    svg = one("demo", [local], [], tmp_path / "cache")
    assert "sequence length" in svg
    chart_geometry.assert_lines_show(svg, [data])
    data["x_log"] = True  # sweeps over powers of two
    data["results"] = [dict(r, x={10: 8, 50: 32, 100: 128}[r["x"]]) for r in data["results"]]
    local.write_text(json.dumps(data))
    chart_geometry.assert_lines_show(one("demo", [local], [], tmp_path / "cache"),
                                     [data], log_x=True)


def test_bad_or_missing_data_is_a_clear_error(tmp_path):
    with pytest.raises(charts.NoData, match="no data for benchmark"):
        charts.figures("demo", [], [], tmp_path / "cache")
    bad = tmp_path / "demo.json"
    bad.write_text(json.dumps({"benchmark": "demo"}))
    with pytest.raises(charts.ChartError, match="missing"):
        charts.figures("demo", [bad], [], tmp_path / "cache")
    bad.write_text("{truncated")
    with pytest.raises(charts.ChartError, match="not a readable result file"):
        charts.figures("demo", [], [(bad, "results/x, 2026-01-02")], tmp_path / "cache")


def test_a_gpu_only_benchmark_measured_on_a_gpu_has_no_missing_gpu_note(tmp_path):
    """Its rows need not say "device": the whole set comes from a GPU (the speed-up benchmark);
    a CPU set of the same benchmark still gets the note."""
    data = dict(result("GPU: Test GPU", "GPU"), expects_gpu=True)
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps(data))
    svg = one("demo", [], [(path, "results/test-gpu, 2026-01-02")], tmp_path / "cache")
    assert charts.NO_GPU_NOTE not in svg
    cpu = tmp_path / "cpu.json"
    cpu.write_text(json.dumps(dict(result(), expects_gpu=True)))
    assert charts.NO_GPU_NOTE in one("demo", [cpu], [], tmp_path / "cache")


def test_a_chart_in_spanish_translates_its_words_and_keeps_its_numbers(tmp_path):
    local = tmp_path / "demo.json"
    data = dict(result(), title="Keras LSTM train step (batch 64, 50 steps, 64 units)",
                metric="ms per train step")
    local.write_text(json.dumps(data))
    svg = one("demo", [local], [], tmp_path / "cache", "es")
    for text in ("Paso de entrenamiento de una LSTM de Keras (lote 64, 50 pasos, 64 unidades)",
                 "ms por paso de entrenamiento", "Medido en CPU: Test CPU (2 cores) "
                 "(ejecución de esta página)", "recurrent_dropout=0.2", "10 (9 a 11)"):
        assert text in svg, text
    table = charts.figures("demo", [local], [], tmp_path / "cache", "es")[0][1]
    assert "<summary>Los datos en una tabla</summary>" in table and "<td>15</td>" in table
    with pytest.raises(charts.ChartError, match="no chart words for language 'fr'"):
        charts.figures("demo", [local], [], tmp_path / "cache", "fr")


def test_a_row_of_fewer_than_five_samples_is_drawn_without_a_spread(tmp_path):
    """Its median is drawn; no interquartile range in the SVG's description or the data table,
    and the chart's note says why."""
    data = result()
    data["results"][1].update(samples=[14.0, 15.0, 16.0], q1=14.5, q3=15.5)
    local = tmp_path / "demo.json"
    local.write_text(json.dumps(data))
    (svg, table), = charts.figures("demo", [local], [], tmp_path / "cache")
    desc = re.search(r"<desc>(.*?)</desc>", svg, re.S).group(1)
    assert "default: 10 (9 to 11); recurrent_dropout=0.2: 15." in desc
    assert "<td>15</td><td>—</td>" in table and "<td>9 – 11</td>" in table
    assert "no spread drawn from fewer than 5" in svg and "3 to 5 timed repetitions" in svg
    chart_geometry.assert_bars_show(svg, [data])


def speedup_part(framework: str, medians: dict[tuple, float]) -> dict:
    """One framework's speed-up file as snippets/benchmarks/_speedup.py writes it: summary rows
    over its own sizes, and the grid of every size it timed (steps, units, batch)."""
    grid = [{"framework": framework, "layer": "LSTM", "mode": "train", "steps": s, "units": u,
             "batch": b, "speedup": {"median": m, "samples": [m] * 9}}
            for (s, u, b), m in medians.items()]
    own = statistics.median(medians.values())
    return {"benchmark": "cudnn_speedup", "title": "cuDNN speed-up over the generic kernel "
            "(median over the sizes; bars: IQR)", "metric": "speed-up (generic time / cuDNN time)",
            "precision": "FP32, TF32 off", "expects_gpu": True,
            "provenance": {"machine": "GPU: Test GPU", "device": "GPU", "torch": "2.11.0",
                           "cudnn": 91900, "date": "2026-11-26T00:00:00+00:00"},
            "results": [{"variant": f"{framework} LSTM train", "median": own, "q1": own,
                         "q3": own, "min": own, "max": own, "samples": list(medians.values())}],
            "grid": grid}


def test_frameworks_are_compared_on_the_sizes_all_of_them_timed(tmp_path):
    """A time limit cut one framework's sweep: every framework's bar is then its median over the
    sizes both timed, says how many, and the table lists them; the chart says what it shows."""
    sizes = [(64, 256, 64), (16, 256, 64), (64, 64, 64), (64, 1024, 64), (64, 256, 512)]
    fast = dict(zip(sizes, [4.0, 3.0, 9.0, 1.5, 2.0]))
    slow = dict(zip(sizes[:4], [10.0, 12.0, 14.0, 11.0]))  # no batch-512 size
    paths = []
    for name, medians in (("PyTorch", fast), ("Keras 3 (PyTorch)", slow)):
        path = tmp_path / f"{len(paths)}.json"
        path.write_text(json.dumps(speedup_part(name, medians)))
        paths.append((path, "2026-11-26"))
    (svg, table), = charts.figures("cudnn_speedup", [], paths, tmp_path / "cache")
    shared = sizes[:4]
    expected = {"PyTorch": statistics.median(fast[k] for k in shared),
                "Keras 3 (PyTorch)": statistics.median(slow[k] for k in shared)}
    drawn = {"variant": "", "results": [
        {"variant": f"{f} LSTM train · 4 sizes", "median": m} for f, m in expected.items()]}
    chart_geometry.assert_bars_show(svg, [drawn])
    assert expected["PyTorch"] == 3.5 != statistics.median(fast.values())  # 3.0 over its own five
    assert "every framework timed" in title(svg) and "GPU: Test GPU" in title(svg)
    for size in ("64×256×64", "16×256×64", "64×64×64", "64×1024×64"):
        assert size in table
    assert "64×256×512" not in table
    assert "FP32, TF32 off" in svg and "9 timed repetitions a size" in svg


def test_start_up_log_lines_are_left_out_and_the_rest_kept():
    from pipeline.running import startup_noise
    raw = ("WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
           "I0000 00:00:1795472353.960445   12354 port.cc:153] oneDNN custom operations are on.\n"
           "needs a GPU: no CUDA device here\n"
           "E0000 00:00:1795472353.9 12354 cuda_platform.cc:51] failed call to cuInit: INTERNAL\n"
           "TensorFlow 2.21.0\n")
    assert startup_noise.strip(raw) == "needs a GPU: no CUDA device here\nTensorFlow 2.21.0\n"
