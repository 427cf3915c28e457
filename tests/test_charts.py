"""Charts are drawn from result data and say where each series was measured: their bars and
lines, read back from the SVG, are placed by the data (tests/chart_geometry.py)."""
from __future__ import annotations

import copy
import json

import pytest

import chart_geometry
from pipeline import charts


def result(machine="CPU: Test CPU (2 cores)", device="CPU", x=None):
    rows = [{"variant": v, "median": m, "q1": m - 1, "q3": m + 1, "min": m - 2, "max": m + 2,
             "samples": [m], **({"x": x} if x is not None else {})}
            for v, m in (("default", 10.0), ("recurrent_dropout=0.2", 15.0))]
    return {"benchmark": "demo", "title": "Demo step time", "metric": "ms per step",
            "provenance": {"machine": machine, "device": device, "tensorflow": "2.21.0",
                           "tf_built_with_cuda": "12.5.1", "date": "2026-11-20T00:00:00+00:00"},
            "results": rows}


def test_bar_chart_names_axes_variants_and_machine(tmp_path):
    local = tmp_path / "demo.json"
    local.write_text(json.dumps(result()))
    svg = charts.chart_svg("demo", [local], [], tmp_path / "cache")
    assert svg.startswith("<svg")
    for text in ("Demo step time", "ms per step", "recurrent_dropout=0.2",
                 "Measured on CPU: Test CPU (2 cores) (this page's run)"):
        assert text in svg, text
    assert "12.5.1" not in svg  # CUDA build version is not shown for a CPU measurement


def test_recorded_results_are_drawn_next_to_this_build(tmp_path):
    local = tmp_path / "demo.json"
    local.write_text(json.dumps(result()))
    recorded = tmp_path / "recorded.json"
    recorded.write_text(json.dumps(result("GPU: Test GPU", "GPU")))
    svg = charts.chart_svg("demo", [local], [(recorded, "results/test-gpu, 2026-01-02")],
                           tmp_path / "cache")
    assert "CPU: Test CPU (2 cores) (this page's run)" in svg
    assert "GPU: Test GPU (results/test-gpu, 2026-01-02)" in svg and "12.5.1" in svg


def sweep(medians: dict[str, list[float]], xs: list[int], machine="CPU: Test CPU (2 cores)"):
    data = result(machine)
    data["results"] = [{"variant": v, "x": x, "median": m, "q1": m * 0.9, "q3": m * 1.1,
                        "min": m * 0.8, "max": m * 1.2, "samples": [m]}
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
    svg = charts.chart_svg("demo", [local], [], tmp_path / "cache")
    chart_geometry.assert_bars_show(svg, [data])
    assert not chart_geometry.lines(svg)
    both = charts.chart_svg("demo", [local], [(recorded, "results/test-gpu, 2026-01-02")],
                            tmp_path / "cache")
    chart_geometry.assert_bars_show(both, [data, other])


def test_the_geometry_check_fails_on_a_wrong_chart(tmp_path):
    """The comparison can fail: a chart drawn from other medians does not pass for the data."""
    local = tmp_path / "demo.json"
    data = result()
    local.write_text(json.dumps(data))
    svg = charts.chart_svg("demo", [local], [], tmp_path / "cache")
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
    drawn = charts.chart_svg("demo", [local], [], tmp_path / "cache")
    off = sweep({"default": [10, 20, 25], "recurrent_dropout=0.2": [15, 40, 60]}, [10, 50, 100])
    with pytest.raises(AssertionError):
        chart_geometry.assert_lines_show(drawn, [off])


def test_line_chart_when_results_have_x(tmp_path):
    """One line per variant, a point per x, placed by the medians; no bars."""
    local = tmp_path / "demo.json"
    data = sweep({"default": [10, 20, 25], "recurrent_dropout=0.2": [15, 40, 90]}, [10, 50, 100])
    local.write_text(json.dumps(data))
    svg = charts.chart_svg("demo", [local], [], tmp_path / "cache")
    assert "sequence length" in svg
    chart_geometry.assert_lines_show(svg, [data])
    data["x_log"] = True  # sweeps over powers of two
    data["results"] = [dict(r, x={10: 8, 50: 32, 100: 128}[r["x"]]) for r in data["results"]]
    local.write_text(json.dumps(data))
    chart_geometry.assert_lines_show(charts.chart_svg("demo", [local], [], tmp_path / "cache"),
                                     [data], log_x=True)


def test_bad_or_missing_data_is_a_clear_error(tmp_path):
    with pytest.raises(charts.NoData, match="no data for benchmark"):
        charts.chart_svg("demo", [], [], tmp_path / "cache")
    bad = tmp_path / "demo.json"
    bad.write_text(json.dumps({"benchmark": "demo"}))
    with pytest.raises(charts.ChartError, match="missing"):
        charts.chart_svg("demo", [bad], [], tmp_path / "cache")
    bad.write_text("{truncated")
    with pytest.raises(charts.ChartError, match="not a readable result file"):
        charts.chart_svg("demo", [], [(bad, "results/x, 2026-01-02")], tmp_path / "cache")


def test_a_gpu_only_benchmark_measured_on_a_gpu_has_no_missing_gpu_note(tmp_path):
    """Its rows need not say "device": the whole set comes from a GPU (the speed-up benchmark);
    a CPU set of the same benchmark still gets the note."""
    data = dict(result("GPU: Test GPU", "GPU"), expects_gpu=True)
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps(data))
    svg = charts.chart_svg("demo", [], [(path, "results/test-gpu, 2026-01-02")], tmp_path / "cache")
    assert charts.NO_GPU_NOTE not in svg
    cpu = tmp_path / "cpu.json"
    cpu.write_text(json.dumps(dict(result(), expects_gpu=True)))
    assert charts.NO_GPU_NOTE in charts.chart_svg("demo", [cpu], [], tmp_path / "cache")


def test_a_chart_in_spanish_translates_its_words_and_keeps_its_numbers(tmp_path):
    local = tmp_path / "demo.json"
    data = dict(result(), title="Keras LSTM train step (batch 64, 50 steps, 64 units)",
                metric="ms per train step")
    local.write_text(json.dumps(data))
    svg = charts.chart_svg("demo", [local], [], tmp_path / "cache", "es")
    for text in ("Paso de entrenamiento de una LSTM de Keras (lote 64, 50 pasos, 64 unidades)",
                 "ms por paso de entrenamiento", "Medido en CPU: Test CPU (2 cores) "
                 "(ejecución de esta página)", "recurrent_dropout=0.2", "10 (9 a 11)"):
        assert text in svg, text
    table = charts.chart_table("demo", [local], [], "es")
    assert "<summary>Los datos en una tabla</summary>" in table and "<td>15</td>" in table
    with pytest.raises(charts.ChartError, match="no chart words for language 'fr'"):
        charts.chart_svg("demo", [local], [], tmp_path / "cache", "fr")


def test_start_up_log_lines_are_left_out_and_the_rest_kept():
    from pipeline import startup_noise
    raw = ("WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
           "I0000 00:00:1795472353.960445   12354 port.cc:153] oneDNN custom operations are on.\n"
           "needs a GPU: no CUDA device here\n"
           "E0000 00:00:1795472353.9 12354 cuda_platform.cc:51] failed call to cuInit: INTERNAL\n"
           "TensorFlow 2.21.0\n")
    assert startup_noise.strip(raw) == "needs a GPU: no CUDA device here\nTensorFlow 2.21.0\n"
