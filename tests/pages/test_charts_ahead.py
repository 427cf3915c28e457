"""The charts a build draws in a second process while it renders pages: the right charts, in
an order that meets the build late, and each drawing the file the page would have drawn."""
from __future__ import annotations

import json

from conftest import REPO
from pipeline.pages import charts, charts_ahead, published
from test_charts import result


def test_the_charts_the_pages_name_spanish_first_then_english_from_the_last_page(tmp_path):
    """Pages in the order of their paths; each chart once a language."""
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "index.md").write_text("<!-- speedup-evidence -->\n<!-- chart: home -->\n")
    (docs / "index.es.md").write_text("<!-- speedup-evidence -->\n<!-- chart: home -->\n")
    (docs / "guide" / "speed.md").write_text("<!--chart: a-->\ntext\n<!-- gpu-chart: b -->\n"
                                             "<!-- published-speedups-chart -->\n")
    (docs / "guide" / "speed.es.md").write_text("<!-- chart: a -->\n<!-- gpu-chart: b -->\n")
    (docs / "guide" / "none.md").write_text("no chart here\n")
    assert charts_ahead.charts_named(docs, own_benchmark="own") == [
        ("a", "es"), ("b", "es"), ("home", "es"), ("own", "es"), (charts_ahead.PUBLISHED, "es"),
        ("home", "en"), ("own", "en"), (charts_ahead.PUBLISHED, "en"), ("a", "en"), ("b", "en")]
    # without a GPU record of our own, the home page draws only the published chart
    assert ("own", "en") not in charts_ahead.charts_named(docs, own_benchmark=None)


def test_every_chart_of_the_sites_pages_is_named(tmp_path):
    """Each marker a page of the site carries, in its language, as the build reads them."""
    docs = REPO / "docs"
    named = set(charts_ahead.charts_named(docs, own_benchmark=published.OWN_BENCHMARK))
    for page in docs.rglob("*.md"):
        lang, text = charts_ahead.page_language(page), page.read_text(encoding="utf-8")
        for m in charts.MARKER.finditer(text):
            assert (m.group(2), lang) in named, (page, m.group(0))
        if published.EVIDENCE_MARKER.search(text):
            assert (published.OWN_BENCHMARK, lang) in named


def test_the_child_draws_the_missing_charts_into_the_cache_as_the_page_would(tmp_path):
    local = tmp_path / "demo.json"
    local.write_text(json.dumps(result()))
    recorded = tmp_path / "recorded.json"
    recorded.write_text(json.dumps(result("GPU: Test GPU", "GPU")))
    inputs = {"demo": ([local], [(recorded, "2026-01-02")]),
              "gone": ([tmp_path / "missing.json"], [])}  # a page reports it, not the child
    cache, reference = tmp_path / "cache", tmp_path / "reference"
    named = [("demo", "es"), ("gone", "es"), ("demo", "en"), (charts_ahead.PUBLISHED, "en")]
    todo = charts_ahead.jobs(named, inputs.__getitem__, cache)
    assert [(j["benchmark"], j["lang"]) for j in todo] == [
        ("demo", "es"), ("demo", "en"), (charts_ahead.PUBLISHED, "en")]
    child = charts_ahead.start(todo, cache)
    assert child.wait(timeout=120) == 0
    for lang in ("en", "es"):  # the same files, with the same bytes, as the pages draw them
        drawn = charts.drawings("demo", *inputs["demo"], cache, lang)
        assert len(drawn) == 2 and all(path.is_file() for path, _, _ in drawn)
        made = [svg for svg, _ in charts.figures("demo", *inputs["demo"], reference, lang)]
        assert [path.read_text(encoding="utf-8") for path, _, _ in drawn] == made
    assert published.drawing("en", cache, published.load()).read_text(encoding="utf-8") in \
        published.chart_html("en", reference)
    assert charts_ahead.jobs(named, inputs.__getitem__, cache) == []  # nothing left to draw


def test_turned_off_or_nothing_to_draw_starts_no_child(tmp_path, monkeypatch):
    assert charts_ahead.start([], tmp_path) is None
    monkeypatch.setenv("CHARTS_AHEAD", "0")
    assert charts_ahead.start([{"benchmark": "demo", "lang": "en"}], tmp_path) is None
