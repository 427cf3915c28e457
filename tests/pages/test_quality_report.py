"""quality/lighthouse_report.py audits the reader pages, not the fragments the build loads into
them."""
from __future__ import annotations

from conftest import REPO, module_from


def _report():
    return module_from(REPO / "quality" / "lighthouse_report.py")


def test_lighthouse_audits_pages_not_the_block_fragments_under_assets(tmp_path):
    for rel in ("index.html", "404.html", "criteria/index.html", "es/index.html",
                "es/criteria/index.html", "assets/blocks/0a1b.html", "assets/charts/x.html"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("<html></html>")
    assert _report().pages_of(tmp_path) == ["/", "/404.html", "/criteria/", "/es/",
                                            "/es/criteria/"]
