"""A CPU build shows the GPU records under results/: next to "needs a GPU", labelled with the
machine and date; from an older version of the snippet, said so and never shown as current; a
page's claim of a GPU result fails the strict build when no record backs it; GPU-only charts say
that nothing is recorded yet; the machines on record are listed. The records here are made by
the tests, on a pretend GPU, in throw-away projects: none of their text is a measurement."""
from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from pipeline.pages.hooks import build as mkdocs_hook
from pipeline.records import gpu_run, machine, store as records
from pipeline.running import device, runner

CPU = {"SNIPPETS_DEVICE": "CPU"}
PROVENANCE = {"machine": "GPU: Test Card", "gpu_name": "Test Card", "gpu_count": 1,
              "driver": "555.42", "cuda_driver_supports": "12.5", "torch_cudnn": 90100,
              "packages": {"torch": "9.9.9", "jax": "8.8.8"}, "python": "3.12.3",
              "cpu_model": "Test CPU", "cpu_cores": 16, "date": "2026-01-02T03:04:05+00:00"}
# Needs a GPU: on the pretend GPU it prints its output and writes benchmark data.
GPU_SNIPPET = """\
# snippet: needs=gpu
import json, os, pathlib, sys
if False:  # a program that imports PyTorch (never run: the test machine's import is slow)
    import torch  # noqa: F401
if os.environ.get('SNIPPETS_DEVICE', 'CPU') == 'CPU':
    print('needs a GPU: no CUDA device here')
    sys.exit(77)
print('-'.join(['TEST', 'RECORD', '{version}']))
rows = [{{'variant': 'test variant', 'median': 2.0, 'q1': 1.0, 'q3': 3.0, 'min': 1.0,
         'max': 3.0, 'samples': [2.0], 'device': 'GPU'}}]
pathlib.Path(os.environ['SNIPPET_DATA_DIR'], 'gpu_demo.json').write_text(json.dumps({{
    'benchmark': 'gpu_demo', 'title': 'Test chart of a pretend GPU', 'metric': 'test units',
    'provenance': {{'machine': 'GPU: Test Card', 'device': 'GPU', 'date': '2026-01-02'}},
    'results': rows}}))
"""


def _page(mini, body: str) -> None:
    (mini.root / "docs" / "index.md").write_text("# Mini\n\n" + textwrap.dedent(body))


def _record(mini, monkeypatch, version="ONE") -> None:
    """What `make gpu-run` does, on the pretend GPU: run, record, write machine.json."""
    mini.snippet("g/gpu.py", GPU_SNIPPET.format(version=version))
    monkeypatch.setenv("SNIPPETS_DEVICE", "GPU: Test Card")
    monkeypatch.setattr(machine, "provenance", lambda: dict(PROVENANCE))
    monkeypatch.setenv("BENCH_SCALE", "4")  # as gpu_run.main sets it
    device.device_kind.cache_clear()
    try:
        status, _ = gpu_run.record_run(runner.Project(mini.root), mini.root / "results",
                                       tests=False, log=lambda *a: None)
    finally:
        monkeypatch.setenv("SNIPPETS_DEVICE", "CPU")
        device.device_kind.cache_clear()
    assert status == 0


def _html(mini) -> str:
    """The built page with what it loads when the reader gets to it (charts) in place."""
    from built_pages import opened
    return opened(mini.root / "site" / "index.html")


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&middot;", "·")


