"""A built page as a reader's browser shows it once every collapsed block is opened.

A code block inside a collapsed block, and a chart, is not in the page: the page holds a
placeholder naming the file the build wrote for it (pipeline/pages/page_weight.py), which
overrides/assets/program-copy.js fetches and puts in its place when it comes near the screen
(a code block: once its block is opened). A program that a copy button copies is
a file too, named by its div's `data-copy-src` (pipeline/pages/page_programs.py). Both addresses are
relative to the page, as the browser resolves them.
"""
from __future__ import annotations

import html
import re
from pathlib import Path

DEFERRED = re.compile(r'<div class="deferred-(?:code|chart)" data-deferred-src="([^"]+)"[^>]*></div>')


def served(page: Path, address: str) -> Path:
    """The file of the site that an address on `page` (its index.html) names."""
    return (page.parent / html.unescape(address)).resolve()


def opened(page: Path) -> str:
    """The page's HTML with each placeholder replaced by the block it names."""
    return DEFERRED.sub(lambda m: served(page, m.group(1)).read_text(encoding="utf-8"),
                        page.read_text(encoding="utf-8"))


def deferred(page: Path) -> list[Path]:
    """The files of the blocks and charts a page loads when they are opened or near."""
    return [served(page, a) for a in DEFERRED.findall(page.read_text(encoding="utf-8"))]
