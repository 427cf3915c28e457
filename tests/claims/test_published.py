"""Published speed-ups (data/published_speedups.yml): one source of truth for every page.

Each row must name its source (an https URL) and year; where the source gives two timings, the
speed-up in the file must be their ratio (checked from the numbers the row quotes, not from the
speed-up itself). The pages carry only the hook's markers, never a hand-written copy of a row,
and the built pages show the table and the chart in their own language, titled as published by
others, with the home page's "measured" link going to numbers that exist.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from pipeline.pages import published
from pipeline.records import store as records

REPO = Path(__file__).resolve().parents[2]
ROWS = published.load()
PAGES = {"index": ("<!-- speedup-evidence -->", "<!-- speedup-link -->"),
         "fixing": ("<!-- published-speedups -->",),
         "trade-offs": ("<!-- published-speedups -->",),
         "benchmarks": ("<!-- published-speedups-chart -->",)}


def test_every_row_names_its_source_url_and_year():
    assert len(ROWS) >= 5
    for row in ROWS:
        assert row["source"]["name"] and row["source"]["url"].startswith("https://")
        assert 2010 <= row["year"] <= 2026
        assert row["framework"] and all(row[k]["en"] and row[k]["es"] for k in published.PROSE)
    assert len({r["id"] for r in ROWS}) == len(ROWS)
    # A figure the source gives only in words ("an order of magnitude") has no number.
    assert any(r["speedup"] is None for r in ROWS)


def test_a_row_without_a_source_url_or_year_is_refused(tmp_path):
    bad = tmp_path / "p.yml"
    for key, value, message in (("source", {"name": "x"}, "https:// url"),
                                ("year", "soon", "is not a year"),
                                ("speedup", "fast", "neither a positive number nor null")):
        rows = yaml.safe_load((REPO / "data" / "published_speedups.yml").read_text())
        rows[0][key] = value
        bad.write_text(yaml.safe_dump(rows, allow_unicode=True))
        with pytest.raises(published.PublishedError, match=re.escape(message)):
            published.load(bad)


def _seconds(text: str) -> list[float]:
    """The timings a result quotes: 0.0644 s, 204.5 µs, 0,0644 s (Spanish decimal comma)."""
    return [float(v.replace(",", ".")) for v in re.findall(r"(\d+(?:[.,]\d+)?) (?:s|ms|µs)\b", text)]


def test_each_speed_up_is_the_ratio_of_the_timings_its_row_quotes():
    """Recomputed from the numbers, in both languages; a speed-up without two timings is a
    bound the source states ("up to 6x")."""
    checked = 0
    for row in ROWS:
        times = _seconds(row["result"]["en"])
        assert _seconds(row["result"]["es"]) == times, row["id"]
        if row["speedup"] is None:
            continue
        if len(times) == 2:
            slow, fast = times
            assert round(slow / fast, 1) == pytest.approx(row["speedup"], abs=1e-9), row["id"]
            checked += 1
        else:
            assert row.get("bound") == "up_to" and str(int(row["speedup"])) in row["result"]["en"]
    assert checked >= 6


def test_each_source_links_the_exact_version_its_numbers_come_from():
    """A repository's file at a commit, an arXiv version, a thread with the comment's date, or a
    page with one version and its year: never a branch that moves."""
    for row in ROWS:
        url, version = row["source"]["url"], row["source"]["version"]
        assert version["en"] and version["es"], row["id"]
        if "/blob/" in url or "/tree/" in url:
            assert re.search(r"/(?:blob|tree)/[0-9a-f]{40}/", url), row["id"]
            assert url.split("/")[6][:7] in version["en"], row["id"]  # the commit it names
        elif "arxiv.org" in url:
            assert re.search(r"v\d+$", url), row["id"]
        elif "/issues/" in url or "/pull/" in url:
            assert re.search(r"\d{4}-\d\d-\d\d", version["en"]), row["id"]


@pytest.mark.parametrize("change, says", [
    (lambda r: r["source"].update(url="https://github.com/lcy-seso/Carrot/tree/master/benchmarks/rnnlm"),
     "is not at a commit"),
    (lambda r: r["source"].pop("version"), "needs `version`"),
    (lambda r: r.update(speedup=1.9), "is not 0.0644 / 0.0321 = 2.0"),
    (lambda r: r["result"].update(es="0,0645 s por lote frente a 0,0321 s"), "differ between languages"),
])
def test_a_row_without_its_exact_source_or_with_a_wrong_ratio_is_refused(tmp_path, change, says):
    rows = yaml.safe_load((REPO / "data" / "published_speedups.yml").read_text())
    change(next(r for r in rows if r["id"] == "carrot-tf"))
    bad = tmp_path / "p.yml"
    bad.write_text(yaml.safe_dump(rows, allow_unicode=True))
    with pytest.raises(published.PublishedError, match=re.escape(says)):
        published.load(bad)


def test_pages_hold_markers_and_no_hand_written_copy_of_a_row():
    sources = {r["source"]["name"].split(",")[0] for r in ROWS} | {r["source"]["url"] for r in ROWS}
    for name, markers in PAGES.items():
        for suffix in ("", ".es"):
            text = (REPO / "docs" / f"{name}{suffix}.md").read_text(encoding="utf-8")
            for marker in markers:
                assert marker in text, (name, suffix, marker)
    for path in sorted((REPO / "docs").rglob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.lstrip().startswith("|"):
                hit = [s for s in sources if s in line]
                assert not hit, f"{path.name}: a hand-written row of {hit}"


def _speedup_record(tmp_path, snippet: str, framework: str, medians: list[float],
                    device: str = "GPU") -> records.Record:
    """A record of one framework's speed-up sweep: one size a median."""
    folder = tmp_path / snippet
    (folder / "data").mkdir(parents=True)
    grid = [{"framework": framework, "layer": "LSTM", "mode": "train", "steps": 2 ** i,
             "units": 8, "batch": 2, "speedup": {"median": m}} for i, m in enumerate(medians)]
    (folder / "data" / f"{published.OWN_BENCHMARK}.json").write_text(json.dumps({"grid": grid}))
    return records.Record(slug="m", path=folder, stale=False, data={
        "device": device, "snippet": snippet, "provenance": {"machine": f"{device}: Test Card"}})


