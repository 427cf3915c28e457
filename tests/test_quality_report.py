"""quality/lighthouse_report.py audits the reader pages, not the fragments the build loads into
them."""
from __future__ import annotations

import importlib.util

from conftest import REPO


def _report():
    spec = importlib.util.spec_from_file_location("lighthouse_report",
                                                  REPO / "quality" / "lighthouse_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lighthouse_audits_pages_not_the_block_fragments_under_assets(tmp_path):
    for rel in ("index.html", "404.html", "criteria/index.html", "es/index.html",
                "es/criteria/index.html", "assets/blocks/0a1b.html", "assets/charts/x.html"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("<html></html>")
    assert _report().pages_of(tmp_path) == ["/", "/404.html", "/criteria/", "/es/",
                                            "/es/criteria/"]
