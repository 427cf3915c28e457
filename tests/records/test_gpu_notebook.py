"""notebooks/gpu_run.ipynb, the notebook for free hosted GPUs, executed on the CPU as CI can:
nbclient runs every cell, with the set-up cell pointed at a copy of this checkout and the GPU run
in its dry-run mode (`python -m pipeline.gpu_run --dry-run`). The archive it packs must then pass
`python -m pipeline.add_records` (the maintainers' check) into an empty results folder, in a
separate process; a failure at any step fails the test. The real repository is never written."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from conftest import REPO, module_from
from pipeline.running import device

NOTEBOOK = REPO / "notebooks" / "gpu_run.ipynb"
CELL_TIMEOUT = 120
# What a dry run records (CONTRIBUTING: two quick PyTorch snippets), written out here rather
# than read from pipeline.gpu_run, the module under test.
DRY_RUN_SNIPPETS = ["python/torch_cudnn.py", "troubleshooting/pytorch_cpu.py"]


def _copy_project(dest: Path) -> Path:
    """This checkout as a fresh clone has it: benchmarks/build_speed.py's own copy_project."""
    return module_from(REPO / "benchmarks" / "build_speed.py").copy_project(dest)


def _repo_results() -> list[tuple[str, int]]:
    return sorted((p.as_posix(), p.stat().st_mtime_ns) for p in REPO.glob("results/**/*"))


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook run by nbclient in a scratch folder, on a copy of the checkout, dry run."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    tmp = tmp_path_factory.mktemp("gpu-notebook")
    site = _copy_project(tmp / "site")
    work = tmp / "work"
    work.mkdir()
    env = {"GPU_NOTEBOOK_SOURCE": str(site), "GPU_NOTEBOOK_DRY_RUN": "1",
           "PIP_NO_INDEX": "1"}  # nothing may be fetched: every helper is installed here
    before = _repo_results()
    with pytest.MonkeyPatch.context() as mp:
        for name in ("SNIPPETS_DEVICE", "BENCH_SCALE", "BENCH_QUICK", "BENCH_CPU_DRY_RUN"):
            mp.delenv(name, raising=False)
        for name, value in env.items():
            mp.setenv(name, value)
        nb = nbformat.read(NOTEBOOK, as_version=4)
        nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                allow_errors=False,
                                resources={"metadata": {"path": str(work)}}).execute()
    return nb, site, work, before


def _text(nb) -> str:
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


