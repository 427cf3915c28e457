"""One search index per language: `search/search_index.<locale>.json` next to the combined one.

mkdocs-static-i18n writes a single search index holding every language, and Material's pages
download and parse the whole of it (850 KB, about two thirds of a page's weight) to search one
language. This hook writes, after the build, one file per built language holding that language's
documents (a document belongs to the language whose folder prefix is the longest match of its
location: "es/..." is Spanish, anything else English); overrides/assets/search.js makes a
page ask for its language's file, and only when the reader goes to search.

Under `make serve` (`mkdocs serve --dirty`) a rebuild builds only the pages an edit touched
(pipeline/pages/hooks/changed_pages.py), and the plugins' index holds only those: the pages not
rebuilt keep the documents of their last build (pipeline/pages/changed_pages.py, SEARCH).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from mkdocs.plugins import event_priority

# MkDocs loads a hook as a lone file: make the `pipeline` package importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from pipeline.pages import changed_pages  # noqa: E402
from pipeline.running.files import write_atomic  # noqa: E402

_state = {"dirty_serve": False}


def on_startup(command, dirty):
    _state["dirty_serve"] = command == "serve" and dirty


def prefixes(config) -> dict[str, str]:
    """Folder prefix of each built language ({"en": "", "es": "es/"}); one language, no i18n:
    the theme's language with the empty prefix."""
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return {config.theme["language"]: ""}
    return {lang.locale: (lang.link or "/").lstrip("/")
            for lang in i18n.config.languages if lang.build}


def language_of(location: str, prefixes: dict[str, str]) -> str | None:
    best, length = None, -1
    for language, prefix in prefixes.items():
        if location.startswith(prefix) and len(prefix) > length:
            best, length = language, len(prefix)
    return best


def split(index: dict, prefixes: dict[str, str]) -> dict[str, dict]:
    """The combined index ({config, docs}) as one index per language, with the same config."""
    return {language: {"config": index["config"],
                       "docs": [doc for doc in index["docs"]
                                if language_of(doc.get("location", ""), prefixes) == language]}
            for language in prefixes}


@event_priority(-110)  # after i18n's on_post_build (-100), which writes the combined index last
def on_post_build(config):
    i18n = config.plugins.get("i18n")
    if i18n is not None and getattr(i18n, "building", False):
        return  # a language built inside i18n's own loop: the combined index is not final yet
    combined = Path(config.site_dir) / "search" / "search_index.json"
    if not combined.is_file():
        return  # no search plugin
    index = json.loads(combined.read_text(encoding="utf-8"))
    if _state["dirty_serve"]:
        index["docs"] = changed_pages.SEARCH.merge(index["docs"])
        write_atomic(combined, json.dumps(index, ensure_ascii=False, separators=(",", ":")))
    for language, part in split(index, prefixes(config)).items():
        write_atomic(combined.with_name(f"search_index.{language}.json"),
                     json.dumps(part, ensure_ascii=False, separators=(",", ":")))
