"""snippets/python: each snippet runs and asserts what it prints; the page's version table
agrees with the installed TensorFlow; the page says what the snippets print."""
from __future__ import annotations

import importlib.metadata as md
import re
import sys

import pytest

from conftest import REPO, printed

PAGE = REPO / "docs" / "cudnn-python.md"


@pytest.fixture(scope="module")
def tf_out() -> str:
    return printed("python/tf_cudnn.py")


def _field(out: str, key: str) -> str:
    m = re.search(rf"^{re.escape(key)}\s+(.+)$", out, flags=re.M)
    assert m, (key, out)
    return m.group(1).strip()


def test_tf_snippet_and_the_version_table_row_of_the_installed_tensorflow(tf_out):
    version = md.version("tensorflow")
    assert f"TensorFlow {version}" in tf_out
    rows = [line.split("|")[1:-1] for line in PAGE.read_text().splitlines()
            if line.startswith(f"| {version} ")]
    assert len(rows) == 1, f"no row for TensorFlow {version} in the table"
    _, python, cudnn, cuda, extra = (c.strip() for c in rows[0])
    # cuDNN major and CUDA major.minor as TensorFlow reports its own build.
    assert _field(tf_out, "cudnn_version") == cudnn.split(".")[0]
    assert _field(tf_out, "cuda_version").startswith(cuda + ".")
    # The [and-cuda] cell quotes the installed package's metadata.
    req = next(r.split(";")[0] for r in md.requires("tensorflow")
               if r.startswith("nvidia-cudnn-cu12") and "and-cuda" in r)
    bounds = sorted(re.findall(r"[<>=]=?[\d.]+", req))
    assert sorted(re.findall(r"[<>=]=?[\d.]+", extra)) == bounds, (extra, req)
    lo, hi = python.split("–")
    assert lo == "3.10" and sys.version_info[:2] <= tuple(int(v) for v in hi.split("."))
    assert f"[and-cuda] needs {req}" in tf_out


def test_torch_snippet_reports_cudnn_use_by_device():
    import torch
    out = printed("python/torch_cudnn.py")
    on_gpu = torch.cuda.is_available()
    assert f"ran on cuDNN: {on_gpu and torch.backends.cudnn.is_available()}" in out
    if not torch.backends.cudnn.is_available():
        assert "cudnn.is_available() False" in out and "cudnn.version()      None" in out
    else:  # the CUDA build pinned here loads cuDNN without a GPU and reports its version
        assert f"cudnn.version()      {torch.backends.cudnn.version()}" in out
    assert "cudnn.enabled        True" in out  # the default the page describes


def test_frontend_snippet_reports_the_installed_cudnn_and_has_no_rnn():
    import cudnn
    out = printed("python/frontend_graph.py")
    wheel = md.version("nvidia-cudnn-cu12")
    assert f"cuDNN backend {'.'.join(wheel.split('.')[:3])}" in out
    assert "y: dim [2, 4, 7, 6]" in out
    assert not [m for m in dir(cudnn.pygraph) if re.search("rnn|lstm|gru", m, re.I)]
    from pipeline.running import device
    if device.has_gpu():
        assert "plans built" in out
    else:
        assert "create_handle(): cudnnHandle Create failed" in out


@pytest.mark.gpu
def test_frontend_builds_plans_on_a_gpu():
    from pipeline.running import device
    if not device.has_gpu():
        pytest.skip("needs a GPU")
    # a lent GPU machine has no cudnn-frontend: a skip a GPU run accepts (gpu_run.read_junit)
    pytest.importorskip("cudnn", reason="needs cudnn-frontend (nvidia-cudnn-frontend)")
    assert "plans built, workspace" in printed("python/frontend_graph.py")


def test_pages_embed_the_same_snippets_in_both_languages():
    refs = re.compile(r'--8<-- "([^"]+)"|<!-- output: (\S+) -->')
    en = refs.findall(PAGE.read_text())
    es = refs.findall((REPO / "docs" / "cudnn-python.es.md").read_text())
    assert en == es
    for name in ("tf_cudnn", "torch_cudnn", "frontend_graph"):
        assert ("", f"python/{name}.py") in en and (f"python/{name}.py:show", "") in en