def test_the_dry_run_archive_passes_add_records(executed, tmp_path):
    nb, site, work, before = executed
    (archive,) = work.glob("*.tar.gz")  # WORK is the notebook's folder outside Colab and Kaggle
    assert f"archive: {archive} (" in _text(nb)
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        (slug,) = {n.split("/")[0] for n in names}
        info = json.load(tar.extractfile(f"{slug}/machine.json"))
    # The dry run: its quick snippets (the two CONTRIBUTING names) recorded, nothing failed, no
    # GPU test, and the machine named as what it is: a CPU as a CPU, never a GPU claimed; a GPU
    # by the name nvidia-smi gives.
    assert info["run"]["dry_run"] is True and info["run"]["gpu_tests"] is None
    assert info["run"]["failed"] == {} and info["run"]["skipped"] == {}
    assert sorted(info["run"]["recorded"]) == DRY_RUN_SNIPPETS
    if device.has_gpu():
        assert info["provenance"]["machine"] == device.device_kind()
        assert info["provenance"]["gpu_name"] in device.device_kind()
    else:
        assert info["provenance"]["machine"].startswith("CPU: ")
        assert "gpu_name" not in info["provenance"]
    # The maintainers' check, in its own process, into an empty folder.
    results = tmp_path / "results"
    # Without being told, the check refuses a dry run: its records are not figures.
    refused = subprocess.run([sys.executable, "-m", "pipeline.add_records", "--results",
                              str(results), str(archive)], cwd=REPO, capture_output=True,
                             text=True, timeout=120)
    assert refused.returncode == 2 and "a dry run" in refused.stderr, refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not results.exists()
    proc = subprocess.run([sys.executable, "-m", "pipeline.add_records", "--results",
                           str(results), "--allow-dry-run", str(archive)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"added to {results}/{slug}/ ")
    added = sorted(p.relative_to(results / slug / "snippets").as_posix()
                   for p in results.glob(f"{slug}/snippets/**/result.json"))
    assert added == [f"{rel}/result.json" for rel in DRY_RUN_SNIPPETS]
    # The copy was used, not the real repository.
    assert (site / "results" / slug / "machine.json").is_file()
    assert _repo_results() == before


def test_the_notebook_clones_the_pinned_commit_of_the_site_repository():
    nb = json.loads(NOTEBOOK.read_text())
    code = "\n".join(_source(c) for c in nb["cells"] if c["cell_type"] == "code")
    repo_url = re.search(r"^repo_url:\s*(\S+)", (REPO / "mkdocs.yml").read_text(), re.M).group(1)
    assert f'"GPU_NOTEBOOK_SOURCE", "{repo_url}")' in code
    commit = re.search(r'"GPU_NOTEBOOK_COMMIT", "([0-9a-f]+)"\)', code)
    assert commit and len(commit.group(1)) == 40
    # Colab's badge opens this very file from that repository.
    intro = _source(nb["cells"][0])
    owner_repo = repo_url.removeprefix("https://github.com/")
    assert (f"https://colab.research.google.com/github/{owner_repo}/blob/main/"
            f"{NOTEBOOK.relative_to(REPO).as_posix()}") in intro
    assert "make add-records FILE=" in intro and "Kaggle" in intro


def test_the_pinned_commit_has_the_gpu_run_the_notebook_calls():
    nb = json.loads(NOTEBOOK.read_text())
    commit = re.search(r'"GPU_NOTEBOOK_COMMIT", "([0-9a-f]{40})"\)',
                       "".join(_source(c) for c in nb["cells"])).group(1)
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=REPO,
                             capture_output=True, text=True)
    if shallow.returncode != 0 or shallow.stdout.strip() != "false":
        # GitHub CI checks out the whole history for this (cpu.yml: fetch-depth: 0); there a
        # missing history is a broken checkout, never a pass.
        if os.environ.get("GITHUB_ACTIONS") == "true":
            pytest.fail("the checkout has no full git history (cpu.yml needs fetch-depth: 0)")
        pytest.skip("no full git history here to look the pinned commit up in")
    shown = subprocess.run(["git", "show", f"{commit}:pipeline/gpu_run.py"], cwd=REPO,
                           capture_output=True, text=True)
    assert shown.returncode == 0, f"{commit} is not a commit of this repository with gpu_run"
    assert '"--dry-run"' in shown.stdout and "def record_run" in shown.stdout


def test_a_dry_run_keeps_refusing_test_settings(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    for name in ("BENCH_QUICK", "BENCH_CPU_DRY_RUN"):
        proc = subprocess.run([sys.executable, "-m", "pipeline.gpu_run", "--dry-run",
                               "--results", str(tmp_path / "r")], cwd=REPO, capture_output=True,
                              text=True, timeout=60, env={**env, name: "1"})
        assert proc.returncode == 2 and f"{name} is set" in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "r").exists()


@pytest.mark.parametrize("suffix", ["md", "es.md"])
def test_the_benchmarks_page_links_the_notebook_for_colab_and_kaggle(suffix):
    """Readers with a free GPU find the notebook where the page asks for GPU numbers."""
    repo_url = re.search(r"^repo_url:\s*(\S+)", (REPO / "mkdocs.yml").read_text(), re.M).group(1)
    path = NOTEBOOK.relative_to(REPO).as_posix()
    owner_repo = repo_url.removeprefix("https://github.com/")
    page = (REPO / "docs" / f"benchmarks.{suffix}").read_text(encoding="utf-8")
    assert f"(https://colab.research.google.com/github/{owner_repo}/blob/main/{path})" in page
    assert f"({repo_url}/blob/main/{path})" in page and "Kaggle" in page
    assert "](#hosted-gpu)" in page and "{ #hosted-gpu }" in page