def test_needs_a_gpu_box_shows_the_record_labelled_with_machine_and_date(mini, monkeypatch):
    _record(mini, monkeypatch)
    _page(mini, "<!-- output: g/gpu.py -->\n")
    proc = mini.build(env=CPU)
    assert proc.returncode == 0, proc.stderr
    text = _text(_html(mini))
    rec, = records.for_snippet(records.load_all(mini.root / "results", mini.root / "snippets"),
                               "g/gpu.py")
    date = rec.date
    # Said once, in one line: the program's own "needs a GPU: ..." line is not repeated.
    assert "Needs a GPU. Without one it only says so. On a GPU:" in text
    assert "needs a GPU: no CUDA device here" not in text and "no GPU run of it" not in text
    # The releases it ran with: the framework it imports, from the record's provenance
    # (PROVENANCE: torch 9.9.9, cuDNN 90100), not JAX, which it does not import.
    assert f"Recorded on GPU: Test Card · PyTorch 9.9.9, cuDNN 9.1.0 · {date}" in text
    assert "JAX 8.8.8" not in text
    assert "TEST-RECORD-ONE" in text
    assert "for the current version of this program" in text
    assert "results/" not in text  # where the record is kept is not for the reader
    assert "older version" not in text


def test_a_record_of_an_older_version_says_so_and_is_never_shown_as_current(mini, monkeypatch):
    _record(mini, monkeypatch, version="ONE")
    mini.snippet("g/gpu.py", GPU_SNIPPET.format(version="TWO"))  # edited, not run on a GPU since
    _page(mini, "<!-- output: g/gpu.py -->\n")
    proc = mini.build(env=CPU)
    assert proc.returncode == 0, proc.stderr
    text = _text(_html(mini))
    assert "From an older version of this program · GPU: Test Card" in text
    assert "recorded on GPU: Test Card" in text and "for an older version of this program" in text
    assert "Output of an older version · recorded on GPU: Test Card" in text
    assert "TEST-RECORD-ONE" in text and "TEST-RECORD-TWO" not in text
    assert "current version of this program (" not in text and "Recorded on GPU" not in text
    # Recorded again on the GPU: current again.
    _record(mini, monkeypatch, version="TWO")
    assert mini.build(env=CPU).returncode == 0
    text = _text(_html(mini))
    assert "TEST-RECORD-TWO" in text and "older version" not in text


def test_a_gpu_result_claim_without_a_record_fails_the_strict_build(mini, monkeypatch):
    mini.snippet("g/gpu.py", GPU_SNIPPET.format(version="ONE"))
    _page(mini, "On a GPU:\n\n<!-- gpu-result: g/gpu.py -->\n")
    proc = mini.build(env=CPU)
    assert proc.returncode != 0
    assert ("index.md: <!-- gpu-result: g/gpu.py --> claims a GPU result, but no record under "
            "results/ backs it") in proc.stderr
    _record(mini, monkeypatch)
    proc = mini.build(env=CPU)
    assert proc.returncode == 0, proc.stderr
    text = _text(_html(mini))
    assert "Recorded on GPU: Test Card" in text and "TEST-RECORD-ONE" in text


def test_gpu_chart_says_nothing_is_recorded_then_draws_the_record(mini, monkeypatch):
    mini.snippet("g/gpu.py", GPU_SNIPPET.format(version="ONE"))
    _page(mini, "<!-- gpu-chart: gpu_demo -->\n")
    proc = mini.build(env=CPU)
    assert proc.returncode == 0, proc.stderr
    html = _html(mini)
    assert 'class="benchmark-chart no-data"' in html and "<svg" not in html
    assert "No GPU measurement is recorded yet for this chart (<code>gpu_demo</code>)" in html
    assert "needs a run on a GPU machine" in html and "make gpu-run" not in html  # reader page
    # A plain chart with no data is still an error (a typo must not pass).
    _page(mini, "<!-- chart: gpu_demo -->\n")
    proc = mini.build(env=CPU)
    assert proc.returncode != 0 and "no data for benchmark 'gpu_demo'" in proc.stderr
    _record(mini, monkeypatch)
    _page(mini, "<!-- gpu-chart: gpu_demo -->\n")
    proc = mini.build(env=CPU)
    assert proc.returncode == 0, proc.stderr
    html = _html(mini)
    date = json.loads(next((mini.root / "results").rglob("result.json")).read_text())[
        "finished_at"][:10]
    assert "<svg" in html and "no-data" not in html
    assert f"Measured on GPU: Test Card ({date})" in html and "results/" not in html


