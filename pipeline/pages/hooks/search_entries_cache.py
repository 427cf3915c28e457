"""Material's search plugin parses every page's HTML into index entries on every build; under
`make serve` a one-line edit rebuilds every page of both languages, and that parse was the
largest part of a rebuild (benchmarks/build_speed.py --rebuild). This hook keeps, in the
process, the entries of each page keyed by everything they are made of (the page's address,
title, table of contents, front matter and HTML), and reuses them while those are unchanged:
the index is the same, only a changed page is parsed again.

What the plugin parses is the page as search reads it (pipeline/pages/search_text.py): its prose,
headings, tables and quoted messages, each program by its name, not its code or output.
"""
from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path

from material.plugins.search.plugin import SearchIndex

# MkDocs loads a hook as a lone file: make the `pipeline` package importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from pipeline.pages.search_text import for_search  # noqa: E402

_ENTRIES: dict[str, list[dict]] = {}
_original = SearchIndex.add_entry_from_context


def _toc(items) -> list:
    return [[item.id, item.url, item.title, _toc(item.children)] for item in items]


def _key(page) -> str:
    parts = [page.url, str(page.title), json.dumps(page.meta, sort_keys=True, default=str),
             json.dumps(_toc(page.toc)), page.content or ""]
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _add_entry_from_context(self, page):
    key = _key(page)
    if key not in _ENTRIES:
        start, content = len(self.entries), page.content
        page.content = for_search(content or "")
        try:
            _original(self, page)
        finally:
            page.content = content
        _ENTRIES[key] = copy.deepcopy(self.entries[start:])
    else:
        self.entries.extend(copy.deepcopy(_ENTRIES[key]))


def on_startup(command, dirty):
    SearchIndex.add_entry_from_context = _add_entry_from_context