def test_the_link_says_what_the_records_measured_and_what_they_did_not(tmp_path):
    """Beside tf-keras's warning: the published figures until a GPU run measured TensorFlow;
    what the GPU runs measured of the other frameworks, and that TensorFlow is not among them;
    this site's TensorFlow figures, first, once recorded."""
    assert published.speedup_link([], "en") == \
        "[published figures, not measured here](#how-much-faster)"
    assert published.speedup_link([], "en", home=False) == \
        "[published figures, not measured here](index.md#how-much-faster)"
    cpu = _speedup_record(tmp_path / "cpu", "benchmarks/cudnn_speedup_torch.py", "PyTorch", [2],
                          device="CPU")
    assert published.speedup_link([records.Machine("m", {}, [cpu])], "es") == \
        "[cifras publicadas, no medidas aquí](#how-much-faster)"
    torch = _speedup_record(tmp_path, "benchmarks/cudnn_speedup_torch.py", "PyTorch",
                            [3.04, 1.26, 16.2])
    assert published.speedup_link([records.Machine("m", {}, [torch])], "en") == (
        "[published figures, not measured here](#how-much-faster); on this site's Test Card, "
        "TensorFlow was not measured; the others were: "
        "[PyTorch 1.3–16×](benchmarks.md#cudnn-speed-up)")
    tf = _speedup_record(tmp_path, "benchmarks/cudnn_speedup_tf_keras.py", "tf-keras", [0.8, 5.5])
    assert published.speedup_link([records.Machine("m", {}, [torch, tf])], "es") == (
        "[medido en Test Card: tf-keras 0,80–5,5 veces](benchmarks.md#cudnn-speed-up); "
        "[cifras publicadas, no medidas aquí](#how-much-faster)")


def _built(site: Path, name: str, lang: str) -> str:
    """A built page with its charts loaded, as a reader scrolling through it has it."""
    from built_pages import opened
    folder = site / lang if lang else site
    folder = folder / name if name != "index" else folder
    return opened(folder / "index.html")


def test_built_pages_show_the_published_figures_in_their_language(site):
    machines = records.load_all(REPO / "results", REPO / "snippets")
    own = published.own_gpu_records(machines)
    for lang in ("", "es"):
        w = published.WORDS[lang or "en"]
        home = _built(site, "index", lang)
        figure = home[home.index('id="published-speedups"'):]
        assert w["title"].split(":")[0] in figure and w["table"] in figure
        if not own:  # the "measured" link says it leads to published figures, on this page
            link = published.LINKS[lang or "en"]["published"]
            assert f'<a href="#how-much-faster">{link}</a>' in home
            assert "#cudnn-speed-up" not in home.split("<h2", 2)[1]
        else:  # a GPU record measured a speed-up: the link leads to this site's numbers too
            first = home.split("<h2", 2)[1]
            assert '<a href="benchmarks/#cudnn-speed-up">' in first, lang
        for name in ("index", "benchmarks", "fixing", "trade-offs"):
            text = _built(site, name, lang)
            for row in ROWS:
                assert row["source"]["url"] in text, (name, lang, row["id"])
                assert row["hardware"][lang or "en"] in text.replace("&quot;", '"')
        charted = _built(site, "benchmarks", lang)
        assert 'class="benchmark-chart published-chart"' in charted
        if lang:  # Spanish numbers and words, in the chart and its table
            assert "7,8×" in charted and "Aceleración" in charted and "7.8×" not in charted


def test_every_cpu_chart_says_in_its_title_that_no_variant_runs_cudnn(site):
    """A chart drawn from a CPU run never stands as a cuDNN result: its own title says so, in
    the page's language (the published chart is the only one without a CPU run)."""
    says = {"": "on a CPU no variant runs cuDNN", "es": "en una CPU ninguna variante usa cuDNN"}
    seen = 0
    for lang in ("", "es"):
        for name in ("index", "benchmarks", "trade-offs"):
            text = _built(site, name, lang)
            for figure in re.findall(r'<figure class="benchmark-chart"[^>]*>.*?</figure>', text,
                                     re.S):
                title = re.search(r"<title>([^<]*)</title>", figure).group(1)
                if "Measured on CPU" in figure or "Medido en CPU" in figure:
                    assert says[lang] in title, (name, lang, title)
                    seen += 1
    assert seen >= 10