def test_the_machines_on_record_are_listed_with_their_provenance(mini, monkeypatch):
    mini.snippet("g/gpu.py", GPU_SNIPPET.format(version="ONE"))
    _page(mini, "<!-- machines-on-record -->\n")
    assert mini.build(env=CPU).returncode == 0
    assert "No machine is on record yet" in _text(_html(mini))
    _record(mini, monkeypatch)
    assert mini.build(env=CPU).returncode == 0
    text = _text(_html(mini))
    for fact in ("GPU: Test Card", "555.42 · supports CUDA 12.5",
                 "PyTorch 9.1.0", "PyTorch 9.9.9 · JAX 8.8.8", "3.12.3 · Test CPU (16)",
                 "sizes ×4"):
        assert fact in text, fact
    assert "results/" not in text and "BENCH_SCALE" not in text  # build details stay off the page


def test_a_damaged_record_fails_the_strict_build_naming_it(mini, monkeypatch):
    _record(mini, monkeypatch)
    _page(mini, "<!-- output: g/gpu.py -->\n")
    data = next((mini.root / "results").rglob("data/gpu_demo.json"))
    data.write_text(data.read_text().replace("2.0", "20.0"))
    proc = mini.build(env=CPU)
    assert proc.returncode != 0
    assert "results/test-card/snippets/g/gpu.py/result.json: data/gpu_demo.json does not match" \
        in proc.stderr


def test_every_word_the_hook_writes_has_its_spanish_twin_with_the_same_placeholders():
    config = yaml.load((REPO / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    i18n = next(p["i18n"] for p in config["plugins"] if isinstance(p, dict) and "i18n" in p)
    es = next(lang for lang in i18n["languages"] if lang["locale"] == "es")
    spanish = es["extra"]["pipeline_text"]
    assert set(spanish) == set(mkdocs_hook.TEXT)
    for key, english in mkdocs_hook.TEXT.items():
        if isinstance(english, dict):
            assert set(spanish[key]) == set(english), key
        else:
            assert set(re.findall(r"\{\w+\}", spanish[key])) == \
                set(re.findall(r"\{\w+\}", english)), key


def test_no_record_or_fake_gpu_data_is_committed_under_results():
    results = REPO / "results"
    for path in results.rglob("result.json") if results.is_dir() else []:
        data = json.loads(path.read_text())
        assert "Test Card" not in data["device"], f"a test's record was committed: {path}"


def test_a_record_cannot_put_markup_or_a_link_on_a_page(mini, monkeypatch):
    """Whoever made a record, its machine's name and versions are text on the page: no element,
    no link, no script (add_records refuses such names; this holds for any record)."""
    from bs4 import BeautifulSoup
    hostile = "GPU: <script>alert(1)</script> [x](javascript:alert(2)) <b>bold</b> `code`"
    monkeypatch.setitem(PROVENANCE, "machine", hostile)
    monkeypatch.setitem(PROVENANCE, "gpu_name", "<img src=x onerror=alert(3)>")
    _record(mini, monkeypatch)
    _page(mini, "<!-- output: g/gpu.py -->\n\n<!-- machines-on-record -->\n")
    proc = mini.build(env=CPU)
    assert proc.returncode == 0, proc.stderr
    soup = BeautifulSoup(_html(mini), "html.parser")
    article = soup.find(attrs={"role": "main"})  # the page body in the mini site's theme
    assert not article.find_all(["script", "img", "b"])
    assert not [a for a in soup.find_all("a") if "javascript" in (a.get("href") or "")]
    assert not [c for c in article.find_all("code") if c.get_text() == "code"]
    text = article.get_text(" ")
    assert "<script>alert(1)</script> [x](javascript:alert(2)) <b>bold</b> `code`" in text
    assert "<img src=x onerror=alert(3)>" in text
