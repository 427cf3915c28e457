"""The release watch (pipeline/records/release_watch.py): what a registry holds newer than the
version matrix's records, asked with pip's own client of a registry made here (a folder of
package pages, as a registry serves them), so that nothing is downloaded."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from packaging.version import Version

from conftest import REPO
from pipeline.records import release_watch

RESULTS = REPO / "results" / "versions"


def _registry(root, releases: dict[str, list[str]]) -> str:
    """A registry in a folder (PEP 503 pages) listing these releases' wheels; its file:// URL."""
    for name, versions in releases.items():
        page = root / name
        page.mkdir(parents=True)
        wheel = name.replace("-", "_")
        page.joinpath("index.html").write_text("<!DOCTYPE html><html><body>" + "".join(
            f'<a href="{wheel}-{v}-py3-none-any.whl">{wheel}-{v}-py3-none-any.whl</a>'
            for v in versions) + "</body></html>")
    return root.as_uri()


def _watch(*args: str) -> subprocess.CompletedProcess:
    # this machine's pip configuration (its own indexes, its caps) left out: only the registry
    # made here is asked
    return subprocess.run([sys.executable, "-m", "pipeline.release_watch", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PIP_CONFIG_FILE": os.devnull})


def test_the_newest_release_on_record_is_read_from_the_records():
    """Judged by the cells' own folder names: the newest PyTorch and tf-keras cell run."""
    recorded = release_watch.on_record(RESULTS)
    torch_cells = [p.name.split("-", 1)[1] for p in RESULTS.glob("torch-*")]
    newest = max(torch_cells, key=lambda v: Version(v.split("+")[0])).split("+")[0]
    assert recorded["torch"][0] == newest
    # tf-keras-<release> (a topic's cells add a suffix: tf-keras-2.21.0-mixed-precision)
    tfk = max((m.group(1) for p in RESULTS.glob("tf-keras-*")
               if (m := re.fullmatch(r"tf-keras-([\d.]+)(?:-[a-z-]+)?", p.name))), key=Version)
    assert recorded["tf-keras"][0] == tfk
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", recorded["torch"][1])


def test_it_lists_what_the_registry_holds_newer_than_the_records(tmp_path):
    on_record = release_watch.on_record(RESULTS)["keras"][0]
    nightly_on_record = release_watch.on_record(RESULTS)["keras-nightly"][0]  # the matrix's cell
    url = _registry(tmp_path / "index", {
        "keras": ["3.0.0", on_record, "99.0.0", "99.1.0rc1"],
        "keras-nightly": ["99.0.0.dev2026102704"]})
    proc = _watch("--only", "keras", "keras-nightly", "--index-url", url)
    assert proc.returncode == 0, proc.stderr
    keras, nightly = proc.stdout.splitlines()
    assert f"{on_record} on record (" in keras and keras.endswith("newer on the registry: 99.0.0")
    assert f"{nightly_on_record} on record (" in nightly and \
        nightly.endswith("99.0.0.dev2026102704")  # pre-releases
    proc = _watch("--only", "keras", "--index-url", _registry(tmp_path / "same", {
        "keras": [on_record]}))
    assert proc.stdout.strip().endswith("nothing newer on the registry"), proc.stdout


@pytest.mark.parametrize("args,says", [
    (["--only", "not-a-library"], "invalid choice"),
    (["--results", "/nonexistent"], "is not a folder of records"),
    (["--only", "keras", "--index-url", "file:///nonexistent-registry"], "did not answer"),
])
def test_bad_input_or_no_registry_is_one_line_and_exit_2(args, says):
    proc = _watch(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and says in proc.stderr, proc.stderr


def test_the_criteria_page_names_the_newest_release_run_of_each_library():
    """<!-- newest-run --> (pipeline/claims/version_claims.py) reads the cells; the watch reads
    the packages each cell had installed: the two name the same releases."""
    from pipeline.claims import version_claims
    runs = version_claims.load(RESULTS, REPO / "snippets")
    recorded = release_watch.on_record(RESULTS)
    text = version_claims.newest_runs(runs, "en")
    for name, dist in (("Keras", "keras"), ("tf-keras", "tf-keras"), ("PyTorch", "torch")):
        assert f"{name} {recorded[dist][0]} (run on " in text, (name, recorded[dist], text)
    assert "<!-- newest-run -->" in (REPO / "docs" / "criteria.md").read_text()
    assert "<!-- newest-run -->" in (REPO / "docs" / "criteria.es.md").read_text()
